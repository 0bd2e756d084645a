//! A foreground call in its sandbox, the record of what the sandbox enforced, and, in the
//! `on-failure` approval mode, the approver's chance to run a suspected denial again
//! without the sandbox.

use corral_policy::{Act, ApprovalMode, Decision, Effect, Why};
use corral_trace::{NewPolicyEvent, NewSandboxEvent};

use super::{SandboxConfig, SandboxMode, SandboxReport};
use crate::approve::{Approval, ApprovalRequest, AskedItem};
use crate::call::Prepared;
use crate::error::Result;
use crate::exec::CallOptions;
use crate::outcome::{Outcome, StepRef};
use crate::run::{Run, now_ms};

impl Run {
    /// Run `prepared` in the run's sandbox; on a suspected denial in `on-failure` mode,
    /// ask whether to run it again without the sandbox.
    pub(crate) fn run_sandboxed(
        &self,
        prepared: Prepared,
        step: StepRef,
        options: CallOptions,
    ) -> Result<Outcome> {
        let config = &self.config.sandbox;
        let retry_input = (self.gate.mode == ApprovalMode::OnFailure && config.mode.is_sandboxed())
            .then(|| prepared.clone());
        let cancel = options.cancel.clone();
        let outcome = self.run_plan(prepared, step, options, config)?;
        self.record_sandbox(step, outcome.sandbox.as_ref())?;
        let (Some(retry), Some(report)) = (retry_input, outcome.sandbox.as_ref()) else {
            return Ok(outcome);
        };
        let Some(denial) = report.suspected_denial.clone() else {
            return Ok(outcome);
        };
        let Some(stage) = retry.plan.stages().next() else {
            return Ok(outcome);
        };
        let target = format!(
            "retry without the sandbox ({}): {}",
            report.mode,
            retry
                .line
                .clone()
                .unwrap_or_else(|| corral_line::display_argv(&stage.argv))
        );
        let item = AskedItem {
            act: Act::Exec,
            argv: stage.argv.clone(),
            program: stage.program.as_ref().ok().cloned(),
            cwd: stage.cwd.clone(),
            path: None,
            decision: Decision {
                effect: Effect::Ask,
                act: Act::Exec,
                target: target.clone(),
                rule: None,
                why: Why::ActDefault,
                via: Vec::new(),
                wrapper: false,
            },
        };
        let request = ApprovalRequest {
            tool: "retry-unsandboxed".into(),
            line: retry.line.clone(),
            items: vec![item],
        };
        let answer = self.gate.approver.approve(&request, &self.workspace);
        let approved = matches!(
            answer,
            Approval::Approve | Approval::ApproveForRun | Approval::ApprovePrefix(_)
        );
        let reason = match &answer {
            Approval::Deny(r) | Approval::Abort(r) => r.clone(),
            _ => None,
        };
        self.store().record_policy_event(&NewPolicyEvent {
            run_id: self.id.clone(),
            step_id: Some(step.id),
            at_ms: now_ms(),
            act: "exec".into(),
            target,
            effect: "ask".into(),
            rule: None,
            layer: Some("sandbox".into()),
            origin: None,
            decision: if approved {
                "retry_unsandboxed_approved"
            } else {
                "retry_unsandboxed_denied"
            }
            .into(),
            answered_by: Some(self.gate.approver.name().to_string()),
            reason: Some(reason.unwrap_or(denial)),
        })?;
        if !approved {
            return Ok(outcome);
        }
        let unsandboxed = SandboxConfig {
            mode: SandboxMode::Full,
            ..config.clone()
        };
        let options = CallOptions {
            cancel,
            ..CallOptions::default()
        };
        let mut again = self.run_plan(retry, step, options, &unsandboxed)?;
        if let Some(report) = again.sandbox.as_mut() {
            report.retried_unsandboxed = true;
            again.observation =
                again
                    .observation
                    .replacen('\n', &format!("\n{}\n", report.line()), 1);
        }
        self.record_sandbox(step, again.sandbox.as_ref())?;
        Ok(again)
    }

    /// One `sandbox_events` row per layer, and one for a suspected denial.
    pub(crate) fn record_sandbox(
        &self,
        step: StepRef,
        report: Option<&SandboxReport>,
    ) -> Result<()> {
        let Some(report) = report else {
            return Ok(());
        };
        let at_ms = now_ms();
        let event = |layer: &str, level: &str, detail: String| NewSandboxEvent {
            run_id: self.id.clone(),
            step_id: Some(step.id),
            at_ms,
            mode: report.mode.name().into(),
            network: report.network || !report.mode.is_sandboxed(),
            layer: layer.into(),
            level: level.into(),
            detail,
        };
        let store = self.store();
        let written = (|| {
            if report.layers.is_empty() {
                let detail = if report.retried_unsandboxed {
                    "retried without the sandbox, approved".to_string()
                } else {
                    format!("sandbox mode {}: corral applied none", report.mode)
                };
                store.record_sandbox_event(&event("mode", "none", detail))?;
            }
            for l in &report.layers {
                store.record_sandbox_event(&event(l.layer, l.level.name(), l.detail.clone()))?;
            }
            if let Some(denial) = &report.suspected_denial {
                store.record_sandbox_event(&event("denial", "suspected", denial.clone()))?;
            }
            Ok::<(), corral_trace::TraceError>(())
        })();
        match written {
            // The command ran: its result (which carries the same report) must not be
            // lost to a lock another writer holds or a full disk; these rows are.
            Err(e) if e.is_transient() => Ok(()),
            other => other.map_err(Into::into),
        }
    }
}
