//! `apply_patch`: Codex's patch format, parsed by corral, checked whole, applied whole.
//!
//! 1. The patch is parsed ([`parse`]); a malformed one changes nothing and names its line.
//! 2. Every path it touches (added, updated, deleted, moved from and to) is confined
//!    like a `write_file` path and checked as a write against the policy, in one approval
//!    request, before anything is read.
//! 3. Every file's new text is computed in memory; a hunk that does not apply is reported
//!    with the nearest match, a read-only file as read-only, and nothing is changed.
//! 4. Only then are files written (each through a temporary file and a rename); if one
//!    write fails, the files already changed are put back as they were.

mod apply;
mod heredoc;

pub(crate) use heredoc::is_patch_heredoc;
mod parse;

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use corral_policy::Act;

pub use apply::{Applied, HunkError, apply_hunks};
pub use parse::{FileOp, Hunk, HunkLine, ParseError, Patch, parse};

use crate::beneath::{Replace, Roots};
use crate::ctx::Ctx;
use crate::error::{Error, Result};
use crate::files::FileOutcome;

/// The largest file a patch reads: each is held in memory, several times over, while its
/// hunks apply, and a model can make a file of gigabytes in a second.
const MAX_FILE: u64 = 16 << 20;

/// Apply a patch in Codex's format.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PatchRequest {
    /// `*** Begin Patch`, then `*** Add File: P` (lines +), `*** Update File: P`
    /// (optional `*** Move to: Q`, then `@@ line to find` hunks of ` `/`-`/`+` lines), or
    /// `*** Delete File: P`; then `*** End Patch`. Paths relative to the workspace.
    pub patch: String,
}

impl PatchRequest {
    /// A request to apply `patch`.
    pub fn new(patch: impl Into<String>) -> Self {
        Self {
            patch: patch.into(),
        }
    }
}

/// Files as a patch leaves them: new text, or `None` for absent.
type Files = BTreeMap<PathBuf, Option<String>>;

/// What happened to one file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
struct Change {
    /// `A`, `M`, `D`, or `R` for a move.
    mark: char,
    shown: String,
    added: usize,
    removed: usize,
}

impl Ctx {
    /// Apply a patch to files in the workspace, all of it or none of it. The observation
    /// lists each file changed (`A` added, `M` modified, `D` deleted, `R` moved, with
    /// lines added and removed); an error says which hunk did not apply and where the
    /// nearest match is.
    pub(crate) fn apply_patch(&self, request: &PatchRequest) -> Result<FileOutcome> {
        let call = serde_json::to_string(request).unwrap_or_default();
        self.file_step("apply_patch", call, |step| {
            let patch = parse(&request.patch).map_err(|e| {
                Error::invalid(format!("the patch is malformed: {e}. Nothing was changed."))
            })?;
            // Resolve and confine every path first (one the box hides before even a link
            // in it is looked at), then one policy check for them all: an update reads
            // its file too (a hunk that does not apply quotes it), so it is a read and a
            // write.
            let sets = self.file_sets();
            let mut resolved: Vec<(PathBuf, Option<PathBuf>)> = Vec::new();
            let mut acts = Vec::new();
            for op in &patch.ops {
                for path in std::iter::once(op.path()).chain(move_to(op)) {
                    self.not_hidden(&sets, path)?;
                }
                self.not_a_link(op)?;
                let from = self.resolve_in(&sets, op.path(), true)?;
                if matches!(op, FileOp::Update { .. }) {
                    acts.push((Act::Read, from.clone()));
                }
                acts.push((Act::Write, from.clone()));
                let to = match move_to(op) {
                    Some(to) => {
                        let to = self.resolve_in(&sets, to, true)?;
                        acts.push((Act::Write, to.clone()));
                        Some(to)
                    }
                    None => None,
                };
                resolved.push((from, to));
            }
            self.check_files("apply_patch", step, &acts)?;
            let roots = self.file_roots()?;
            let (plan, changes) = self.plan_patch(&patch, &resolved, &roots)?;
            commit(&roots, &plan)?;
            // A file named by two sections (updated twice, deleted then added) is one file.
            let files = changes
                .iter()
                .map(|c| c.shown.as_str())
                .collect::<std::collections::BTreeSet<_>>()
                .len();
            let mut text = format!(
                "applied the patch: {} file{} changed\n",
                files,
                if files == 1 { "" } else { "s" }
            );
            for c in &changes {
                text.push_str(&format!("{} {}", c.mark, c.shown));
                if c.mark != 'D' {
                    text.push_str(&format!(" (+{} -{})", c.added, c.removed));
                }
                text.push('\n');
            }
            Ok(text)
        })
    }

