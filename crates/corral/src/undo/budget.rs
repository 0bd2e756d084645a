//! A run's own records given up, oldest first, to keep what they add to the undo store
//! within its budget (`[undo] store_max_mb`; see `store`).
//!
//! When a new blob would pass the budget, [`RunRecords::make`]:
//!
//! 1. Makes room only once the run has a trace to give records up in, and only while no
//!    other run is going: what another run holds in memory cannot be read from here (the
//!    prune across runs passes over the blobs then too, see `prune`).
//! 2. Takes the run's steps that changed files, oldest first, passing over a step still
//!    being recorded and a live handle's (its rows are written again at each poll).
//! 3. Gives each up until the blob fits: its rows become one row whose change is
//!    [`GIVEN_UP`] (an undo of it then refuses and says why), and each blob only its rows
//!    named, that this run wrote, is removed. Kept are the blobs any other row names, a
//!    workspace's newest tree on disk, a tree the run still holds (the record a call or
//!    a handle started from, the newest), and the record being made.
//! 4. Keeps what it gave up to be said on the run's next call result (the record after a
//!    call is made once the call's result is on its way), naming the step whose record
//!    crossed the budget.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, Weak};

use corral_trace::{PENDING, StepFile, Store};

use super::store::{Blobs, Room};
use super::tree::Tree;

/// The `change` of the one row a step keeps once its record was given up to keep the
/// run's undo store within its budget (its path empty).
pub(crate) const GIVEN_UP: &str = "given up";

/// A run's records as its budget sees them: the trace they are in, what the run still
/// holds, and what it gave up and has not said yet.
#[derive(Debug)]
pub(crate) struct RunRecords {
    /// The undo store's directory (its newest trees).
    dir: PathBuf,
    trace: OnceLock<(Arc<Mutex<Store>>, String)>,
    /// Every record handed out: those still alive name blobs no row names yet.
    held: Mutex<Vec<Weak<Tree>>>,
    /// The steps of handles still running.
    handles: Mutex<HashSet<i64>>,
    /// The step whose record is being made, when it is a step's.
    crossing: Mutex<Option<i64>>,
    /// Given up and not yet said.
    unsaid: Mutex<Vec<GivenUp>>,
}

/// Steps given up to make room for one record.
#[derive(Debug)]
struct GivenUp {
    /// Their numbers in the run.
    seqs: Vec<i64>,
    /// The number of the step whose record crossed the budget.
    by: Option<i64>,
    limit: u64,
}

impl RunRecords {
    pub(crate) fn new(dir: PathBuf) -> RunRecords {
        RunRecords {
            dir,
            trace: OnceLock::new(),
            held: Mutex::default(),
            handles: Mutex::default(),
            crossing: Mutex::default(),
            unsaid: Mutex::default(),
        }
    }

    /// The run's trace and id: from now on its records can be given up.
    pub(crate) fn tracing(&self, store: &Arc<Mutex<Store>>, run_id: &str) {
        let _ = self
            .trace
            .get_or_init(|| (Arc::clone(store), run_id.to_string()));
    }

    /// `tree` is handed out: what it names is kept while it lives.
    pub(crate) fn hold(&self, tree: &Arc<Tree>) {
        let mut held = lock(&self.held);
        held.retain(|w| w.strong_count() > 0);
        if !held
            .iter()
            .any(|w| std::ptr::eq(w.as_ptr(), Arc::as_ptr(tree)))
        {
            held.push(Arc::downgrade(tree));
        }
    }

    /// The record being made is step `step`'s (`None`: a record before a call).
    pub(crate) fn recording(&self, step: Option<i64>) {
        *lock(&self.crossing) = step;
    }

    /// A handle of step `step` runs, or (`running` false) has ended.
    pub(crate) fn handle(&self, step: i64, running: bool) {
        let mut handles = lock(&self.handles);
        if running {
            handles.insert(step);
        } else {
            handles.remove(&step);
        }
    }

    /// What the run has not been told of what was given up, as a note for a result.
    pub(crate) fn untold(&self) -> Option<String> {
        let unsaid = std::mem::take(&mut *lock(&self.unsaid));
        let notes: Vec<String> = unsaid.iter().map(GivenUp::note).collect();
        (!notes.is_empty()).then(|| notes.join("\n"))
    }

