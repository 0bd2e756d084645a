//! Hunks applied to a file's text, in memory. Pure: the caller reads and writes files.
//!
//! Each hunk's old lines are looked for from where the previous hunk ended (after its
//! `@@` anchor line, when it has one), first exactly, then ignoring trailing whitespace,
//! then ignoring surrounding whitespace, then with typographic punctuation (curly quotes,
//! dashes, non-breaking spaces) read as ASCII. A hunk marked `*** End of File` is looked
//! for at the end first. A hunk that is not found is reported with the nearest match: the
//! stretch of the file that agrees on the most lines, else the line most like one of the
//! hunk's.
//!
//! Line endings follow the file, as Codex's do: lines are matched without their `\r`,
//! lines the hunk keeps or leaves keep their own ending, and lines it adds end as the
//! file's first line does.

use super::parse::{Hunk, HunkLine};

/// Why one hunk did not apply.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("hunk {hunk} (patch line {patch_line}) did not apply: {message}")]
pub struct HunkError {
    /// The hunk's number in its file (1-based).
    pub hunk: usize,
    /// The patch line it starts on.
    pub patch_line: usize,
    /// What was not found, and the nearest match.
    pub message: String,
}

/// What applying an update's hunks did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Applied {
    /// The new text.
    pub text: String,
    /// Lines added and removed.
    pub added: usize,
    /// Lines removed.
    pub removed: usize,
}

/// A line's ending as the file has it: the text of a line never holds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ending {
    Lf,
    CrLf,
    /// The last line of a file that does not end with a newline.
    None,
}

/// One line of a file: its text, and how it ends.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Line {
    text: String,
    ending: Ending,
}

impl Ending {
    fn as_str(self) -> &'static str {
        match self {
            Ending::Lf => "\n",
            Ending::CrLf => "\r\n",
            Ending::None => "",
        }
    }
}

/// `text` as lines, each with its own ending (`\r\n` or `\n`; a lone `\r` is text).
fn lines_of(text: &str) -> Vec<Line> {
    let mut lines = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let (line, ending, next) = match rest.find('\n') {
            Some(i) => match rest[..i].strip_suffix('\r') {
                Some(line) => (line, Ending::CrLf, &rest[i + 1..]),
                None => (&rest[..i], Ending::Lf, &rest[i + 1..]),
            },
            None => (rest, Ending::None, ""),
        };
        lines.push(Line {
            text: line.to_string(),
            ending,
        });
        rest = next;
    }
    lines
}

