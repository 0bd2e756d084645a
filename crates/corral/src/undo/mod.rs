//! Nothing lost: the workspace is recorded before every call that may write, so a person
//! can undo what any call did (`corral undo`).
//!
//! # The record
//!
//! Before a call whose plan is not entirely known-safe and read-only, every file of the
//! workspace that the rules (`rules`) keep (in a git workspace, what is tracked or
//! untracked and not ignored; elsewhere, everything but [`DEFAULT_IGNORED`]) is recorded:
//! its content in a content-addressed store (`store`) under `undo/` in corral's state
//! directory, its path, hash and mode in a tree (`tree`). A symlink is recorded as a link:
//! its target's text, read with `readlink`, never what it points at (a link to
//! `/etc/shadow` puts the text `/etc/shadow` in the store); a directory with nothing in it
//! is an entry of its own, so one a call removed comes back (`kind`). After the call,
//! once its result is on its way, the workspace is walked again on a thread of its own
//! (`after`; the step is marked pending in the trace until then, and every later record,
//! the run's end and `corral undo` wait for it), and what the call added, modified and
//! deleted becomes the step's rows in the trace's `step_files`, each with its content's
//! hash before and after. A call after which the change flag saw nothing is settled at
//! once, with no walk and no row. A handle
//! (`shell_start`, or a call that yielded) is recorded as it starts, and its step's rows
//! are what differs from that record at each poll while it runs and at its end
//! (`handle_files`). Ignored
//! build output is not recorded; the rules are frozen as the run first reads them, and
//! a path an earlier record held stays recorded. Nothing here runs git: the workspace's
//! `.git` and the user's git configuration can make git run programs on the host.
//!
//! A record is skipped when the change flag (`changes`: inotify on every directory
//! walked) saw nothing since the last one, and walks only the directories it saw change
//! when it saw some. A walk reads only files whose `lstat` (size,
//! times, inode, mode) changed since the last record; the newest tree of each workspace is kept on disk, so a process that
//! opens a run for one call starts from it. A workspace over the budget
//! (50,000 files or 200 MB), or a record that fails, is said on the call's result once
//! per run; the call runs anyway.
//!
//! # How long it is kept
//!
//! The records of the newest [`Config::undo_keep_runs`](crate::Config::undo_keep_runs)
//! runs that changed files are kept, none older than
//! [`Config::undo_keep_for`](crate::Config::undo_keep_for) (100 runs, 30 days; a run
//! still going and the newest are kept whatever the bounds), and the stored content no
//! kept record names is removed (`prune`): as a run opens, at most once an hour, and at
//! once with `corral trace prune`. Blobs are removed only while no other run is going:
//! what a run's calls and handles are recording is in its memory until their rows are
//! written, and a record and a prune's sweep exclude each other through the store's lock.
//!
//! # Where the record is safe
//!
//! `undo/` sits beside the trace and is hidden from the box as the trace is: in
//! `read-only` and `workspace-write` a command cannot read or change it. Under `full` (no
//! sandbox) a command can reach it like any other file of the user's, so the record
//! protects against mistakes, not against a command that sets out to destroy it.
//!
//! # Undo
//!
//! [`plan`] turns the rows of one step, or of a whole run, into what would put the files
//! back: each modified or deleted file restored byte for byte with its mode, each added
//! file removed. A file that is no longer as the step left it (a person, or a later call,
//! changed it since) is a conflict: the undo is refused and names them. [`apply`] writes
//! through a descriptor of the workspace, never following a symlink out of it: a link
//! comes back as a link with its text, a file a call replaced with a link is renamed over
//! the link, and a path under a link the call put where a directory was is restored once
//! the link is gone, never through it. The same
//! undo is offered to a model as the `undo` tool only where the person says so (`corral
//! mcp --undo-tool`): the model's undo is a step like any other, which a person can undo.

mod after;
mod budget;
pub(crate) mod changes;
mod handle_files;
pub(crate) mod kind;
mod prune;
mod request;
mod restore;
pub(crate) mod rules;
pub(crate) mod store;
pub(crate) mod tree;
pub(crate) mod walk;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

pub(crate) use prune::prune_when_due;
pub use prune::{EVERY, UndoPruneReport, UndoRetention, prune};
pub use request::UndoRequest;
pub(crate) use restore::apply_within;
pub use restore::{UndoPlan, UndoTarget, apply, plan};
pub use rules::DEFAULT_IGNORED;

use crate::sandbox::sets::Sets;
use store::Blobs;
use tree::Tree;
use walk::NotRecorded;

pub(crate) use after::record_after;
pub(crate) use budget::GIVEN_UP;
pub(crate) use handle_files::HandleFiles;

/// The directory of the undo store beside a trace at `db`.
pub fn store_dir(db: &Path) -> PathBuf {
    db.parent().unwrap_or(Path::new(".")).join("undo")
}

