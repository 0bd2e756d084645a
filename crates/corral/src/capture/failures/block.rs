//! From what the scan kept to the block a model reads where the marker is: the failure
//! lines of the omitted middle, with their context, in the order of the capture, within
//! [`MAX_LINES`] lines and [`MAX_BYTES`] bytes, and exactly what is still left out.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use serde::Serialize;

use super::scan::{Found, Line};
use super::tap::Shortfall;

/// The most lines the block shows (numbered lines and `--` separators).
pub const MAX_LINES: usize = 40;
/// The most bytes of text the block shows.
pub const MAX_BYTES: usize = 4096;
/// Bytes of one line shown; a longer line is cut, and what was cut is counted omitted.
const LINE_SHOWN: usize = 200;
/// TAP plans not met that the block names one by one; past them, it counts.
const PLANS_NAMED: usize = 3;

/// The part of the stream left out of the window, in stream offsets.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Middle {
    pub start: u64,
    pub end: u64,
}

/// How a line's number in the stream becomes its number in the capture file, the one
/// `output` reads.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Numbering {
    /// Nothing was dropped: the same.
    Same,
    /// The capture cap dropped `[kept_head, ring_start)`: lines there have no number in the
    /// file; lines after it are `shift` lines further on (the cap's marker line, less the
    /// dropped lines).
    Capped {
        kept_head: u64,
        ring_start: u64,
        shift: i64,
    },
}

impl Numbering {
    fn number(&self, line: &Line) -> Option<u64> {
        match *self {
            Numbering::Same => Some(line.number),
            Numbering::Capped {
                kept_head,
                ring_start,
                shift,
            } => {
                if line.offset < kept_head {
                    Some(line.number)
                } else if line.offset < ring_start {
                    None
                } else {
                    line.number.checked_add_signed(shift)
                }
            }
        }
    }
}

/// One line of the block.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ShownLine {
    /// Its number as `output` reads the capture; `None` for a line the capture cap
    /// dropped (shown from the scan, not kept on disk).
    pub number: Option<u64>,
    /// A failure line (`N:`) or context (`N-`).
    pub matched: bool,
    /// The text, cut at 200 bytes (ending in `…` when cut).
    pub text: String,
    /// Lines before it were left out (a `--` goes before it).
    pub gap_before: bool,
}

/// The failure lines found in what a window left out.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct FailureBlock {
    /// The lines shown, in the order of the capture.
    pub lines: Vec<ShownLine>,
    /// Failure lines in the omitted middle, shown or not, and every TAP plan the count did
    /// not meet, wherever its line is (it is a failure of the stream, not of one line).
    pub matches: u64,
    /// Whether `matches` is exact; when not, it is a lower bound (the head or the tail
    /// held more failure lines than the scan keeps).
    pub exact: bool,
    /// Of them, shown.
    pub shown_matches: u64,
    /// Lines of the middle shown, in whole or in part.
    pub shown_lines: u64,
    /// Bytes of the middle shown (a line's newline counts when the line is shown whole).
    pub shown_bytes: u64,
    /// What no line says: each TAP plan the count did not meet (`TAP plan on line 1:
    /// planned 40, ran 12`), shown after the lines.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl FailureBlock {
    /// Whether a shown line was dropped by the capture cap, so cannot be read back.
    pub fn shows_dropped(&self) -> bool {
        self.lines.iter().any(|l| l.number.is_none())
    }

    /// The numbered lines, `grep -n` style: `N:` a failure line, `N-` context, `--`
    /// between lines that are not adjacent; `dropped:` for a line the cap dropped; then a
    /// `note:` line for each note.
    pub fn text(&self) -> String {
        let mut out = String::new();
        for line in &self.lines {
            if line.gap_before {
                out.push_str("--\n");
            }
            let sep = if line.matched { ':' } else { '-' };
            match line.number {
                Some(n) => {
                    let _ = writeln!(out, "{n}{sep}{}", line.text);
                }
                None => {
                    let _ = writeln!(out, "dropped{sep}{}", line.text);
                }
            }
        }
        for note in &self.notes {
            let _ = writeln!(out, "note: {note}");
        }
        out
    }
}

