//! A call between two records of the workspace (see [`crate::undo`]): recorded before it
//! runs unless its plan is entirely known-safe and read-only, and after it, so the step's
//! `step_files` rows say what it added, modified and deleted (the record after it made on
//! a thread of its own, so the call's result does not wait for it).

use corral_policy::safe::is_known_safe;

use crate::ctx::Ctx;
use crate::error::Result;
use crate::outcome::StepRef;
use crate::plan::{Plan, PlannedOp};

/// Whether a plan may change a file: any stage not on the known-safe list, or any
/// redirect that writes.
pub(crate) fn may_write(plan: &Plan) -> bool {
    plan.checked_stages().any(|stage| {
        !is_known_safe(&stage.argv)
            || stage
                .redirects
                .iter()
                .any(|r| matches!(r.op, PlannedOp::Write(_) | PlannedOp::Append(_)))
    })
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
        let Some(recorder) = self.recorder.as_ref().filter(|_| writes) else {
            return call().map(|value| (value, None));
        };
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
