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

use crate::ctx::Ctx;
use crate::error::Result;

/// How long the end of a run keeps trying to write what is kept past another writer's lock.
const PATIENCE_FOR_A_LOCK: Duration = Duration::from_secs(60);
/// And past a full disk.
const PATIENCE_FOR_SPACE: Duration = Duration::from_secs(2);

impl Ctx {
    /// Record the end of step `id`, in one transaction with the rows kept for it (see
    /// [`Self::with_step_end`]), or keep the end for later if the store cannot take it
    /// now.
    pub(crate) fn record_end(&self, id: i64, done: StepDone) -> Result<()> {
        let rows = self.take_step_rows(id);
        let _ = self.flush_pending();
        let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        if !pending.is_empty() {
            // Keep the order: an earlier end still waits. The rows need no order.
            let _ = self.write_rows(&rows);
            pending.push((id, done));
            return Ok(());
        }
        let written = self.store().batch(|store| {
            record_rows(store, &rows)?;
            store.finish_step(id, &done)
        });
        match written {
            Ok(()) => Ok(()),
            Err(e) if e.is_transient() => {
                pending.push((id, done));
                Ok(())
            }
            // A row the store would not take must not cost the step its end.
            Err(_) if !rows.is_empty() => self.store().finish_step(id, &done).map_err(Into::into),
            Err(e) => Err(e.into()),
        }
    }

    /// Keep `rows` (of a call still running) to be written with its step's end: one
    /// commit for both, where each was a commit of its own. What a crash in between
    /// loses is what the next opener's `aborted` end says anyway: the call did not end.
    pub(crate) fn with_step_end(&self, rows: Vec<corral_trace::NewSandboxEvent>) {
        self.step_rows
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .extend(rows);
    }

    /// The rows kept for step `id`'s end.
    fn take_step_rows(&self, id: i64) -> Vec<corral_trace::NewSandboxEvent> {
        let mut kept = self.step_rows.lock().unwrap_or_else(|e| e.into_inner());
        if kept.is_empty() {
            return Vec::new();
        }
        let (mine, others) = std::mem::take(&mut *kept)
            .into_iter()
            .partition(|row| row.step_id == Some(id));
        *kept = others;
        mine
    }

    /// Write `rows` in one transaction of their own.
    pub(crate) fn write_rows(
        &self,
        rows: &[corral_trace::NewSandboxEvent],
    ) -> std::result::Result<(), corral_trace::TraceError> {
        if rows.is_empty() {
            return Ok(());
        }
        self.store().batch(|store| record_rows(store, rows))
    }

    /// Write what is kept, in order, as far as the store takes it now; the error that
    /// stopped it, if one did.
    pub(crate) fn flush_pending(&self) -> Option<corral_trace::TraceError> {
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
                Err(e) => return Some(e),
            }
        }
        None
    }

    /// At the end of a run: keep trying for a while (a lock another writer holds is
    /// waited out for up to a minute; a full disk for a moment, since freeing space takes
    /// a person); whether everything was written.
    pub(crate) fn flush_pending_patiently(&self) -> bool {
        let started = Instant::now();
        loop {
            let Some(e) = self.flush_pending() else {
                return true;
            };
            let patience = if e.is_busy() {
                PATIENCE_FOR_A_LOCK
            } else {
                PATIENCE_FOR_SPACE
            };
            if started.elapsed() >= patience {
                return false;
            }
            // Each attempt on a lock already waits out SQLite's busy timeout.
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

/// Write `rows` in the transaction `store` is in, or in one each.
fn record_rows(
    store: &corral_trace::Store,
    rows: &[corral_trace::NewSandboxEvent],
) -> std::result::Result<(), corral_trace::TraceError> {
    rows.iter()
        .try_for_each(|row| store.record_sandbox_event(row).map(drop))
}
