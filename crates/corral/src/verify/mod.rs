//! The verification gate: what decides that a run is done.
//!
//! Each phase runs in order, through the same plan, policy check and containment as
//! `exec`, but in the gate's own sandbox (by default `workspace-write` with the network
//! off), whatever sandbox the run's own commands use: a gate that could reach the network
//! or write outside the workspace could pass for reasons the workspace does not hold.
//! The first phase that does not exit as expected fails the gate; later phases do not
//! run. A failing phase leaves two `sandbox_events` rows on its step:
//! `kind = 'gate_output'` (what it printed, head and tail) and
//! `kind = 'gate_phase_failed'` (which phase, and how it ended).
//!
//! A workspace with a Python virtual environment (`.venv`) runs its phases with it
//! activated (see [`venv`]).

use std::time::Duration;

use serde::Serialize;

use corral_trace::NewSandboxEvent;

mod phase;
pub mod venv;

use crate::call::CallOptions;
use crate::cancel::Cancel;
use crate::clock::now_ms;
use crate::ctx::Ctx;
use crate::error::{ErrorKind, Result};
use crate::outcome::Status;
use crate::request::ExecRequest;
use crate::sandbox::SandboxConfig;
pub use phase::Verification;

/// How one phase of the gate went.
#[derive(Debug, Clone, Serialize)]
pub struct PhaseResult {
    /// 1-based.
    pub phase: usize,
    /// What it ran.
    pub verification: Verification,
    /// It exited as expected.
    pub passed: bool,
    /// How the command ended; `None` when it did not start (refused, or a sandbox the
    /// host cannot enforce).
    pub status: Option<Status>,
    /// Its step in the trace.
    pub step: Option<i64>,
    /// What it printed (head and tail), or why it did not start.
    pub observation: String,
}

/// The gate's verdict.
#[derive(Debug, Clone, Serialize)]
pub struct GateVerdict {
    /// Every phase passed.
    pub passed: bool,
    /// The phases that ran, in order (a failed one is last).
    pub phases: Vec<PhaseResult>,
    /// How many phases the gate has.
    pub total: usize,
}

impl GateVerdict {
    /// The phase that failed, if one did.
    pub fn failed(&self) -> Option<&PhaseResult> {
        self.phases.iter().find(|p| !p.passed)
    }

    /// One line: `passed (2 phases)` or `failed at phase 2 of 2 (cargo test): exit 101, expected 0`.
    pub fn summary(&self) -> String {
        match self.failed() {
            None => format!(
                "passed ({} phase{})",
                self.total,
                if self.total == 1 { "" } else { "s" }
            ),
            Some(p) => format!(
                "failed at phase {} of {} ({}): {}",
                p.phase,
                self.total,
                p.verification.describe(),
                how(p)
            ),
        }
    }

    /// What the model reads after asking for the gate.
    pub fn observation(&self) -> String {
        match self.failed() {
            None => format!("The verification gate {}.", self.summary()),
            Some(p) => format!(
                "The verification gate {}. The run is not done.\n{}\nFind out why, fix it, and call done again.",
                self.summary(),
                p.observation.trim_end()
            ),
        }
    }
}

fn how(p: &PhaseResult) -> String {
    let Verification::Command { expect_exit, .. } = &p.verification;
    match &p.status {
        Some(Status::Exited { code }) => format!("exit {code}, expected {expect_exit}"),
        Some(Status::TimedOut { after }) => format!("timed out after {after:?}"),
        Some(Status::Signaled { signal }) => format!("ended by signal {signal}"),
        Some(Status::Unavailable { reason, .. }) => format!("not started: {reason}"),
        Some(other) => other.outcome().replace('_', " "),
        // What stopped it, as its refusal says it: `not approved: …`, `refused by policy: …`.
        None => {
            let why = p.observation.trim_start_matches("error: ");
            let first = why.split_once(". ").map_or(why, |(first, _)| first);
            format!("not started: {}", first.trim_end_matches('.'))
        }
    }
}

