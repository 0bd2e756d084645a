use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;

use serde::Serialize;

use super::failures::{self, FailureBlock, Middle, Numbering};
use super::sink::{Captured, Layout};

/// The part of one stream the model is shown: all of it, or its head and tail with the
/// middle left out and counted.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Window {
    /// The start of the output (all of it when nothing was left out), lossily decoded.
    pub head: String,
    /// The end of the output; empty when nothing was left out.
    pub tail: String,
    /// Bytes between head and tail that were not shown.
    pub omitted_bytes: u64,
    /// Line breaks among the omitted bytes. When both cuts fall on line boundaries, as
    /// they do unless a single line is longer than half the window, this is the number of
    /// whole lines left out.
    pub omitted_lines: u64,
    /// The lines among the omitted ones that look like failures, shown where the marker
    /// is; `None` when none does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failures: Option<FailureBlock>,
    /// The bytes of the capture the head shows (its length before decoding): where the
    /// omitted bytes start. 0 where that is not known.
    #[serde(skip)]
    pub head_bytes: u64,
}

impl Window {
    /// Whether anything was left out.
    pub fn is_elided(&self) -> bool {
        self.omitted_bytes > 0
    }
}

/// Share `budget` between two streams: each gets what it needs up to half, and what one
/// does not need goes to the other.
pub(crate) fn split_budget(budget: usize, a: u64, b: u64) -> (usize, usize) {
    let half = budget / 2;
    let (a, b) = (clamp(a), clamp(b));
    match (a <= half, b <= budget - half) {
        (true, _) => (a, (budget - a).min(b)),
        (false, true) => ((budget - b).min(a), b),
        (false, false) => (half, budget - half),
    }
}

fn clamp(n: u64) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}

/// What showing all of `captured` takes, for sharing a budget of `budget` bytes: its
/// bytes as shown (a sequence that is not UTF-8 as a three-byte U+FFFD) where they are
/// few enough to read, else its length, which is more than the budget anyway.
pub(crate) fn shown_need(captured: &Captured, budget: usize) -> u64 {
    let Some(path) = captured
        .path
        .as_ref()
        .filter(|_| captured.bytes <= budget as u64)
    else {
        return captured.bytes;
    };
    match File::open(path).and_then(|f| read_at(&f, 0, clamp(captured.bytes))) {
        Ok(bytes) => String::from_utf8_lossy(&bytes).len() as u64,
        Err(_) => captured.bytes,
    }
}

/// Cut the window of `captured` that fits in `budget` bytes.
///
/// The head is cut back to the last line break in its second half, and the tail starts
/// after the first line break in its first half, so whole lines are shown where lines are
/// reasonably short; otherwise the cut moves only to a UTF-8 character boundary.
pub(crate) fn window(captured: &Captured, budget: usize) -> io::Result<Window> {
    let Some(path) = &captured.path else {
        return Ok(Window::default());
    };
    let file = File::open(path)?;
    // A capped capture's file is shorter than the stream: positions come from the file,
    // counts from the stream.
    let len = file.metadata()?.len();
    let all = if len <= budget as u64 {
        Some(read_at(&file, 0, clamp(len))?)
    } else {
        None
    };
    // All of the file fits, as shown (bytes that are not UTF-8 show as U+FFFD, three
    // bytes each). A capped capture's file says itself, in its marker line, how much the
    // cap dropped; its newlines are the marker's two.
    if let Some(all) = all.filter(|all| shown_prefix(all, budget) == all.len()) {
        let marker_newlines = if captured.dropped > 0 { 2 } else { 0 };
        let layout = layout(captured);
        let dropped = Middle {
            start: layout.head(),
            end: layout.first_held(layout.head()),
        };
        return Ok(Window {
            // What the cap dropped has no line numbers in the file.
            failures: failures::block(
                &captured.failures,
                dropped,
                Numbering::Capped {
                    kept_head: dropped.start,
                    ring_start: dropped.end,
                    shift: 0,
                },
                failures::MAX_BYTES,
            ),
            omitted_bytes: captured.dropped,
            omitted_lines: (captured.newlines + marker_newlines)
                .saturating_sub(count_newlines(&all)),
            head: String::from_utf8_lossy(&all).into_owned(),
            head_bytes: all.len() as u64,
            ..Window::default()
        });
    }
    // The marker, and the failure lines when there are any, are shown within the same
    // budget as the head and the tail, so that a result stays the size it was given.
    let framed = budget.saturating_sub(MARKER.min(budget / 16));
    // The block takes at most half: a small budget still shows how the output starts
    // and ends.
    let first = cut(
        captured,
        &file,
        len,
        framed,
        failures::MAX_BYTES.min(framed / 2),
    )?;
    let Some(block) = &first.failures else {
        return Ok(first);
    };
    // Cut again with room for the block. The middle only grows, so the block found
    // there is at least as full as this one within the same size.
    let cost = block.text().len();
    cut(
        captured,
        &file,
        len,
        framed.saturating_sub(cost + BLOCK_FRAME),
        cost,
    )
}

