//! The `undo` tool's call (`corral mcp --undo-tool`): a step of this run put back, as
//! `corral undo STEP` would, itself a step whose changes a person can undo in turn.

use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

use crate::ctx::Ctx;
use crate::error::{Error, Result};
use crate::files::FileOutcome;
use crate::undo::{UndoPlan, UndoRequest, UndoTarget};

impl Ctx {
    /// Undo `request.step` (a step of this run, by the id its result gave), or the
    /// newest step of this run that changed files and is not back as it was.
    pub(crate) fn undo(&self, request: &UndoRequest) -> Result<FileOutcome> {
        let call_json = serde_json::to_string(request).unwrap_or_default();
        let dir = crate::undo::store_dir(self.store().path());
        self.file_step("undo", call_json, |_| {
            let target = match request.step {
                None => UndoTarget::LastOfRun(self.id.clone()),
                Some(id) => {
                    let row = self.store().step(id)?;
                    if row.is_none_or(|row| row.run_id != self.id) {
                        return Err(Error::invalid(format!(
                            "step {id} is not a call of this run: send the step a result of \
                             this run gave, or no step for the last call that changed files"
                        )));
                    }
                    UndoTarget::Step(id)
                }
            };
            let plan = crate::undo::plan(&self.store(), &dir, &target)?;
            let dry_run = request.dry_run.unwrap_or(false);
            if !dry_run {
                // Nothing the run's box hides or keeps read-only is written back.
                let sets = crate::sandbox::sets::Sets::for_own_process(
                    &self.config.sandbox,
                    &self.workspace,
                    &self.sandbox,
                );
                crate::undo::apply_within(&plan, &dir, &sets)?;
            }
            Ok(listing(&plan, dry_run))
        })
    }
}

/// What an undo put back, one line a file.
fn listing(plan: &UndoPlan, dry_run: bool) -> String {
    let show = |p: &PathBuf| String::from_utf8_lossy(p.as_os_str().as_bytes()).into_owned();
    let (restore, remove) = if dry_run {
        ("would restore", "would remove")
    } else {
        ("restored", "removed")
    };
    let mut text = String::new();
    for p in &plan.conflicts {
        text.push_str(&format!("changed since, not undone: {}\n", show(p)));
    }
    for p in &plan.restore {
        text.push_str(&format!("{restore} {}\n", show(p)));
    }
    for p in &plan.remove {
        text.push_str(&format!("{remove} {}\n", show(p)));
    }
    if plan.is_empty() && plan.conflicts.is_empty() {
        text.push_str("nothing to undo\n");
    }
    text
}