    /// A patch changes files, not symlinks: deleting or moving a link, or adding a file
    /// where one is, would take the file it leads to with it (or fail half-way for one
    /// that leads nowhere), so the patch is refused, saying what to do. An update writes
    /// through a link inside the workspace, as Codex's does.
    fn not_a_link(&self, op: &FileOp) -> Result<()> {
        let (path, what) = match op {
            FileOp::Add { path, .. } => (path, "add a file where it is"),
            FileOp::Delete { path } => (path, "delete it"),
            FileOp::Update {
                path,
                move_to: Some(to),
                ..
            } => {
                if let Some(target) = link_target(&self.workspace.join(to)) {
                    return Err(Error::invalid(format!(
                        "{to} is a symlink (to {target}): a patch does not move a file onto a \
                         link; remove it with `rm {to}` first, or move elsewhere. Nothing was \
                         changed."
                    )));
                }
                (path, "move it")
            }
            FileOp::Update { .. } => return Ok(()),
        };
        match link_target(&self.workspace.join(path)) {
            Some(target) => Err(Error::invalid(format!(
                "{path} is a symlink (to {target}): a patch does not {what}, since the file it \
                 leads to would go with it; use `rm {path}` for the link itself, or name the \
                 file it leads to. Nothing was changed."
            ))),
            None => Ok(()),
        }
    }

    /// Every file's final state (`None`: absent), computed in memory, and what changed.
    fn plan_patch(
        &self,
        patch: &Patch,
        resolved: &[(PathBuf, Option<PathBuf>)],
        roots: &Roots,
    ) -> Result<(Files, Vec<Change>)> {
        // The files as the patch sees them so far: later operations see earlier ones.
        let mut state = Files::new();
        let read = |state: &Files, path: &PathBuf| {
            if let Some(s) = state.get(path) {
                return Ok(s.clone());
            }
            match roots.read_at_most(path, MAX_FILE) {
                Ok(None) => Ok(None),
                Err(e) if e.kind() == std::io::ErrorKind::FileTooLarge => {
                    Err(Error::invalid(format!(
                        "{} is too large for a patch ({e}; a patch changes files of up to {} MiB, held in memory while it applies): change or delete it with a command instead (`sed -i`, a script, `rm`). Nothing was changed.",
                        self.show_path(path),
                        MAX_FILE >> 20
                    )))
                }
                Ok(Some(bytes)) => String::from_utf8(bytes).map(Some).map_err(|_| {
                    Error::invalid(format!(
                        "{} is not UTF-8 text: a patch cannot change it. Nothing was changed.",
                        self.show_path(path)
                    ))
                }),
                Err(e) => Err(Error::io(format!("reading {}", path.display()), e)),
            }
        };
        let mut changes = Vec::new();
        let mut failures = Vec::new();
        for (op, (from, to)) in patch.ops.iter().zip(resolved) {
            let shown = self.show_path(from);
            if from.is_dir() {
                return Err(Error::invalid(format!(
                    "{shown} is a directory: a patch changes files. Nothing was changed."
                )));
            }
            let current = match op {
                // A file is deleted whatever it holds: its text only counts its lines.
                FileOp::Delete { .. } if !state.contains_key(from) => {
                    match roots.read_at_most(from, MAX_FILE) {
                        Ok(bytes) => bytes.map(|b| String::from_utf8_lossy(&b).into_owned()),
                        Err(_) => read(&state, from)?,
                    }
                }
                _ => read(&state, from)?,
            };
            match op {
                FileOp::Add { contents, .. } => {
                    if current.is_some() {
                        failures.push(format!(
                            "{shown}: `*** Add File` names a file that exists: use `*** Update File` to change it"
                        ));
                        continue;
                    }
                    changes.push(Change {
                        mark: 'A',
                        shown,
                        added: contents.lines().count(),
                        removed: 0,
                    });
                    state.insert(from.clone(), Some(contents.clone()));
                }
                FileOp::Delete { .. } => {
                    let Some(old) = current else {
                        failures.push(format!(
                            "{shown}: `*** Delete File` names a file that does not exist"
                        ));
                        continue;
                    };
                    changes.push(Change {
                        mark: 'D',
                        shown,
                        added: 0,
                        removed: old.lines().count(),
                    });
                    state.insert(from.clone(), None);
                }
                FileOp::Update { hunks, .. } => {
                    let Some(old) = current else {
                        failures.push(format!(
                            "{shown}: `*** Update File` names a file that does not exist: use `*** Add File` to create it"
                        ));
                        continue;
                    };
                    let in_place = !matches!(to, Some(to) if to != from);
                    if in_place && read_only(from) {
                        failures.push(format!(
                            "{shown}: the file is read-only, and a patch does not write through its mode: make it writable first or leave it out"
                        ));
                        continue;
                    }
                    let applied = if hunks.is_empty() {
                        Applied {
                            text: old,
                            added: 0,
                            removed: 0,
                        }
                    } else {
                        match apply_hunks(&old, hunks) {
                            Ok(a) => a,
                            Err(errors) => {
                                failures.extend(errors.iter().map(|e| format!("{shown}: {e}")));
                                continue;
                            }
                        }
                    };
                    let mut change = Change {
                        mark: 'M',
                        shown,
                        added: applied.added,
                        removed: applied.removed,
                    };
                    match to {
                        Some(to) if to != from => {
                            if read(&state, to)?.is_some() {
                                failures.push(format!(
                                    "{}: `*** Move to` names a file that exists: delete it first or move elsewhere",
                                    self.show_path(to)
                                ));
                                continue;
                            }
                            change.mark = 'R';
                            change.shown = format!("{} -> {}", change.shown, self.show_path(to));
                            state.insert(from.clone(), None);
                            state.insert(to.clone(), Some(applied.text));
                        }
                        _ => {
                            state.insert(from.clone(), Some(applied.text));
                        }
                    }
                    changes.push(change);
                }
            }
        }
        if !failures.is_empty() {
            return Err(Error::invalid(format!(
                "the patch does not apply, and nothing was changed:\n{}\nRead the files again and send a corrected patch.",
                failures
                    .iter()
                    .map(|f| format!("- {f}"))
                    .collect::<Vec<_>>()
                    .join("\n")
            )));
        }
        Ok((state, changes))
    }
}

