//! Step ends that could not be written yet.
//!
//! A call that ran has a result, and its step's end must reach the trace even when the
//! store is locked by another writer for longer than SQLite waits, or the disk is full for
//! a moment. Such a write is kept here and made again before the next call, and with more
//! patience when the run ends; the call's result is returned meanwhile. If the owner dies
//! with a write still kept, the next corral to open the store closes the step as
//! `aborted` with the output its capture files hold.

use std::time::{Duration, Instant};

use corral_trace::StepDone;

use crate::error::Result;
use crate::run::Run;

/// How long the end of a run keeps trying to write what is kept.
const PATIENCE_AT_END: Duration = Duration::from_secs(60);

impl Run {
    /// Record the end of step `id`, or keep it for later if the store cannot take it now.
    pub(crate) fn record_end(&self, id: i64, done: StepDone) -> Result<()> {
        self.flush_pending();
        let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        if !pending.is_empty() {
            // Keep the order: an earlier end still waits.
            pending.push((id, done));
            return Ok(());
        }
        match self.store().finish_step(id, &done) {
            Ok(()) => Ok(()),
            Err(e) if e.is_transient() => {
                pending.push((id, done));
                Ok(())
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Write what is kept, in order, as far as the store takes it now.
    pub(crate) fn flush_pending(&self) {
        let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        while let Some((id, done)) = pending.first() {
            match self.store().finish_step(*id, done) {
                Ok(()) => {
                    pending.remove(0);
                }
                // A permanent failure (the row is gone) cannot be helped by waiting.
                Err(e) if !e.is_transient() => {
                    pending.remove(0);
                }
                Err(_) => return,
            }
        }
    }

    /// At the end of a run: keep trying for a while; whether everything was written.
    pub(crate) fn flush_pending_patiently(&self) -> bool {
        let until = Instant::now() + PATIENCE_AT_END;
        loop {
            self.flush_pending();
            let empty = self
                .pending
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .is_empty();
            if empty || Instant::now() >= until {
                return empty;
            }
            // Each attempt already waits out SQLite's busy timeout; a full disk does not.
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}