/// Apply `hunks` to `text`. Every hunk is tried; all their errors are returned together.
///
/// Context lines keep the file's own text and ending, whatever the hunk wrote. Added
/// lines end as the file's first line does (`\r\n` in a CRLF file, `\n` otherwise), and
/// so does a last line that had no newline: an updated file ends with one.
pub fn apply_hunks(text: &str, hunks: &[Hunk]) -> Result<Applied, Vec<HunkError>> {
    let mut lines = lines_of(text);
    let ending = lines
        .iter()
        .map(|l| l.ending)
        .find(|e| *e != Ending::None)
        .unwrap_or(Ending::Lf);
    let texts: Vec<String> = lines.iter().map(|l| l.text.clone()).collect();
    let mut replacements: Vec<(usize, usize, Vec<Line>)> = Vec::new();
    let mut errors = Vec::new();
    let mut at = 0usize;
    let (mut added, mut removed) = (0, 0);
    'hunks: for (i, hunk) in hunks.iter().enumerate() {
        let fail = |message: String| HunkError {
            hunk: i + 1,
            patch_line: hunk.line,
            message,
        };
        for anchor in &hunk.anchors {
            match seek(&texts, std::slice::from_ref(anchor), at, false) {
                Some(found) => at = found + 1,
                None => {
                    errors.push(fail(format!(
                        "its `@@ {anchor}` line was not found after line {at}{}",
                        nearest(&texts, std::slice::from_ref(anchor), at)
                    )));
                    continue 'hunks;
                }
            }
        }
        let mut body: &[HunkLine] = &hunk.lines;
        // A hunk written with trailing empty context lines the file lacks still applies.
        while seek(&texts, &old_of(body), at, hunk.end_of_file).is_none()
            && matches!(body.last(), Some(HunkLine::Context(t)) if t.is_empty())
        {
            body = &body[..body.len() - 1];
        }
        let old = old_of(body);
        let (a, r) = (
            body.iter()
                .filter(|l| matches!(l, HunkLine::Add(_)))
                .count(),
            body.iter()
                .filter(|l| matches!(l, HunkLine::Remove(_)))
                .count(),
        );
        if old.is_empty() {
            // Pure addition: after the anchors when there are any, else at the end of the
            // file (before its last line when that is empty, as Codex puts it).
            let start = if !hunk.anchors.is_empty() {
                at
            } else if texts.last().is_some_and(String::is_empty) {
                texts.len() - 1
            } else {
                texts.len()
            };
            replacements.push((start, 0, new_of(body, &[], ending)));
            added += a;
            continue;
        }
        match seek(&texts, &old, at, hunk.end_of_file) {
            Some(found) => {
                let matched = &lines[found..found + old.len()];
                replacements.push((found, old.len(), new_of(body, matched, ending)));
                at = found + old.len();
                added += a;
                removed += r;
            }
            None => errors.push(fail(format!(
                "its {} line{} of context and removals {} not found after line {at}{}",
                old.len(),
                if old.len() == 1 { "" } else { "s" },
                if old.len() == 1 { "was" } else { "were" },
                nearest(&texts, &old, at)
            ))),
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    // Later replacements first, so earlier indices stay valid.
    replacements.sort_by_key(|r| std::cmp::Reverse(r.0));
    for (start, len, new) in replacements {
        lines.splice(start..start + len, new);
    }
    let mut text = String::new();
    for line in &lines {
        text.push_str(&line.text);
        text.push_str(match line.ending {
            Ending::None => ending.as_str(),
            e => e.as_str(),
        });
    }
    Ok(Applied {
        text,
        added,
        removed,
    })
}

fn old_of(body: &[HunkLine]) -> Vec<String> {
    body.iter()
        .filter_map(|l| match l {
            HunkLine::Context(t) | HunkLine::Remove(t) => Some(t.clone()),
            HunkLine::Add(_) => None,
        })
        .collect()
}

/// The lines that replace `matched`: the file's own context lines, the added lines
/// ending with `ending`.
fn new_of(body: &[HunkLine], matched: &[Line], ending: Ending) -> Vec<Line> {
    let mut out = Vec::new();
    let mut k = 0;
    for l in body {
        match l {
            HunkLine::Context(t) => {
                out.push(matched.get(k).cloned().unwrap_or_else(|| Line {
                    text: t.clone(),
                    ending,
                }));
                k += 1;
            }
            HunkLine::Remove(_) => k += 1,
            HunkLine::Add(t) => out.push(Line {
                text: t.clone(),
                ending,
            }),
        }
    }
    out
}

/// Where `pattern` occurs in `lines` at or after `from`, trying stricter comparisons first.
fn seek(lines: &[String], pattern: &[String], from: usize, eof: bool) -> Option<usize> {
    if pattern.is_empty() || pattern.len() > lines.len() {
        return None;
    }
    let last_start = lines.len() - pattern.len();
    let comparisons: [fn(&str, &str) -> bool; 4] = [
        |a, b| a == b,
        |a, b| a.trim_end() == b.trim_end(),
        |a, b| a.trim() == b.trim(),
        |a, b| normalise(a) == normalise(b),
    ];
    for same in comparisons {
        let matches = |start: usize| {
            lines[start..start + pattern.len()]
                .iter()
                .zip(pattern)
                .all(|(l, p)| same(l, p))
        };
        if eof && last_start >= from && matches(last_start) {
            return Some(last_start);
        }
        if let Some(found) = (from.min(last_start + 1)..=last_start).find(|&s| matches(s)) {
            return Some(found);
        }
    }
    None
}

/// Typographic punctuation as ASCII, and surrounding whitespace dropped.
fn normalise(s: &str) -> String {
    s.trim()
        .chars()
        .map(|c| match c {
            '\u{2010}'..='\u{2015}' | '\u{2212}' => '-',
            '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' => '\'',
            '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' => '"',
            '\u{00A0}' | '\u{2002}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' => ' ',
            c => c,
        })
        .collect()
}

/// ". The nearest match is at line N (k of n lines agree): …" — the window of the file
/// that agrees with `pattern` on the most lines (ignoring surrounding whitespace), and
/// the first line where it differs.
fn nearest(lines: &[String], pattern: &[String], from: usize) -> String {
    if lines.is_empty() {
        return ". The file is empty".into();
    }
    let width = pattern.len().min(lines.len());
    let mut best: Option<(usize, usize)> = None;
    for start in 0..=lines.len() - width {
        let score = lines[start..start + width]
            .iter()
            .zip(pattern)
            .filter(|(l, p)| normalise(l) == normalise(p))
            .count();
        let closer = |b: usize| start.abs_diff(from) < b.abs_diff(from);
        if best.is_none_or(|(s, b)| score > s || (score == s && closer(b))) {
            best = Some((start, score));
        }
    }
    let Some((start, score)) = best.filter(|&(_, s)| s > 0) else {
        return match closest(lines, pattern, from) {
            Some((at, p)) => format!(
                ". Nearest match: line {} reads {:?} where the hunk expects {:?}",
                at + 1,
                clip(&lines[at]),
                clip(&pattern[p])
            ),
            None => format!(
                ". No line of the file matches any of them; its first line is {:?}. Read the file and write the hunk from its current text",
                clip(&lines[0])
            ),
        };
    };
    let differ = lines[start..start + width]
        .iter()
        .zip(pattern)
        .position(|(l, p)| normalise(l) != normalise(p));
    let detail = match differ {
        Some(d) => format!(
            "; line {} there reads {:?} where the hunk expects {:?}",
            start + d + 1,
            clip(&lines[start + d]),
            clip(&pattern[d])
        ),
        None => format!(
            "; the hunk expects {} more line{} after the end of the file",
            pattern.len() - width,
            if pattern.len() - width == 1 { "" } else { "s" }
        ),
    };
    format!(
        ". Nearest match: line {} ({score} of {} lines agree){detail}",
        start + 1,
        pattern.len()
    )
}

/// When no line agrees outright: the line of the file most like one of the pattern's (a
/// typo, a renamed word), nearest `from` among equals, as `(file line, pattern line)`;
/// `None` when no line is even half alike.
fn closest(lines: &[String], pattern: &[String], from: usize) -> Option<(usize, usize)> {
    let wanted: Vec<Vec<(char, char)>> = pattern.iter().map(|p| pairs(p)).collect();
    let mut best: Option<(usize, usize, f64)> = None;
    for (at, line) in lines.iter().enumerate() {
        let have = pairs(line);
        for (p, want) in wanted.iter().enumerate() {
            let score = likeness(&have, want);
            let better = best.is_none_or(|(b, _, s)| {
                score > s || (score == s && at.abs_diff(from) < b.abs_diff(from))
            });
            if better {
                best = Some((at, p, score));
            }
        }
    }
    best.filter(|&(_, _, s)| s >= 0.5).map(|(at, p, _)| (at, p))
}

/// The adjacent pairs of characters of a line, normalised, sorted: what [`likeness`]
/// compares.
fn pairs(line: &str) -> Vec<(char, char)> {
    let chars: Vec<char> = normalise(line).chars().collect();
    let mut pairs: Vec<(char, char)> = chars.windows(2).map(|w| (w[0], w[1])).collect();
    pairs.sort_unstable();
    pairs
}

/// How alike two lines are, from 0 to 1: the share of their character pairs they have in
/// common (Dice's coefficient).
fn likeness(a: &[(char, char)], b: &[(char, char)]) -> f64 {
    if a.is_empty() || b.is_empty() {
        return 0.0;
    }
    let (mut i, mut j, mut common) = (0, 0, 0usize);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                common += 1;
                i += 1;
                j += 1;
            }
        }
    }
    (2 * common) as f64 / (a.len() + b.len()) as f64
}

fn clip(line: &str) -> String {
    if line.chars().count() <= 100 {
        line.to_string()
    } else {
        line.chars().take(99).collect::<String>() + "…"
    }
}
