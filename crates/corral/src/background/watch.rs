//! Protected paths a handle's commands create while it runs.
//!
//! A foreground call's new `.git` or `corral.toml` is noticed when the call ends (see
//! `sandbox::appeared`). A handle has no such end the model waits for: a `shell_start` of
//! `sleep 2; git init; git config core.fsmonitor …` would plant its `.git` after its
//! start returned, and the person's next `git status` would run it. So the protected
//! paths absent when a handle starts are watched while it lives: after every call of the
//! run, and as the run ends, what appeared is moved out (git metadata) or reported, in
//! the handle's step's trace rows and in the next call result or poll the model reads.
//!
//! A handle's last look comes after its end, and its end is when nothing of its unit
//! runs, not when its watcher thread returns: a killed PID namespace empties after its
//! init was signalled, a killed cgroup as its members die. So a handle stays watched until
//! its unit's [`Remains`](crate::spawn::Remains) say nothing runs, and the run's end waits
//! for that (at most [`Run::settle_handles`]'s limit) before its last sweep.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::Run;
use crate::handle::HandleState;
use crate::handle::table::Found;
use crate::outcome::StepRef;
use crate::sandbox::Level;
use crate::sandbox::appeared::{Absent, Watched};
use crate::spawn::RemainsSlot;

impl Run {
    /// Watch what was absent (`absent`) when `handle` (step `step`) started.
    pub(crate) fn watch_protected(&self, handle: u32, step: StepRef, absent: Absent) {
        let remains = match self.find(handle) {
            Ok(Found::Live(live)) => Some(std::sync::Arc::clone(&live.remains)),
            _ => None,
        };
        self.ctx
            .watched
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(Watched {
                handle,
                step,
                absent,
                remains,
            });
    }

    /// The copies of the files host programs run that `handle` started with.
    pub(crate) fn take_handle_held(&self, handle: u32) -> Option<crate::autorun::copies::Copies> {
        let mut all = self
            .ctx
            .handle_held
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let at = all.iter().position(|(h, _)| *h == handle)?;
        Some(all.swap_remove(at).1)
    }

    /// Wait, at most `limit` for them all, until nothing of the watched handles' units
    /// runs (each handle ended first: see [`Run::end_handles`]). Each handle whose
    /// processes are still there past it is recorded as a sandbox event; `true` if any
    /// was, and then the caller sweeps again once it has nothing else left to do.
    pub(crate) fn settle_handles(&self, limit: Duration) -> bool {
        let waiting: Vec<(u32, StepRef, Arc<RemainsSlot>)> = self
            .ctx
            .watched
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .filter_map(|w| Some((w.handle, w.step, Arc::clone(w.remains.as_ref()?))))
            .collect();
        let until = Instant::now() + limit;
        let mut late = false;
        for (handle, step, remains) in waiting {
            if !remains.ended_by(until) {
                late = true;
                self.record_protected(
                    step,
                    Level::Partial,
                    format!(
                        "handle {handle}: processes still present after {} s",
                        limit.as_secs()
                    ),
                );
            }
        }
        late
    }

    /// Move out or report what the watched handles' commands created; stop watching the
    /// handles that have ended and of whose units nothing runs (after this last look).
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
                self.record_protected(
                    w.step,
                    layer.level,
                    format!("handle {}: {}", w.handle, layer.detail),
                );
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
            let held = self.take_handle_held(w.handle);
            if let (Some(held), Some(state)) = (&held, self.ctx.state_dir()) {
                let store = crate::held::HeldStore::in_state_dir(&state);
                let mut settled =
                    held.settle(&store, &self.ctx.id, w.step.seq, &self.ctx.nested_git);
                // Asked in the answer to the request this sweep follows.
                self.ctx.ask_held(&store, &mut settled);
                if let Some(line) = settled.line() {
                    self.ctx
                        .swept
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .push(format!("{line} (by handle {})", w.handle));
                }
            }
            let running = matches!(
                self.find(w.handle),
                Ok(Found::Live(live)) if live.progress().state == HandleState::Running
            );
            // Its unit's drop fills the slot (before the handle reads as ended).
            let ended = match &w.remains {
                Some(remains) => remains.ended_by(Instant::now()),
                None => !running,
            };
            if !ended {
                // Its copies stay until its last sweep.
                if let Some(held) = held {
                    self.ctx
                        .handle_held
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .push((w.handle, held));
                }
                kept.push(w);
            }
        }
        self.ctx
            .watched
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .extend(kept);
    }

    /// A `protected paths` row of the sandbox's events, for step `step`.
    fn record_protected(&self, step: StepRef, level: Level, detail: String) {
        let sandbox = &self.ctx.config.sandbox;
        let _ = self
            .ctx
            .store()
            .record_sandbox_event(&corral_trace::NewSandboxEvent {
                run_id: self.ctx.id.clone(),
                step_id: Some(step.id),
                at_ms: crate::clock::now_ms(),
                mode: sandbox.mode.name().into(),
                network: sandbox.network,
                layer: "protected paths".into(),
                level: level.name().into(),
                detail,
            });
    }
}
