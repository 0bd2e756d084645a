//! Reading a part of a capture: a range of lines or bytes, its head or tail, or the lines
//! that match a pattern with their context, numbered as `grep -n` numbers them, within a
//! byte budget, saying exactly what it did not show.
//!
//! A capture can be a gigabyte: it is streamed once to count its lines, and once more to
//! cut the part asked for, holding at most the budget and one bounded line in memory.

use std::fmt::Write as _;
use std::io::{self, BufRead, BufReader, Read};

use regex::bytes::Regex;

/// The longest line kept whole; the rest of a longer line is counted, not shown or searched.
const MAX_LINE: usize = 64 * 1024;

/// Which part of a capture to read. Lines count from 1, bytes from 0; both ends of a range
/// are included, as in `sed -n 5,9p` and HTTP's `bytes=0-499`.
#[derive(Debug, Clone)]
pub enum Selection {
    /// Lines `first` to `last` (to the end when `None`).
    Lines {
        /// The first line, from 1.
        first: u64,
        /// The last line, included.
        last: Option<u64>,
    },
    /// Bytes `first` to `last` (to the end when `None`), as text.
    Bytes {
        /// The first byte offset, from 0.
        first: u64,
        /// The last byte offset, included.
        last: Option<u64>,
    },
    /// The first `n` lines.
    Head(u64),
    /// The last `n` lines.
    Tail(u64),
    /// The lines matching a regular expression, each with `context` lines around it.
    Grep {
        /// The pattern, as the request spelled it.
        pattern: String,
        /// The compiled pattern.
        regex: Regex,
        /// Lines of context before and after each match.
        context: u64,
    },
}

impl Selection {
    /// Parse `A-B`, `A-` or `A` (a single line or byte) as a range.
    pub fn range(spec: &str, what: &str) -> Result<(u64, Option<u64>), String> {
        let bad = || {
            format!(
                "{what} takes a range like \"40-80\" (both ends included), \"40-\" (to the end) or \"40\", not {spec:?}"
            )
        };
        let (first, last) = match spec.trim().split_once('-') {
            Some((a, b)) => (a.trim(), Some(b.trim())),
            None => (spec.trim(), None),
        };
        let first: u64 = first.parse().map_err(|_| bad())?;
        let last = match last {
            None => Some(first),
            Some("") => None,
            Some(b) => Some(b.parse::<u64>().map_err(|_| bad())?),
        };
        if last.is_some_and(|l| l < first) {
            return Err(format!(
                "{what} {spec:?} ends before it starts: write the smaller number first"
            ));
        }
        Ok((first, last))
    }

    /// A grep selection, or why the pattern is not one.
    pub fn grep(pattern: &str, context: u64) -> Result<Selection, String> {
        let regex = Regex::new(pattern).map_err(|e| {
            format!(
                "grep {pattern:?} is not a regular expression: {e}; escape special characters with a backslash"
            )
        })?;
        Ok(Selection::Grep {
            pattern: pattern.to_string(),
            regex,
            context,
        })
    }
}

/// What was read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Excerpt {
    /// The lines shown, each prefixed by its number: `N:` for a line selected or matched,
    /// `N-` for a line of context; `--` between groups that are not adjacent. Raw text
    /// for a byte range.
    pub text: String,
    /// Every line the capture holds.
    pub total_lines: u64,
    /// Every byte the capture holds.
    pub total_bytes: u64,
    /// The first and last line shown (for a byte range: the bytes).
    pub shown: Option<(u64, u64)>,
    /// Lines that matched, for a grep (counted to the end, shown or not).
    pub matches: Option<u64>,
    /// Where a read the budget cut short would go on: the first line (or byte) not shown.
    pub resume_at: Option<u64>,
    /// Lines longer than the line limit that were shown (and searched) only in part.
    pub long_lines: u64,
    /// The first line shown only in part, and the bytes of it not shown (first and last,
    /// from 0): where a `bytes` read goes on.
    pub long_line_rest: Option<(u64, u64, u64)>,
}

