//! Protected paths a handle's commands create while it runs.
//!
//! A foreground call's new `.git` or `corral.toml` is noticed when the call ends (see
//! `sandbox::appeared`). A handle has no such end the model waits for: a `shell_start` of
//! `sleep 2; git init; git config core.fsmonitor …` would plant its `.git` after its
//! start returned, and the person's next `git status` would run it. So the protected
//! paths absent when a handle starts are watched while it lives: after every call of the
//! run, and as the run ends, what appeared is moved out (git metadata) or reported, in
//! the handle's step's trace rows and in the next call result or poll the model reads.

use crate::Run;
use crate::handle::HandleState;
use crate::handle::table::Found;
use crate::outcome::StepRef;
use crate::sandbox::appeared::{Absent, Watched};

impl Run {
    /// Watch what was absent (`absent`) when `handle` (step `step`) started.
    pub(crate) fn watch_protected(&self, handle: u32, step: StepRef, absent: Absent) {
        self.ctx
            .watched
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(Watched {
                handle,
                step,
                absent,
            });
    }

    /// Move out or report what the watched handles' commands created; stop watching the
    /// handles that have ended (after this last look).
    pub(crate) fn sweep_handles(&self) {
        let watched: Vec<Watched> =
            std::mem::take(&mut *self.ctx.watched.lock().unwrap_or_else(|e| e.into_inner()));
        if watched.is_empty() {
            return;
        }
        let mut kept = Vec::new();
        for w in watched {
            if let Some((lines, layer)) = w.absent.sweep(self.ctx.quarantine_dir(w.step).as_deref())
            {
                let sandbox = &self.ctx.config.sandbox;
                let _ = self
                    .ctx
                    .store()
                    .record_sandbox_event(&corral_trace::NewSandboxEvent {
                        run_id: self.ctx.id.clone(),
                        step_id: Some(w.step.id),
                        at_ms: crate::clock::now_ms(),
                        mode: sandbox.mode.name().into(),
                        network: sandbox.network,
                        layer: "protected paths".into(),
                        level: layer.level.name().into(),
                        detail: format!("handle {}: {}", w.handle, layer.detail),
                    });
                self.ctx
                    .swept
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .extend(
                        lines
                            .into_iter()
                            .map(|l| format!("{l} (by handle {})", w.handle)),
                    );
            }
            let running = matches!(
                self.find(w.handle),
                Ok(Found::Live(live)) if live.progress().state == HandleState::Running
            );
            if running {
                kept.push(w);
            }
        }
        self.ctx
            .watched
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .extend(kept);
    }
}
