//! What a person reads of a held change: its diff, its size in a listing, the three
//! versions of a conflict. Every line a model or a command chose goes through the one
//! renderer ([`crate::person`]); binary content is summarised, never written raw.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::path::Path;

use serde::Serialize;
use similar::{ChangeTag, TextDiff};

use super::error::Result;
use super::store::{Held, HeldStore};
use super::workspace::{Conflict, Version};
use super::{BASE, HELD};
use crate::person::{self, Lines};

/// How many lines of a diff are shown before the rest is only counted.
const DIFF_LINES: usize = 2000;

/// How many lines of each version a conflict shows.
const VERSION_LINES: usize = 40;

/// How much a held change changes, for a listing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Change {
    /// Text: lines added and removed.
    Lines {
        /// Lines the held version adds.
        added: usize,
        /// Lines it removes.
        removed: usize,
    },
    /// Binary, or too large to compare here: the sizes (`None`: no file).
    Bytes {
        /// The person's version's size.
        base: Option<u64>,
        /// The held version's size.
        held: Option<u64>,
    },
}

impl HeldStore {
    /// The held change `id` as a unified diff from the person's version to the held one,
    /// for a person to read (see the module docs).
    pub fn diff(&self, id: &str) -> Result<String> {
        let entry = self.get(id)?;
        let base = self.version(&entry, BASE)?;
        let held = self.version(&entry, HELD)?;
        Ok(diff(&entry, &base, &held, &self.entry_dir(&entry)))
    }

    /// How much the held change `id` changes.
    pub fn change(&self, id: &str) -> Result<Change> {
        let entry = self.get(id)?;
        let base = self.version(&entry, BASE)?;
        let held = self.version(&entry, HELD)?;
        Ok(match (text(&base), text(&held)) {
            (Some(old), Some(new)) => {
                let (mut added, mut removed) = (0, 0);
                for change in TextDiff::from_lines(old, new).iter_all_changes() {
                    match change.tag() {
                        ChangeTag::Insert => added += 1,
                        ChangeTag::Delete => removed += 1,
                        ChangeTag::Equal => {}
                    }
                }
                Change::Lines { added, removed }
            }
            _ => Change::Bytes {
                base: (base != Version::Absent).then(|| self.base_size(&entry)),
                held: entry.held_sha256.is_some().then_some(entry.bytes),
            },
        })
    }
}

impl Conflict {
    /// The three versions as a person reads them, each clipped to its first lines: the
    /// person's when the call started, theirs now, and the call's.
    pub fn shown(&self) -> String {
        let mut out = String::new();
        for (title, version) in [
            ("yours when the call started", &self.base),
            ("yours now", &self.current),
            ("held (the call's version, not applied)", &self.held),
        ] {
            let _ = writeln!(out, "{title}:");
            out.push_str(&excerpt(version));
        }
        out
    }
}

/// A version's first [`VERSION_LINES`] lines, or what it is in words.
fn excerpt(v: &Version) -> String {
    let Some(t) = text(v) else {
        return format!("  {}\n", describe(v));
    };
    if t.is_empty() {
        return "  (an empty file)\n".into();
    }
    let mut out = String::new();
    let lines: Vec<&str> = t.lines().collect();
    for l in lines.iter().take(VERSION_LINES) {
        let _ = writeln!(out, "  | {}", line(l));
    }
    if lines.len() > VERSION_LINES {
        let _ = writeln!(
            out,
            "  [… {} more lines not shown; {} lines in all]",
            lines.len() - VERSION_LINES,
            lines.len()
        );
    }
    out
}

/// The diff itself: a header naming the path and the held mode, then the hunks, or what
/// each version is when either is not text.
fn diff(entry: &Held, base: &Version, held: &Version, dir: &Path) -> String {
    let path = person::path(&entry.path);
    let yours = match base {
        Version::Absent => "yours: no file when the call started",
        _ => "yours, when the call started",
    };
    let theirs = match (held, entry.mode) {
        (Version::Absent, _) => "held: the call removed it".to_string(),
        (_, Some(mode)) => format!("held: mode {mode:04o}"),
        (_, None) => "held".to_string(),
    };
    let mut out = format!("--- {path}  ({yours})\n+++ {path}  ({theirs})\n");
    let (Some(old), Some(new)) = (text(base), text(held)) else {
        let _ = writeln!(out, "yours: {}", describe(base));
        let _ = writeln!(out, "held:  {}", describe(held));
        let _ = writeln!(
            out,
            "not shown as a diff; the stored versions are {} and {}",
            person::path(&dir.join(BASE)),
            person::path(&dir.join(HELD))
        );
        return out;
    };
    if old == new {
        out.push_str("(the same content as yours)\n");
        return out;
    }
    let mut shown = 0usize;
    let mut left = 0usize;
    let text_diff = TextDiff::from_lines(old, new);
    for hunk in text_diff.unified_diff().context_radius(3).iter_hunks() {
        let mut lines = vec![hunk.header().to_string()];
        for change in hunk.iter_changes() {
            let sign = match change.tag() {
                ChangeTag::Delete => '-',
                ChangeTag::Insert => '+',
                ChangeTag::Equal => ' ',
            };
            let value = change.value();
            lines.push(format!(
                "{sign}{}",
                line(value.strip_suffix('\n').unwrap_or(value))
            ));
            if change.missing_newline() {
                lines.push("\\ No newline at end of file".into());
            }
        }
        for l in lines {
            if shown < DIFF_LINES {
                out.push_str(&l);
                out.push('\n');
                shown += 1;
            } else {
                left += 1;
            }
        }
    }
    if left > 0 {
        let _ = writeln!(
            out,
            "[… {left} more lines of the diff not shown; the held version is {}]",
            person::path(&dir.join(HELD))
        );
    }
    out
}

/// One line of a file, through the renderer: hidden characters escaped (tabs kept),
/// clipped in the middle past [`person::VALUE_MAX`] bytes.
fn line(s: &str) -> Cow<'_, str> {
    corral_line::visible::clipped(s, person::VALUE_MAX, |part| {
        person::escaped(part, Lines::Keep)
    })
}

/// A version's text, when it is text: UTF-8 without a NUL byte (no file is empty text).
fn text(v: &Version) -> Option<&str> {
    match v {
        Version::Absent => Some(""),
        Version::File(bytes) => std::str::from_utf8(bytes)
            .ok()
            .filter(|t| !t.contains('\0')),
        Version::Large { .. } | Version::Other(_) => None,
    }
}

/// A version in words, for one that is not shown as text.
fn describe(v: &Version) -> String {
    match v {
        Version::Absent => "no file".into(),
        Version::File(bytes) if text(v).is_some() => format!("text, {} bytes", bytes.len()),
        Version::File(bytes) => format!("binary, {} bytes", bytes.len()),
        Version::Large { more_than } => {
            format!("more than {more_than} bytes, too large to show here")
        }
        Version::Other(what) => person::value(what).into_owned(),
    }
}