/// Read `selection` of the capture `source` streams, within `budget` bytes of text.
/// `source` is read twice: `open` gives a fresh reader from its start each time.
pub fn read<R: Read>(
    mut open: impl FnMut() -> io::Result<R>,
    selection: &Selection,
    budget: usize,
) -> io::Result<Excerpt> {
    let (total_lines, total_bytes) = count(open()?)?;
    let mut excerpt = Excerpt {
        total_lines,
        total_bytes,
        ..Excerpt::default()
    };
    match selection {
        Selection::Bytes { first, last } => {
            bytes(open()?, *first, *last, budget, &mut excerpt)?;
        }
        Selection::Grep { regex, context, .. } => {
            grep(open()?, regex, *context, budget, &mut excerpt)?;
        }
        _ => {
            let (first, last) = match *selection {
                Selection::Lines { first, last } => (first.max(1), last.unwrap_or(u64::MAX)),
                Selection::Head(n) => (1, n),
                Selection::Tail(n) => (total_lines.saturating_sub(n) + 1, u64::MAX),
                _ => unreachable!("handled above"),
            };
            lines(open()?, first, last, budget, &mut excerpt)?;
        }
    }
    Ok(excerpt)
}

/// Lines (a final line without a newline counts) and bytes.
fn count(source: impl Read) -> io::Result<(u64, u64)> {
    let mut reader = BufReader::with_capacity(256 * 1024, source);
    let (mut newlines, mut bytes, mut last) = (0u64, 0u64, b'\n');
    loop {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            break;
        }
        newlines += memchr::memchr_iter(b'\n', buf).count() as u64;
        bytes += buf.len() as u64;
        last = buf[buf.len() - 1];
        let n = buf.len();
        reader.consume(n);
    }
    Ok((newlines + u64::from(last != b'\n'), bytes))
}

/// One line at a time, each cut at [`MAX_LINE`] bytes (the rest is consumed, not kept).
struct Lines<R> {
    reader: BufReader<R>,
    number: u64,
    /// Bytes read so far, and where the last line returned starts.
    offset: u64,
    start: u64,
    /// Whether the last line returned ended with a newline.
    newline: bool,
}

impl<R: Read> Lines<R> {
    fn ends_with_newline(&self) -> bool {
        self.newline
    }

    fn new(source: R) -> Self {
        Self {
            reader: BufReader::with_capacity(256 * 1024, source),
            number: 0,
            offset: 0,
            start: 0,
            newline: false,
        }
    }

    /// The next line without its newline, and whether it was cut.
    fn next_into(&mut self, line: &mut Vec<u8>) -> io::Result<Option<bool>> {
        line.clear();
        self.start = self.offset;
        self.newline = false;
        let mut cut = false;
        let mut any = false;
        loop {
            let buf = self.reader.fill_buf()?;
            if buf.is_empty() {
                break;
            }
            any = true;
            let (chunk, done) = match memchr::memchr(b'\n', buf) {
                Some(i) => (&buf[..i], Some(i + 1)),
                None => (buf, None),
            };
            let room = MAX_LINE.saturating_sub(line.len());
            if chunk.len() > room {
                cut = true;
            }
            line.extend_from_slice(&chunk[..chunk.len().min(room)]);
            let used = done.unwrap_or(buf.len());
            self.reader.consume(used);
            self.offset += used as u64;
            self.newline = done.is_some();
            if done.is_some() {
                break;
            }
        }
        if !any {
            return Ok(None);
        }
        self.number += 1;
        Ok(Some(cut))
    }
}

/// Append `N{sep}line` to `out` if it fits in `budget`; false when it does not.
fn push_line(out: &mut String, number: u64, sep: char, line: &[u8], budget: usize) -> bool {
    push_line_cut(out, number, sep, line, budget).is_some()
}