/// Where an update moves its file to.
fn move_to(op: &FileOp) -> Option<&str> {
    match op {
        FileOp::Update {
            move_to: Some(to), ..
        } => Some(to),
        _ => None,
    }
}

/// Where `path` is a symlink, what it holds.
fn link_target(path: &std::path::Path) -> Option<String> {
    std::fs::symlink_metadata(path)
        .ok()
        .filter(|m| m.file_type().is_symlink())
        .map(|_| {
            std::fs::read_link(path)
                .map(|t| t.display().to_string())
                .unwrap_or_default()
        })
}

/// The file on disk has no write permission for anyone (Codex's write fails there too).
fn read_only(path: &std::path::Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.permissions().readonly())
}

/// Write every file's final state; on a failure, put back the ones already changed. A
/// file that was not there is created only if it still is not (`RENAME_NOREPLACE`).
fn commit(roots: &Roots, plan: &Files) -> Result<()> {
    let io = |what: &str, path: &PathBuf| {
        let what = format!("{what} {}", path.display());
        move |e| Error::io(what, e)
    };
    let mut done: Vec<(&PathBuf, Option<Vec<u8>>)> = Vec::new();
    for (path, state) in plan {
        let before = roots.read_at_most(path, MAX_FILE).ok().flatten();
        let replace = if before.is_some() {
            Replace::Any
        } else {
            Replace::Never
        };
        let result = match state {
            Some(text) => roots
                .write(path, text.as_bytes(), replace)
                .map_err(io("writing", path)),
            None if before.is_some() => roots.remove(path).map_err(io("deleting", path)),
            None => Ok(()),
        };
        if let Err(e) = result {
            for (path, before) in done.into_iter().rev() {
                let _ = match before {
                    Some(bytes) => roots.write(path, &bytes, Replace::Any),
                    None => roots.remove(path),
                };
            }
            return Err(e);
        }
        done.push((path, before));
    }
    Ok(())
}
