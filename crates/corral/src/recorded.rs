//! A call between two records of the workspace (see [`crate::undo`]): recorded before it
//! runs unless its plan is entirely known-safe and read-only, and after it, so the step's
//! `step_files` rows say what it added, modified and deleted.

use corral_policy::safe::is_known_safe;

use crate::error::Result;
use crate::outcome::{Outcome, StepRef};
use crate::plan::{Plan, PlannedOp};
use crate::run::Run;

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

impl Run {
    /// Run `call` between two records of the workspace when `writes`; record what it
    /// changed as the step's files, and say on its result (once a run) when the
    /// workspace could not be recorded.
    pub(crate) fn recorded(
        &self,
        step: StepRef,
        writes: bool,
        call: impl FnOnce() -> Result<Outcome>,
    ) -> Result<Outcome> {
        let Some(recorder) = self.recorder.as_ref().filter(|_| writes) else {
            return call();
        };
        let before = recorder.record();
        let result = call();
        if let Some(before) = before
            && let Some(after) = recorder.record()
        {
            let rows = crate::undo::step_files(&before, &after);
            if !rows.is_empty() {
                self.store().record_step_files(&self.id, step.id, &rows)?;
            }
        }
        let mut outcome = result?;
        if let Some(note) = recorder.untold() {
            if !outcome.observation.ends_with('\n') {
                outcome.observation.push('\n');
            }
            outcome.observation.push_str(&note);
            outcome.observation.push('\n');
        }
        Ok(outcome)
    }
}