/// Append `N{sep}line` to `out` if it fits in `budget`, and say how many of its bytes
/// were shown: a first line longer than the whole budget is shown as far as it fits.
/// `None` when it does not fit.
fn push_line_cut(
    out: &mut String,
    number: u64,
    sep: char,
    line: &[u8],
    budget: usize,
) -> Option<usize> {
    const FRAME: usize = 22;
    let text = String::from_utf8_lossy(line);
    if out.len() + FRAME + text.len() <= budget {
        let _ = writeln!(out, "{number}{sep}{text}");
        return Some(line.len());
    }
    if !out.is_empty() {
        return None;
    }
    let kept = super::window::shown_prefix(line, budget.saturating_sub(FRAME));
    let _ = writeln!(
        out,
        "{number}{sep}{}",
        String::from_utf8_lossy(&line[..kept])
    );
    Some(kept)
}

fn lines(
    source: impl Read,
    first: u64,
    last: u64,
    budget: usize,
    excerpt: &mut Excerpt,
) -> io::Result<()> {
    let mut lines = Lines::new(source);
    let mut line = Vec::new();
    while let Some(cut) = lines.next_into(&mut line)? {
        let n = lines.number;
        if n < first {
            continue;
        }
        if n > last {
            break;
        }
        let Some(shown) = push_line_cut(&mut excerpt.text, n, ':', &line, budget) else {
            excerpt.resume_at = Some(n);
            break;
        };
        let in_part = cut || shown < line.len();
        excerpt.long_lines += u64::from(in_part);
        if in_part && excerpt.long_line_rest.is_none() {
            // The line's end, before its newline when it has one.
            let end = lines.offset - 1 - u64::from(lines.ends_with_newline());
            excerpt.long_line_rest = Some((n, lines.start + shown as u64, end));
        }
        excerpt.shown = Some((excerpt.shown.map_or(n, |(a, _)| a), n));
        // A line shown in part fills the reply.
        if shown < line.len() {
            if n < last && n < excerpt.total_lines {
                excerpt.resume_at = Some(n + 1);
            }
            break;
        }
    }
    Ok(())
}

fn bytes(
    source: impl Read,
    first: u64,
    last: Option<u64>,
    budget: usize,
    excerpt: &mut Excerpt,
) -> io::Result<()> {
    let mut reader = BufReader::new(source);
    io::copy(&mut (&mut reader).take(first), &mut io::sink())?;
    let wanted = last.map_or(u64::MAX, |l| l - first + 1);
    let mut buf = Vec::new();
    reader
        .take(wanted.min(budget as u64))
        .read_to_end(&mut buf)?;
    if buf.is_empty() {
        return Ok(());
    }
    let end = first + buf.len() as u64;
    if (buf.len() as u64) < wanted && end < excerpt.total_bytes {
        excerpt.resume_at = Some(end);
    }
    excerpt.shown = Some((first, end - 1));
    excerpt.text = String::from_utf8_lossy(&buf).into_owned();
    Ok(())
}