/// A run's recorder: the frozen rules, the newest tree, and whether the run was told
/// that a record could not be made.
#[derive(Debug)]
pub(crate) struct Recorder {
    root: PathBuf,
    /// The store's directory (its lock: see [`store::Held`]).
    dir: PathBuf,
    blobs: Blobs,
    tree_file: PathBuf,
    options: walk::Options,
    state: Mutex<State>,
    /// Records after calls still being made on the recorder's thread.
    after: after::After,
    /// The run's records as its store budget sees them (given up oldest first).
    records: Arc<budget::RunRecords>,
}

#[derive(Debug)]
struct State {
    rules: rules::Rules,
    flag: changes::ChangeFlag,
    last: Option<Arc<Tree>>,
    /// What the box hides, never recorded: the run's sets, once a call gave them
    /// ([`Recorder::hiding`]).
    sets: Option<Arc<Sets>>,
    /// Set once a record failed or the workspace was over budget: no further walk is
    /// tried in the run.
    not_recorded: Option<NotRecorded>,
    /// The run was told that the workspace is over the budget.
    said: bool,
}

impl Recorder {
    /// The recorder of `workspace` (canonical) with its store in `dir`; with `git_refs`,
    /// the repository's `HEAD`, refs and reflogs are recorded too.
    pub(crate) fn new(dir: &Path, workspace: &Path, git_refs: bool) -> Recorder {
        let key = {
            use sha2::Digest;
            let digest = sha2::Sha256::digest(workspace.as_os_str().as_encoded_bytes());
            store::hex(&digest[..8])
        };
        let _ = std::fs::create_dir_all(dir);
        Recorder {
            root: workspace.to_path_buf(),
            dir: dir.to_path_buf(),
            blobs: Blobs::new(dir.join("blobs")),
            tree_file: dir.join("trees").join(key),
            options: walk::Options {
                budget: walk::BUDGET,
                git_refs,
            },
            state: Mutex::new(State {
                rules: rules::Rules::new(workspace),
                flag: changes::ChangeFlag::new(),
                last: None,
                sets: None,
                not_recorded: None,
                said: false,
            }),
            after: after::After::default(),
            records: Arc::new(budget::RunRecords::new(dir.to_path_buf())),
        }
    }

    /// The run's trace and id, so that its oldest records can be given up when its store
    /// budget is reached.
    pub(crate) fn tracing(&self, store: &Arc<Mutex<corral_trace::Store>>, run_id: &str) {
        self.records.tracing(store, run_id);
    }

    /// Record the workspace, once every record after a call still being made is made;
    /// `None` when it cannot be (see [`Recorder::untold`]).
    pub(crate) fn record(&self) -> Option<Arc<Tree>> {
        self.record_held(None).0
    }

    /// [`Recorder::record`] (of step `step`, a handle's, when it is a step's), with the
    /// store's lock still held where the record walked: what the tree names that is not
    /// written yet (a step's rows) is written before it is let go, so no prune removes a
    /// blob only it names.
    pub(crate) fn record_held(
        &self,
        step: Option<i64>,
    ) -> (Option<Arc<Tree>>, Option<store::Held>) {
        self.after.wait();
        self.record_now(step)
    }

    /// Wait until every record after a call is made (the run's end).
    pub(crate) fn settle(&self) {
        self.after.wait();
    }

    /// Whether anything recorded may have changed since the last record.
    fn maybe_changed(&self) -> bool {
        let state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        state.not_recorded.is_none() && state.flag.maybe_changed()
    }

