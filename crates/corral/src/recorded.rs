//! A call between two records of the workspace (see [`crate::undo`]): recorded before it
//! runs unless its plan is entirely known-safe and read-only, and after it, so the step's
//! `step_files` rows say what it added, modified and deleted (the record after it made on
//! a thread of its own, so the call's result does not wait for it).

use std::sync::atomic::Ordering;

use crate::ctx::Ctx;
use crate::error::Result;
use crate::outcome::StepRef;
use crate::plan::Plan;

/// Whether a plan may change a file (see [`Plan::may_write`]).
pub(crate) fn may_write(plan: &Plan) -> bool {
    plan.may_write()
}

impl Ctx {
    /// Run `call` between two records of the workspace when `writes`, and record what it
    /// changed as the step's files. With its result, what the run must be told (once) when
    /// the workspace could not be recorded.
    pub(crate) fn recorded<T>(
        &self,
        step: StepRef,
        writes: bool,
        call: impl FnOnce() -> Result<T>,
    ) -> Result<(T, Option<String>)> {
        if !writes {
            return call().map(|value| (value, None));
        }
        let Some(recorder) = self.recorder.as_ref() else {
            let said = self.record_off_said.swap(true, Ordering::Relaxed);
            let note =
                (!said).then(|| format!("undo: this call's changes cannot be undone: {OFF}"));
            return call().map(|value| (value, note));
        };
        self.recorder_hiding(recorder);
        let before = recorder.record();
        let result = call();
        // What it changed is walked and stored on a thread of its own: the result does
        // not wait for it, the next record does (see `undo::after`).
        if let Some(before) = before {
            crate::undo::record_after(recorder, &self.store, &self.id, step.id, before)?;
        }
        Ok((result?, recorder.untold()))
    }
}

impl Ctx {
    /// `recorder`, told what the run's box hides (the same sets the file tools take), so
    /// its walk leaves that out: every record of a call comes through here or after it.
    fn recorder_hiding<'r>(
        &self,
        recorder: &'r crate::undo::Recorder,
    ) -> &'r crate::undo::Recorder {
        recorder.tracing(&self.store, &self.id);
        recorder.hiding(|| {
            crate::sandbox::sets::Sets::for_own_process(
                &self.config.sandbox,
                &self.workspace,
                &self.sandbox,
            )
        });
        recorder
    }
}

/// Why nothing is recorded in a run whose recording is off.
const OFF: &str = "recording for undo is off in this run";

impl Ctx {
    /// Why the changes of a call that `writes` cannot be recorded for undo, when they
    /// cannot. The record before the call is made now, so the gate knows: the call's own
    /// record then reuses it (the change flag has seen nothing since, or only what
    /// changed while a person was asked).
    pub(crate) fn unrecorded(&self, writes: bool) -> Option<String> {
        if !writes {
            return None;
        }
        match &self.recorder {
            None => Some(OFF.to_string()),
            Some(recorder) => match self.recorder_hiding(recorder).record() {
                Some(_) => None,
                None => recorder.cannot(),
            },
        }
    }
}

/// Add `note` to the end of `text` as a line of its own.
pub(crate) fn with_note(text: &mut String, note: Option<String>) {
    if let Some(note) = note {
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&note);
        text.push('\n');
    }
}