/// The block for the middle of a stream, at most `max_bytes` (and [`MAX_BYTES`]) of
/// text, or `None` when no failure line lies in it.
pub(crate) fn block(
    found: &Found,
    middle: Middle,
    numbering: Numbering,
    max_bytes: usize,
) -> Option<FailureBlock> {
    let max_bytes = max_bytes.min(MAX_BYTES);
    let inside = |l: &Line| l.offset >= middle.start && l.offset < middle.end;
    // A blank line of context tells the model nothing and costs it a line.
    let telling = |l: &Line| l.matched || l.text.iter().any(|b| !b.is_ascii_whitespace());
    // The hits whose failure line is in the middle, each with its lines in the middle.
    let hits: Vec<Vec<&Line>> = found
        .hits
        .iter()
        .filter(|h| inside(h.matched()))
        .map(|h| h.lines.iter().filter(|l| inside(l) && telling(l)).collect())
        .collect();
    // TAP plans not met: a note each, wherever the plan's line is, when anything is left
    // out (where nothing is, the model reads the plan and the tests itself).
    let elided = middle.start < middle.end;
    let plans: Vec<(&Line, Shortfall)> = found
        .hits
        .iter()
        .filter_map(|h| Some((h.matched(), h.shortfall?)))
        .filter(|_| elided)
        .collect();
    let plans_outside = plans.iter().filter(|(l, _)| !inside(l)).count() as u64;
    if hits.is_empty() && plans.is_empty() {
        return None;
    }
    let (matches, exact) = count(found, middle, hits.len() as u64);
    let mut notes = plan_notes(&plans, numbering);
    if !fits(
        &render(&BTreeMap::new(), &BTreeSet::new(), numbering, &notes),
        max_bytes,
    ) {
        notes.clear();
    }

    // Every line once, a failure line winning over the same line as context.
    let mut all: BTreeMap<u64, (&Line, bool)> = BTreeMap::new();
    for line in hits.iter().flatten() {
        let entry = all.entry(line.number).or_insert((line, false));
        entry.1 |= line.matched;
    }
    // Take whole hits from both ends in turn (the first failure and the final verdict
    // matter most); a hit that does not fit whole goes in as its failure line alone.
    let mut chosen: BTreeSet<u64> = BTreeSet::new();
    let (mut front, mut back) = (0usize, hits.len());
    let mut from_front = true;
    while front < back {
        let i = if from_front { front } else { back - 1 };
        let hit = &hits[i];
        let whole: Vec<u64> = hit.iter().map(|l| l.number).collect();
        let alone: Vec<u64> = hit.iter().filter(|l| l.matched).map(|l| l.number).collect();
        let fits = |extra: &[u64]| {
            let mut trial = chosen.clone();
            trial.extend(extra);
            fits(&render(&all, &trial, numbering, &notes), max_bytes)
        };
        if fits(&whole) {
            chosen.extend(whole);
        } else if fits(&alone) {
            chosen.extend(alone);
        } else {
            break;
        }
        if from_front {
            front += 1;
        } else {
            back -= 1;
        }
        from_front = !from_front;
    }
    let mut block = render(&all, &chosen, numbering, &notes);
    block.matches = matches + plans_outside;
    block.exact = exact;
    if !block.notes.is_empty() {
        block.shown_matches += plans_outside;
    }
    Some(block)
}

/// A note for each TAP plan not met, the first [`PLANS_NAMED`] by their line, the rest
/// counted.
fn plan_notes(plans: &[(&Line, Shortfall)], numbering: Numbering) -> Vec<String> {
    let mut notes: Vec<String> = plans
        .iter()
        .take(PLANS_NAMED)
        .map(|(line, s)| {
            let at = numbering.number(line).map_or_else(
                || "a line past the capture cap".to_string(),
                |n| format!("line {n}"),
            );
            format!("TAP plan on {at}: planned {}, ran {}", s.planned, s.ran)
        })
        .collect();
    if plans.len() > PLANS_NAMED {
        notes.push(format!(
            "{} more TAP plans not met",
            plans.len() - PLANS_NAMED
        ));
    }
    notes
}

/// Failure lines in the middle: those kept, and those the scan only counted when they all
/// fall between the ends it kept.
fn count(found: &Found, middle: Middle, kept_inside: u64) -> (u64, bool) {
    if found.unkept == 0 {
        return (kept_inside, true);
    }
    // Unkept matches lie after the last of the first kept and before the first of the last.
    let Some((last_of_first, first_of_last)) = found.gap else {
        return (kept_inside, false);
    };
    if last_of_first >= middle.start && first_of_last < middle.end {
        (kept_inside + found.unkept, true)
    } else {
        (kept_inside, false)
    }
}

fn fits(block: &FailureBlock, max_bytes: usize) -> bool {
    let text = block.text();
    text.len() <= max_bytes && text.lines().count() <= MAX_LINES
}

fn render(
    all: &BTreeMap<u64, (&Line, bool)>,
    chosen: &BTreeSet<u64>,
    numbering: Numbering,
    notes: &[String],
) -> FailureBlock {
    let mut block = FailureBlock {
        notes: notes.to_vec(),
        ..FailureBlock::default()
    };
    let mut previous: Option<u64> = None;
    for n in chosen {
        let (line, matched) = all[n];
        let (text, shown_bytes) = shown(line);
        block.lines.push(ShownLine {
            number: numbering.number(line),
            matched,
            text,
            gap_before: previous.is_some_and(|p| p + 1 != *n),
        });
        block.shown_matches += u64::from(matched);
        block.shown_lines += 1;
        block.shown_bytes += shown_bytes;
        previous = Some(*n);
    }
    block
}

/// A line's text as shown, and the bytes of the stream that showing it accounts for.
fn shown(line: &Line) -> (String, u64) {
    let kept = &line.text;
    if line.len as usize <= LINE_SHOWN && kept.len() as u64 == line.len {
        return (String::from_utf8_lossy(kept).into_owned(), line.len + 1);
    }
    let mut cut = kept.len().min(LINE_SHOWN);
    // Back to a character boundary.
    while cut > 0 && cut < kept.len() && kept[cut] & 0xC0 == 0x80 {
        cut -= 1;
    }
    (
        format!("{}…", String::from_utf8_lossy(&kept[..cut])),
        cut as u64,
    )
}
