//! Observers: a process-wide listener told of every record a [`Store`](crate::Store) writes,
//! after the write succeeded, so another sink (an OTLP exporter) sees what the trace holds
//! without corral's call paths knowing it exists.
//!
//! An observer runs on the writer's thread while the write's caller waits, so it must only
//! hand the record on (copy, queue) and never block on I/O. At most one is installed per
//! process, and it stays for the life of the process; with none installed each write pays
//! one atomic load.

use std::sync::{Arc, OnceLock};

use crate::records::{NewHandle, NewModelTurn, NewPolicyEvent, NewSandboxEvent};
use crate::{NewRun, NewStep, StepDone, StepIds};

/// What a trace observer is told. Every method defaults to doing nothing.
pub trait Observer: Send + Sync {
    /// A run began.
    fn run_begun(&self, _run: &NewRun) {}
    /// A run ended: `how` is `closed`, `dropped`, `error`, `panic`, `signal`, ...
    fn run_ended(&self, _run_id: &str, _ended_at_ms: i64, _how: &str) {}
    /// A tool call began.
    fn step_begun(&self, _ids: StepIds, _step: &NewStep) {}
    /// A tool call ended (again, when a step is finished twice).
    fn step_finished(&self, _step_id: i64, _done: &StepDone) {}
    /// A policy decision.
    fn policy_event(&self, _event: &NewPolicyEvent) {}
    /// A sandbox row of `kind`: `layer` for a call's layers (and suspected denials),
    /// `gate_output`, `gate_phase_failed`, ... for a verification gate.
    fn sandbox_event(&self, _event: &NewSandboxEvent, _kind: &str) {}
    /// A task run's model turn (`at_ms` is when it was sent).
    fn model_turn(&self, _turn: &NewModelTurn) {}
    /// A background handle started.
    fn handle_started(&self, _handle: &NewHandle) {}
    /// A background handle ended: `how` is `exited`, `killed`, `run_ended`, `orphaned`.
    fn handle_ended(
        &self,
        _run_id: &str,
        _handle: u32,
        _ended_at_ms: i64,
        _how: &str,
        _exit_code: Option<i32>,
        _signal: Option<i32>,
    ) {
    }
}

static OBSERVER: OnceLock<Arc<dyn Observer>> = OnceLock::new();

/// Install the process's observer. Returns it back when one is already installed.
pub fn set_observer(observer: Arc<dyn Observer>) -> Result<(), Arc<dyn Observer>> {
    OBSERVER.set(observer)
}

/// Tell the installed observer, if any.
pub(crate) fn notify(f: impl FnOnce(&dyn Observer)) {
    if let Some(o) = OBSERVER.get() {
        f(o.as_ref());
    }
}
