//! What a handle changes belongs to its `shell_start` step (or to the call that yielded
//! it): recorded when it starts, again at each poll while it runs and at its end, each
//! time as everything that differs from the record made as it started.
//!
//! A handle runs beside other calls: a file a foreground call changed while the handle
//! ran is in both steps' rows. Undoing either checks the file is as that step last saw
//! it, so neither undo overwrites what the other did since.

use std::sync::{Arc, Mutex};

use corral_trace::{Store, TraceError};

use super::Recorder;
use super::tree::Tree;

/// A handle's step and the record its changes are measured from.
#[derive(Debug)]
pub(crate) struct HandleFiles {
    recorder: Arc<Recorder>,
    run_id: String,
    step_id: i64,
    base: Arc<Tree>,
    /// The record the step's rows were last written from: one update at a time (a poll's
    /// and the end's may race), and none when nothing changed since.
    last: Mutex<Arc<Tree>>,
}

impl HandleFiles {
    /// Record the workspace as a handle of step `step_id` starts; `None` when it cannot
    /// be recorded (said on the next call that records).
    pub(crate) fn start(recorder: &Arc<Recorder>, run_id: &str, step_id: i64) -> Option<Self> {
        let base = recorder.record()?;
        // Its rows are written again at each poll: never given up while it runs.
        recorder.records.handle(step_id, true);
        Some(HandleFiles {
            recorder: Arc::clone(recorder),
            run_id: run_id.to_string(),
            step_id,
            last: Mutex::new(Arc::clone(&base)),
            base,
        })
    }

    /// Record the workspace now, and make the step's rows what changed since the handle
    /// started.
    pub(crate) fn update(&self, store: &Mutex<Store>) -> Result<(), TraceError> {
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        // The store's lock, where the record walked, is let go once the rows are written.
        let (now, _held) = self.recorder.record_held(Some(self.step_id));
        let Some(now) = now else {
            return Ok(());
        };
        if Arc::ptr_eq(&now, &last) {
            return Ok(());
        }
        let rows = super::step_files(&self.base, &now);
        store
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .replace_step_files(&self.run_id, self.step_id, &rows)?;
        *last = now;
        Ok(())
    }
}

impl Drop for HandleFiles {
    /// The handle's step may be given up once the handle is gone.
    fn drop(&mut self) {
        self.recorder.records.handle(self.step_id, false);
    }
}