/// What a marker line costs at most (`[… N bytes, M lines omitted; read them with …]`).
const MARKER: usize = 256;

/// What a failure block adds to the marker besides its lines: its count of failure lines.
const BLOCK_FRAME: usize = 96;

/// Cut `file` (`len` bytes, longer than `budget`) to its head and tail within `budget`,
/// and find the failure lines of what is left out, within `block_bytes`.
fn cut(
    captured: &Captured,
    file: &File,
    len: u64,
    budget: usize,
    block_bytes: usize,
) -> io::Result<Window> {
    let head_budget = budget / 2;
    let tail_budget = budget - head_budget;

    let mut head = read_at(file, 0, head_budget)?;
    head.truncate(shown_prefix(&head, head_budget));
    let head_cut = match memchr::memrchr(b'\n', &head) {
        Some(i) if i + 1 >= head_budget / 2 => i + 1,
        _ => char_boundary_back(&head),
    };
    head.truncate(head_cut);

    let tail_start = len - tail_budget as u64;
    let tail = read_at(file, tail_start, tail_budget)?;
    let tail = &tail[shown_suffix(&tail, tail_budget)..];
    let tail_cut = match memchr::memchr(b'\n', tail) {
        Some(i) if i < tail_budget / 2 => i + 1,
        _ => char_boundary_forward(tail),
    };
    let tail = &tail[tail_cut..];

    let shown_newlines = count_newlines(&head) + count_newlines(tail);
    let middle = Middle {
        start: head.len() as u64,
        end: captured.bytes - tail.len() as u64,
    };
    let failures = if captured.failures.hits.is_empty() {
        None
    } else {
        failures::block(
            &captured.failures,
            middle,
            numbering(captured, file)?,
            block_bytes,
        )
    };
    Ok(Window {
        failures,
        omitted_bytes: captured.bytes - head.len() as u64 - tail.len() as u64,
        omitted_lines: captured.newlines - shown_newlines,
        head: String::from_utf8_lossy(&head).into_owned(),
        tail: String::from_utf8_lossy(tail).into_owned(),
        head_bytes: head.len() as u64,
    })
}

fn layout(captured: &Captured) -> Layout {
    Layout {
        total: captured.bytes,
        cap: captured.cap,
    }
}

/// How the stream's line numbers map to the capture file's. Past the cap the file holds
/// the head, a marker line and the tail, so a line of the tail is as many lines from the
/// file's end as from the stream's (counted here, once, for a capture that went past it).
fn numbering(captured: &Captured, file: &File) -> io::Result<Numbering> {
    if captured.dropped == 0 {
        return Ok(Numbering::Same);
    }
    let layout = layout(captured);
    // Positioned reads: the file is shared with the cuts, and read more than once.
    let mut file_newlines = 0u64;
    let mut buf = vec![0; 256 * 1024];
    let mut at = 0u64;
    loop {
        let n = file.read_at(&mut buf, at)?;
        if n == 0 {
            break;
        }
        file_newlines += count_newlines(&buf[..n]);
        at += n as u64;
    }
    Ok(Numbering::Capped {
        kept_head: layout.head(),
        ring_start: layout.first_held(layout.head()),
        shift: file_newlines as i64 - captured.newlines as i64,
    })
}

/// What a U+FFFD costs, shown in place of a sequence that is not UTF-8.
const REPLACEMENT: usize = '\u{FFFD}'.len_utf8();

/// How many of `bytes`' first bytes show in at most `budget` bytes, a sequence that is
/// not UTF-8 shown as one U+FFFD (as `String::from_utf8_lossy` shows it).
pub(crate) fn shown_prefix(bytes: &[u8], budget: usize) -> usize {
    let (mut raw, mut shown) = (0, 0);
    for chunk in bytes.utf8_chunks() {
        let valid = chunk.valid();
        if shown + valid.len() > budget {
            let mut cut = budget - shown;
            while !valid.is_char_boundary(cut) {
                cut -= 1;
            }
            return raw + cut;
        }
        raw += valid.len();
        shown += valid.len();
        if !chunk.invalid().is_empty() {
            if shown + REPLACEMENT > budget {
                return raw;
            }
            raw += chunk.invalid().len();
            shown += REPLACEMENT;
        }
    }
    raw
}