    /// Record the workspace now (after step `step`, when it is a step's record), whatever
    /// is still being recorded; with the store's lock, held from before the walk, where it
    /// walked. The record is held (see `budget`) while its caller keeps it.
    fn record_now(&self, step: Option<i64>) -> (Option<Arc<Tree>>, Option<store::Held>) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        self.records.recording(step);
        let (tree, held) = self.record_locked(&mut state);
        if let Some(tree) = &tree {
            self.records.hold(tree);
        }
        (tree, held)
    }

    fn record_locked(&self, state: &mut State) -> (Option<Arc<Tree>>, Option<store::Held>) {
        if state.not_recorded.is_some() {
            return (None, None);
        }
        // Drained before the walk: what changes while it walks is seen next time.
        let seen = state.flag.changed();
        let git = self.root.join(".git");
        let before = match (&state.last, &seen) {
            (Some(tree), changes::Seen::Nothing) => return (Some(Arc::clone(tree)), None),
            (Some(tree), _) => Arc::clone(tree),
            (None, _) => Arc::new(tree::load(&self.tree_file)),
        };
        // No prune removes a blob this walk names until what names it is written.
        let held = store::Held::take(&self.dir, false, true).ok().flatten();
        self.blobs.begin_record();
        let State {
            rules,
            flag,
            last,
            sets,
            ..
        } = &mut *state;
        let none = Sets::default();
        let scope = walk::Scope {
            root: &self.root,
            sets: sets.as_deref().unwrap_or(&none),
        };
        let walked = match seen {
            // Only where the flag saw changes, once there is a record of the rest.
            // Under `.git`, where the record holds git's data, only there too.
            changes::Seen::Dirs(dirs)
                if last.is_some()
                    && (self.options.git_refs || !dirs.keys().any(|d| d.starts_with(&git))) =>
            {
                walk::rewalk(
                    scope,
                    rules,
                    Some(flag),
                    &before,
                    &self.blobs,
                    self.options,
                    &dirs,
                )
            }
            _ => walk::walk(scope, rules, Some(flag), &before, &self.blobs, self.options),
        };
        match walked {
            Ok(walked) => {
                // A walk that found the record as it was keeps it: who compares records
                // (a handle's rows at each poll) sees at once that nothing changed.
                if walked.read == 0 && walked.tree == *before {
                    state.last = Some(Arc::clone(&before));
                    return (Some(before), held);
                }
                let tree = Arc::new(walked.tree);
                if walked.read > 0 || tree.len() != before.len() {
                    let _ = tree::save(&self.tree_file, &tree);
                }
                state.last = Some(Arc::clone(&tree));
                (Some(tree), held)
            }
            Err(why) => {
                state.not_recorded = Some(why);
                (None, held)
            }
        }
    }

    /// Why no record can be made in this run, once one was tried and could not be.
    pub(crate) fn cannot(&self) -> Option<String> {
        let state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        state.not_recorded.as_ref().map(|why| self.reason(why))
    }

    fn reason(&self, why: &NotRecorded) -> String {
        match why {
            NotRecorded::OverBudget { files, bytes } => format!(
                "the workspace is over the record's budget of {} files or {} MB (at least \
                 {files} files, {} MB; `[undo] max_files` and `max_mb` in a policy file raise \
                 it)",
                self.options.budget.files,
                self.options.budget.bytes / 1_000_000,
                bytes / 1_000_000
            ),
            NotRecorded::Failed(e) => format!("the workspace could not be recorded ({e})"),
        }
    }

    /// What a call's result says when its changes could not be recorded: where the
    /// workspace is over the budget, once a run (it stays over it); where a record
    /// failed, on every call.
    pub(crate) fn untold(&self) -> Option<String> {
        let given_up = self.records.untold();
        match (given_up, self.untold_unrecorded()) {
            (Some(a), Some(b)) => Some(format!("{a}\n{b}")),
            (a, b) => a.or(b),
        }
    }

    /// [`Recorder::untold`] of a record that could not be made.
    fn untold_unrecorded(&self) -> Option<String> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let why = state.not_recorded.as_ref()?;
        let text = match why {
            NotRecorded::OverBudget { .. } if state.said => return None,
            NotRecorded::OverBudget { .. } => format!(
                "undo: this call's changes cannot be undone, nor those of this run's later \
                 calls: {}",
                self.reason(why)
            ),
            NotRecorded::Failed(_) => format!(
                "undo: this call's changes cannot be undone: {}",
                self.reason(why)
            ),
        };
        state.said = true;
        Some(text)
    }

    /// The recorder with another budget (see [`crate::Config::undo_budget`]): per
    /// record, and for all that this run's records add to the store (its default taken
    /// from the state filesystem's free space now, as the run starts).
    pub(crate) fn with_budget(mut self, budget: walk::Budget) -> Recorder {
        self.options.budget = budget;
        let store = budget
            .store_bytes
            .unwrap_or_else(|| Blobs::default_budget(&self.dir));
        self.blobs = self.blobs.with_budget(store);
        self.blobs
            .making_room(Arc::clone(&self.records) as Arc<dyn store::Room>);
        self
    }

    /// Never record what the box hides, nor let an undo write it (`sets`, made by
    /// `make` the first time a call asks, from the sets the run's box is built from).
    pub(crate) fn hiding(&self, make: impl FnOnce() -> Sets) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if state.sets.is_none() {
            state.sets = Some(Arc::new(make()));
        }
    }

    /// Never record `own` (corral's own files, where they lie in the workspace: see
    /// [`rules`]).
    pub(crate) fn leaving_out(self, own: &[PathBuf]) -> Recorder {
        {
            let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
            state.rules.leave_out(own);
            state.flag.leave_out(own);
        }
        self
    }
}

/// The rows of what changed between two records.
pub(crate) fn step_files(before: &Arc<Tree>, after: &Arc<Tree>) -> Vec<corral_trace::StepFile> {
    if Arc::ptr_eq(before, after) {
        return Vec::new();
    }
    let changes = tree::diff(before, after);
    let side = |t: &Tree, p: &Vec<u8>| t.get(p).map(|e| (e.hash.clone(), e.mode));
    let mut rows = Vec::new();
    for (list, change) in [
        (&changes.added, "added"),
        (&changes.modified, "modified"),
        (&changes.deleted, "deleted"),
    ] {
        for p in list {
            rows.push(corral_trace::StepFile {
                path: p.clone(),
                change: change.into(),
                before: side(before, p),
                after: side(after, p),
            });
        }
    }
    rows
}

#[cfg(test)]
mod tests;