fn grep(
    source: impl Read,
    regex: &Regex,
    context: u64,
    budget: usize,
    excerpt: &mut Excerpt,
) -> io::Result<()> {
    let mut lines = Lines::new(source);
    let mut line = Vec::new();
    // The lines before the current one that may become context, oldest first.
    let mut before: std::collections::VecDeque<(u64, Vec<u8>)> = Default::default();
    // The last line shown, and how many lines after a match are still context.
    let mut last_shown = 0u64;
    let mut after = 0u64;
    let mut matches = 0u64;
    let mut full = false;
    while let Some(cut) = lines.next_into(&mut line)? {
        let n = lines.number;
        let matched = regex.is_match(&line);
        matches += u64::from(matched);
        if full {
            continue;
        }
        if matched {
            let first_of_group = before.front().map_or(n, |(b, _)| *b);
            if last_shown > 0 && first_of_group > last_shown + 1 {
                excerpt.text.push_str("--\n");
            }
            for (b, text) in before.drain(..) {
                if !push_line(&mut excerpt.text, b, '-', &text, budget) {
                    full = true;
                    break;
                }
                last_shown = b;
            }
            if full || !push_line(&mut excerpt.text, n, ':', &line, budget) {
                full = true;
                excerpt.resume_at = Some(n);
                continue;
            }
            excerpt.long_lines += u64::from(cut);
            excerpt.shown = Some((excerpt.shown.map_or(n, |(a, _)| a), n));
            last_shown = n;
            after = context;
        } else if after > 0 {
            after -= 1;
            if !push_line(&mut excerpt.text, n, '-', &line, budget) {
                full = true;
                excerpt.resume_at = Some(n);
                continue;
            }
            last_shown = n;
        } else if context > 0 {
            if before.len() as u64 == context {
                before.pop_front();
            }
            before.push_back((n, line.clone()));
        }
    }
    excerpt.matches = Some(matches);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_str(text: &str, selection: &Selection, budget: usize) -> Excerpt {
        read(|| Ok(text.as_bytes()), selection, budget).unwrap()
    }

    fn numbered(n: u64) -> String {
        (1..=n).map(|i| format!("line {i}\n")).collect()
    }

    #[test]
    fn a_range_of_lines_is_numbered_like_grep_n() {
        let e = read_str(
            &numbered(10),
            &Selection::Lines {
                first: 3,
                last: Some(4),
            },
            1000,
        );
        assert_eq!(e.text, "3:line 3\n4:line 4\n");
        assert_eq!(
            (e.total_lines, e.shown, e.resume_at),
            (10, Some((3, 4)), None)
        );
    }

    #[test]
    fn head_and_tail_count_from_their_end() {
        let text = numbered(10);
        assert_eq!(
            read_str(&text, &Selection::Head(2), 1000).text,
            "1:line 1\n2:line 2\n"
        );
        assert_eq!(
            read_str(&text, &Selection::Tail(2), 1000).text,
            "9:line 9\n10:line 10\n"
        );
        assert_eq!(read_str("a\nb", &Selection::Tail(1), 1000).text, "2:b\n");
    }

    #[test]
    fn a_full_budget_says_where_to_go_on() {
        let e = read_str(&numbered(1000), &Selection::Head(1000), 200);
        assert!(e.text.len() <= 200, "{}", e.text.len());
        let (_, last) = e.shown.unwrap();
        assert_eq!(e.resume_at, Some(last + 1));
    }

    #[test]
    fn grep_shows_matches_with_context_and_separators() {
        let text = "a\nb\nERROR one\nc\nd\ne\nf\nERROR two\ng\n";
        let e = read_str(text, &Selection::grep("ERROR", 1).unwrap(), 1000);
        assert_eq!(e.text, "2-b\n3:ERROR one\n4-c\n--\n7-f\n8:ERROR two\n9-g\n");
        assert_eq!(e.matches, Some(2));
    }

    #[test]
    fn grep_counts_matches_past_a_full_budget() {
        let text: String = (0..1000).map(|i| format!("hit {i}\n")).collect();
        let e = read_str(&text, &Selection::grep("hit", 0).unwrap(), 300);
        assert_eq!(e.matches, Some(1000));
        assert!(e.resume_at.is_some());
    }

    #[test]
    fn a_byte_range_is_raw_text() {
        let e = read_str(
            "0123456789",
            &Selection::Bytes {
                first: 2,
                last: Some(4),
            },
            1000,
        );
        assert_eq!((e.text.as_str(), e.shown), ("234", Some((2, 4))));
    }

    #[test]
    fn ranges_parse_and_bad_ones_say_how() {
        assert_eq!(Selection::range("40-80", "lines"), Ok((40, Some(80))));
        assert_eq!(Selection::range("40-", "lines"), Ok((40, None)));
        assert_eq!(Selection::range("7", "lines"), Ok((7, Some(7))));
        assert!(
            Selection::range("9-3", "lines")
                .unwrap_err()
                .contains("smaller")
        );
        assert!(
            Selection::range("x", "lines")
                .unwrap_err()
                .contains("\"40-80\"")
        );
    }

    #[test]
    fn a_long_line_is_cut_not_held() {
        let long = "x".repeat(MAX_LINE * 3);
        let e = read_str(&format!("{long}\nend\n"), &Selection::Head(2), MAX_LINE * 2);
        assert_eq!(e.long_lines, 1);
        assert!(e.text.ends_with("2:end\n"));
    }
}