impl Ctx {
    /// [`Run::verify`](crate::Run::verify) for a gate a person set (`--verify`, the task contract, a trusted
    /// `[verify]`): what the policy would ask about runs, recorded as approved by
    /// `approved_by`; a deny still refuses. When `interrupt` fires, the running phase
    /// ends ([`Status::Cancelled`]) and no later phase starts.
    pub(crate) fn verify_approved(
        &self,
        phases: &[Verification],
        sandbox: &SandboxConfig,
        timeout: Duration,
        approved_by: Option<&str>,
        interrupt: Option<&Cancel>,
    ) -> Result<GateVerdict> {
        let mut results = Vec::new();
        let venv = venv::find(&self.workspace);
        for (i, phase) in phases.iter().enumerate() {
            if interrupt.is_some_and(Cancel::is_cancelled) {
                break;
            }
            let Verification::Command { argv, expect_exit } = phase;
            let request = ExecRequest::new(argv.clone()).timeout(timeout);
            let call_json = serde_json::json!({
                "phase": i + 1,
                "argv": argv,
                "expect_exit": expect_exit,
            })
            .to_string();
            let ran = self.checked(
                "verify",
                call_json,
                None,
                |cwd| {
                    let mut prepared = self.prepare_exec_in(&request, cwd, |env| {
                        if let Some(venv) = &venv {
                            venv::activate(env, venv);
                        }
                    })?;
                    prepared.approved_by = approved_by.map(str::to_string);
                    Ok(prepared)
                },
                |prepared, step| {
                    let options = CallOptions {
                        cancel: interrupt.cloned(),
                        ..CallOptions::default()
                    };
                    let outcome = self.run_plan(
                        prepared,
                        step,
                        options,
                        sandbox,
                        crate::spawn::NamespaceAhead::default(),
                    )?;
                    self.sandbox_with_end(step, outcome.sandbox.as_ref());
                    Ok(outcome)
                },
                |outcome| crate::call::done("exec", outcome),
            );
            let result = match ran {
                Ok(outcome) => PhaseResult {
                    phase: i + 1,
                    verification: phase.clone(),
                    passed: outcome.status == Status::Exited { code: *expect_exit },
                    status: Some(outcome.status.clone()),
                    step: Some(outcome.step.id),
                    observation: outcome.observation,
                },
                Err(e) if matches!(e.kind(), ErrorKind::Closed | ErrorKind::Store) => {
                    return Err(e);
                }
                Err(e) => PhaseResult {
                    phase: i + 1,
                    verification: phase.clone(),
                    passed: false,
                    status: None,
                    step: self.last_step_id(),
                    observation: format!("error: {e}"),
                },
            };
            let passed = result.passed;
            if !passed {
                self.record_gate_failure(&result, phases.len(), sandbox)?;
            }
            results.push(result);
            if !passed {
                break;
            }
        }
        Ok(GateVerdict {
            passed: results.len() == phases.len() && results.iter().all(|r| r.passed),
            phases: results,
            total: phases.len(),
        })
    }

    fn last_step_id(&self) -> Option<i64> {
        self.store()
            .steps(Some(&self.id), 1)
            .ok()
            .and_then(|s| s.first().map(|s| s.id))
    }

    fn record_gate_failure(
        &self,
        result: &PhaseResult,
        total: usize,
        sandbox: &SandboxConfig,
    ) -> Result<()> {
        let event = |detail: String| NewSandboxEvent {
            run_id: self.id.clone(),
            step_id: result.step,
            at_ms: now_ms(),
            mode: sandbox.mode.name().into(),
            network: sandbox.network || !sandbox.mode.is_sandboxed(),
            layer: "gate".into(),
            level: "failed".into(),
            detail,
        };
        let store = self.store();
        store.record_sandbox_event_of_kind(&event(result.observation.clone()), "gate_output")?;
        store.record_sandbox_event_of_kind(
            &event(format!(
                "phase {} of {total} ({}): {}",
                result.phase,
                result.verification.describe(),
                how(result)
            )),
            "gate_phase_failed",
        )?;
        Ok(())
    }
}
