//! The record after a call, made on a thread of its own so the call's result does not
//! wait for it: a call that changed nothing (the change flag's queue is empty) is settled
//! at once, on the call's thread; one that may have changed something has its step
//! marked pending in the trace, and the thread walks what changed, stores it and writes
//! the step's rows in place of the mark.
//!
//! Every record waits first for the records still being made (so the next call's record
//! before it, a handle's, the run's end, all see the previous call's finished), and
//! `corral undo` in another process waits for a step's mark to go (see `restore`).

use std::sync::{Arc, Condvar, Mutex};

use corral_trace::Store;

use super::Recorder;
use super::tree::Tree;

/// How many records after calls are still being made, each on a thread of its own (a
/// call's record before it waits for the last one's, so there is seldom more than one,
/// and none is left behind once they are made).
#[derive(Debug, Default)]
pub(crate) struct After {
    inflight: Mutex<usize>,
    idle: Condvar,
}

/// One call's record after it.
struct Job {
    recorder: Arc<Recorder>,
    store: Arc<Mutex<Store>>,
    run_id: String,
    step_id: i64,
    before: Arc<Tree>,
}

impl After {
    /// Wait until no record after a call is being made.
    pub(crate) fn wait(&self) {
        let mut inflight = self.inflight.lock().unwrap_or_else(|e| e.into_inner());
        while *inflight > 0 {
            inflight = self.idle.wait(inflight).unwrap_or_else(|e| e.into_inner());
        }
    }

    fn done(&self) {
        let mut inflight = self.inflight.lock().unwrap_or_else(|e| e.into_inner());
        *inflight = inflight.saturating_sub(1);
        self.idle.notify_all();
    }
}

/// Record what step `step_id` changed since `before`: at once when the change flag saw
/// nothing, else on a thread of its own, the step marked pending until then.
pub(crate) fn record_after(
    recorder: &Arc<Recorder>,
    store: &Arc<Mutex<Store>>,
    run_id: &str,
    step_id: i64,
    before: Arc<Tree>,
) -> Result<(), corral_trace::TraceError> {
    if !recorder.maybe_changed() {
        return Ok(());
    }
    store
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .mark_step_files_pending(run_id, step_id)?;
    let job = || Job {
        recorder: Arc::clone(recorder),
        store: Arc::clone(store),
        run_id: run_id.to_string(),
        step_id,
        before: Arc::clone(&before),
    };
    *recorder
        .after
        .inflight
        .lock()
        .unwrap_or_else(|e| e.into_inner()) += 1;
    let on_thread = job();
    let started = std::thread::Builder::new()
        .name("corral-undo-record".into())
        .spawn(move || {
            run(&on_thread);
            on_thread.recorder.after.done();
        });
    // No thread to be had: made here, the result waiting for it as it did before.
    if started.is_err() {
        run(&job());
        recorder.after.done();
    }
    Ok(())
}

/// Make `job`'s record and write its rows in place of the mark (none when it failed:
/// the run is told on its next call, as for any record that failed).
fn run(job: &Job) {
    // The store's lock, where the record walked, is let go once the rows are written.
    let (after, _held) = job.recorder.record_now(Some(job.step_id));
    let rows = after
        .map(|after| super::step_files(&job.before, &after))
        .unwrap_or_default();
    let store = job.store.lock().unwrap_or_else(|e| e.into_inner());
    let _ = store.replace_step_files(&job.run_id, job.step_id, &rows);
}