/// Where the last bytes of `bytes` that show in at most `budget` bytes start (see
/// [`shown_prefix`]).
fn shown_suffix(bytes: &[u8], budget: usize) -> usize {
    let mut pieces = Vec::new();
    let mut at = 0;
    for chunk in bytes.utf8_chunks() {
        pieces.push((at, chunk.valid(), chunk.invalid().len()));
        at += chunk.valid().len() + chunk.invalid().len();
    }
    let mut shown = 0;
    for (start, valid, invalid) in pieces.into_iter().rev() {
        if invalid > 0 {
            if shown + REPLACEMENT > budget {
                return start + valid.len() + invalid;
            }
            shown += REPLACEMENT;
        }
        if shown + valid.len() > budget {
            let mut cut = valid.len() - (budget - shown);
            while !valid.is_char_boundary(cut) {
                cut += 1;
            }
            return start + cut;
        }
        shown += valid.len();
    }
    0
}

fn read_at(file: &File, offset: u64, len: usize) -> io::Result<Vec<u8>> {
    let mut buf = vec![0; len];
    file.read_exact_at(&mut buf, offset)?;
    Ok(buf)
}

fn count_newlines(bytes: &[u8]) -> u64 {
    memchr::memchr_iter(b'\n', bytes).count() as u64
}

/// The length of `bytes` without a trailing, incomplete UTF-8 sequence.
fn char_boundary_back(bytes: &[u8]) -> usize {
    let mut end = bytes.len();
    // A sequence is at most 4 bytes: look back at most 3 continuation bytes for its start.
    for back in 1..=3.min(bytes.len()) {
        let b = bytes[bytes.len() - back];
        if b & 0xC0 == 0x80 {
            continue;
        }
        let need = match b {
            0xF0..=0xF7 => 4,
            0xE0..=0xEF => 3,
            0xC0..=0xDF => 2,
            _ => 1,
        };
        if need > back {
            end = bytes.len() - back;
        }
        break;
    }
    end
}

/// How many leading continuation bytes to skip to start on a character boundary.
fn char_boundary_forward(bytes: &[u8]) -> usize {
    bytes
        .iter()
        .take(3)
        .take_while(|b| *b & 0xC0 == 0x80)
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_shown_of_bytes_that_are_not_utf8_fits_the_budget() {
        let shown = |b: &[u8]| String::from_utf8_lossy(b).len();
        let mixed: Vec<u8> = b"ok \xff\xfe caf\xc3\xa9 \xe2\x82 end\n"
            .iter()
            .copied()
            .cycle()
            .take(500)
            .collect();
        for bytes in [vec![0xffu8; 300], mixed, "é".repeat(150).into_bytes()] {
            for budget in [0, 1, 2, 3, 4, 5, 17, 100, 299, 1000] {
                let head = shown_prefix(&bytes, budget);
                assert!(shown(&bytes[..head]) <= budget, "{budget}");
                // As much as fits: the next character or replacement (4 bytes at most) would not.
                assert!(head == bytes.len() || shown(&bytes[..head]) + 4 > budget);
                let tail = shown_suffix(&bytes, budget);
                assert!(shown(&bytes[tail..]) <= budget, "{budget}");
                assert!(tail == 0 || shown(&bytes[tail..]) + 4 > budget);
            }
            assert_eq!(shown_prefix(&bytes, usize::MAX), bytes.len());
            assert_eq!(shown_suffix(&bytes, usize::MAX), 0);
        }
        // Text that is all UTF-8 is cut as before, at a character boundary.
        assert_eq!(shown_prefix("aé".as_bytes(), 2), 1);
        assert_eq!(shown_suffix("éa".as_bytes(), 2), 2);
    }

    #[test]
    fn budget_goes_where_it_is_needed() {
        assert_eq!(split_budget(100, 10, 10), (10, 10));
        assert_eq!(split_budget(100, 10, 500), (10, 90));
        assert_eq!(split_budget(100, 500, 10), (90, 10));
        assert_eq!(split_budget(100, 500, 500), (50, 50));
        assert_eq!(split_budget(100, 0, 0), (0, 0));
    }

    #[test]
    fn cuts_never_split_a_character() {
        let s = "ab€";
        assert_eq!(char_boundary_back(&s.as_bytes()[..4]), 2);
        assert_eq!(char_boundary_back(s.as_bytes()), 5);
        assert_eq!(char_boundary_forward(&s.as_bytes()[3..]), 2);
        assert_eq!(char_boundary_forward(b"abc"), 0);
    }
}