    /// What names a blob besides the rows: a workspace's newest tree on disk, and every
    /// record the run still holds.
    fn kept(&self) -> HashSet<String> {
        let mut kept = HashSet::new();
        super::prune::tree_hashes(&self.dir, &mut kept);
        for tree in lock(&self.held).iter().filter_map(Weak::upgrade) {
            kept.extend(tree.values().map(|e| e.hash.clone()));
        }
        kept
    }
}

impl Room for RunRecords {
    fn make(&self, blobs: &Blobs, need: u64) -> bool {
        let fits = || {
            blobs
                .budget()
                .is_none_or(|(limit, used)| limit >= used + need)
        };
        let Some((store, run)) = self.trace.get() else {
            return false;
        };
        let store = lock(store);
        // 1. Only while no other run is going.
        let others = store
            .live_run_ids()
            .map(|ids| ids.iter().any(|id| id != run));
        if others.unwrap_or(true) {
            return false;
        }
        // 2. The run's steps that changed files, oldest first.
        let Ok(steps) = store.run_files(run) else {
            return false;
        };
        let handles = lock(&self.handles).clone();
        let kept = self.kept();
        let mut seqs = Vec::new();
        for (step, files) in steps {
            if fits() {
                break;
            }
            let busy = files
                .iter()
                .any(|f| f.change == PENDING || f.change == GIVEN_UP);
            if busy || handles.contains(&step) {
                continue;
            }
            // 3. Given up; then what only it named, and this run wrote, removed.
            let marker = StepFile {
                path: Vec::new(),
                change: GIVEN_UP.into(),
                before: None,
                after: None,
            };
            if store.replace_step_files(run, step, &[marker]).is_err() {
                break;
            }
            if let Ok(Some(row)) = store.step(step) {
                seqs.push(row.seq);
            }
            let Ok(named) = store.step_file_hashes() else {
                break;
            };
            let hashes = files
                .iter()
                .flat_map(|f| [&f.before, &f.after])
                .filter_map(|side| side.as_ref().map(|(hash, _)| hash));
            for hash in hashes {
                if !named.contains(hash) && !kept.contains(hash) && !blobs.naming(hash) {
                    let _ = blobs.remove_written(hash);
                }
            }
        }
        // 4. Said on the next call's result.
        if !seqs.is_empty() {
            let by = lock(&self.crossing)
                .and_then(|id| store.step(id).ok().flatten())
                .map(|row| row.seq);
            let limit = blobs.budget().map_or(0, |(limit, _)| limit);
            lock(&self.unsaid).push(GivenUp { seqs, by, limit });
        }
        fits()
    }
}

impl GivenUp {
    fn note(&self) -> String {
        let which = match &self.seqs[..] {
            [one] => format!("step {one} of this run"),
            seqs => format!("steps {} of this run", ranges(seqs)),
        };
        let when = match self.by {
            Some(seq) => format!("as step {seq}'s changes were recorded"),
            None => "as the workspace was recorded before a call".to_string(),
        };
        format!(
            "undo: {which} can no longer be undone: the run's undo store reached \
             store_max_mb = {} MB {when}, so its oldest records were given up to make room \
             (`[undo] store_max_mb` in a policy file raises it)",
            self.limit / 1_000_000
        )
    }
}

/// `[3, 4, 5, 7]` as `3–5, 7`.
fn ranges(seqs: &[i64]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < seqs.len() {
        let mut j = i;
        while j + 1 < seqs.len() && seqs[j + 1] == seqs[j] + 1 {
            j += 1;
        }
        out.push(match j > i {
            true => format!("{}–{}", seqs[i], seqs[j]),
            false => seqs[i].to_string(),
        });
        i = j + 1;
    }
    out.join(", ")
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    #[test]
    fn step_numbers_are_said_as_ranges() {
        assert_eq!(super::ranges(&[3, 4, 5, 7]), "3–5, 7");
        assert_eq!(super::ranges(&[1, 3]), "1, 3");
    }
}
