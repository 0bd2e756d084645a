//! Where a file tool may reach, and who decides: the workspace, the sandbox's rules for
//! writes, and the policy's `read`/`write` rules with the approver, exactly as a
//! redirect is checked. Every file tool call is a step in the trace.

use std::path::{Path, PathBuf};
use std::time::Instant;

use corral_policy::{Act, Effect, Resolution};
use corral_trace::{NewPolicyEvent, NewStep, StepDone};

use crate::approve::{Approval, ApprovalRequest, AskedItem};
use crate::clock::now_ms;
use crate::error::{Error, ErrorKind, Result};
use crate::outcome::StepRef;
use crate::run::Run;
use crate::sandbox::SandboxMode;

/// What a file tool call produced: the text the model reads and the step it is.
#[derive(Debug, Clone, serde::Serialize)]
pub struct FileOutcome {
    /// Where the trace keeps this call.
    pub step: StepRef,
    /// The text the model reads.
    pub observation: String,
}

impl Run {
    /// The shared path of the file tools: a step row first, then `act`, then the row
    /// completed with its observation or its error.
    pub(crate) fn file_step(
        &self,
        tool: &str,
        call_json: String,
        act: impl FnOnce(StepRef) -> Result<String>,
    ) -> Result<FileOutcome> {
        self.ensure_open()?;
        let ids = self.store().begin_step(&NewStep {
            run_id: self.id.clone(),
            tool: tool.into(),
            call_json,
            cwd: self.workspace.display().to_string(),
            started_at_ms: self.stamp(),
        })?;
        let step = StepRef {
            id: ids.id,
            seq: ids.seq,
        };
        let started = Instant::now();
        let result = act(step);
        let (outcome, observation, error) = match &result {
            Ok(text) => ("ok", text.clone(), None),
            Err(e) if e.kind() == ErrorKind::Refused => {
                ("refused", format!("error: {e}"), Some(e.to_string()))
            }
            Err(e) => ("invalid", format!("error: {e}"), Some(e.to_string())),
        };
        self.store().finish_step(
            step.id,
            &StepDone {
                argv_json: "null".into(),
                duration_ms: started.elapsed().as_millis() as i64,
                outcome: outcome.into(),
                observation,
                error,
                ..StepDone::default()
            },
        )?;
        result.map(|observation| FileOutcome { step, observation })
    }

    /// Resolve `path` (relative to the workspace, or absolute inside it) through every
    /// part that exists, and confine it: inside the workspace, and for a write also
    /// outside the sandbox's protected paths and corral's own state, and allowed by the
    /// sandbox's mode (`read-only` writes nothing; `workspace-write` also writes its
    /// writable roots).
    pub(crate) fn resolve_file(&self, path: &str, writing: bool) -> Result<PathBuf> {
        if path.is_empty() {
            return Err(Error::invalid(
                "the path is empty: name a file relative to the workspace",
            ));
        }
        if path.contains('\0') {
            return Err(Error::invalid("the path contains a NUL byte: remove it"));
        }
        let joined = self.workspace.join(path);
        let resolved = crate::redirect::resolve_path(&joined).map_err(|e| {
            Error::invalid(format!(
                "{path} cannot be resolved ({}): name a path inside the workspace",
                crate::redirect::plain(&e)
            ))
        })?;
        let resolved = fold_dots(&resolved);
        let sandbox = &self.config.sandbox;
        let inside = resolved.starts_with(&self.workspace);
        let in_writable_root = writing
            && sandbox.mode == SandboxMode::WorkspaceWrite
            && sandbox
                .writable_roots
                .iter()
                .map(|r| {
                    let r = self.workspace.join(r);
                    r.canonicalize().unwrap_or(r)
                })
                .any(|r| resolved.starts_with(r));
        if !inside && !in_writable_root {
            return Err(Error::policy(format!(
                "{path} resolves to {}, outside the workspace {}: file tools reach only the workspace",
                resolved.display(),
                self.workspace.display()
            )));
        }
        if !writing {
            return Ok(resolved);
        }
        if sandbox.mode == SandboxMode::ReadOnly {
            return Err(Error::policy(format!(
                "{path} cannot be written: the run's sandbox is read-only. Nothing was changed."
            )));
        }
        if let Some(p) = sandbox.protected.iter().find(|p| {
            let p = self.workspace.join(p);
            resolved.starts_with(&p) || resolved.starts_with(p.canonicalize().unwrap_or(p.clone()))
        }) {
            return Err(Error::policy(format!(
                "{path} is under the protected path {p}, which stays read-only (it can run code or \
                 configures corral): change it yourself, or ask the operator. Nothing was changed."
            )));
        }
        if let Some(dir) = self.protected.iter().find(|p| resolved.starts_with(p)) {
            return Err(Error::policy(format!(
                "{path} is inside corral's own state ({}): nothing may write there",
                dir.display()
            )));
        }
        Ok(resolved)
    }

    /// Check every `(act, path)` against the policy before anything is touched: a deny
    /// refuses all of them, asks go to the approver in one request. Every refusal and
    /// answer is a row in `policy_events`.
    pub(crate) fn check_files(
        &self,
        tool: &str,
        step: StepRef,
        items: &[(Act, PathBuf)],
    ) -> Result<()> {
        let gate = &self.gate;
        let event = |act: Act,
                     path: &Path,
                     d: &corral_policy::Decision,
                     decision: &str,
                     by: &str,
                     reason: Option<String>| NewPolicyEvent {
            run_id: self.id.clone(),
            step_id: Some(step.id),
            at_ms: now_ms(),
            act: act.name().into(),
            target: path.display().to_string(),
            effect: d.effect.name().into(),
            rule: d.rule.as_ref().map(|r| r.pattern().to_string()),
            layer: d.rule.as_ref().map(|r| r.layer().to_string()),
            origin: d.rule.as_ref().map(|r| r.origin().to_string()),
            decision: decision.into(),
            answered_by: Some(by.into()),
            reason,
        };
        let mut asks = Vec::new();
        for (act, path) in items {
            let decision = gate.policy.check_path(*act, path);
            let resolution =
                corral_policy::resolve(gate.mode, decision.effect, false, decision.is_explicit());
            match resolution {
                Resolution::Refuse => {
                    let why = if decision.effect == Effect::Deny {
                        format!("refused by policy: {decision}")
                    } else {
                        format!(
                            "refused: it needs approval and the approval mode is `{}`: {decision}",
                            gate.mode
                        )
                    };
                    self.store().record_policy_event(&event(
                        *act,
                        path,
                        &decision,
                        "refused",
                        "policy",
                        Some(why.clone()),
                    ))?;
                    return Err(Error::policy(format!(
                        "{why}. Nothing was changed. Touch only what the policy allows, or ask the operator to allow it."
                    )));
                }
                Resolution::AskApprover => asks.push(AskedItem {
                    act: *act,
                    argv: vec![tool.to_string(), path.display().to_string()],
                    bytes: false,
                    program: None,
                    cwd: self.workspace.clone(),
                    path: Some(path.clone()),
                    decision,
                }),
                _ => {}
            }
        }
        let cache = gate.cache.lock().unwrap_or_else(|e| e.into_inner());
        let (cached, asks): (Vec<_>, Vec<_>) = asks.into_iter().partition(|i| cache.covers(i));
        drop(cache);
        for item in &cached {
            let path = item.path.as_deref().unwrap_or(Path::new(""));
            self.store().record_policy_event(&event(
                item.act,
                path,
                &item.decision,
                "approved_cached",
                "cache",
                None,
            ))?;
        }
        if asks.is_empty() {
            return Ok(());
        }
        let request = ApprovalRequest {
            tool: tool.into(),
            line: None,
            items: asks.clone(),
        };
        let answer = gate.approver.approve(&request, &self.workspace);
        let by = gate.approver.name().to_string();
        let (decision, reason) = match &answer {
            Approval::Approve => ("approved", None),
            Approval::ApproveForRun | Approval::ApprovePrefix(_) => ("approved_for_run", None),
            Approval::Deny(r) => (
                "denied",
                Some(r.clone().unwrap_or_else(|| "declined".into())),
            ),
            Approval::Abort(r) => (
                "aborted",
                Some(r.clone().unwrap_or_else(|| "aborted".into())),
            ),
        };
        for item in &asks {
            let path = item.path.as_deref().unwrap_or(Path::new(""));
            self.store().record_policy_event(&event(
                item.act,
                path,
                &item.decision,
                decision,
                &by,
                reason.clone(),
            ))?;
        }
        let question = request.question(&self.workspace);
        match answer {
            Approval::Approve => Ok(()),
            Approval::ApproveForRun | Approval::ApprovePrefix(_) => {
                let mut cache = gate.cache.lock().unwrap_or_else(|e| e.into_inner());
                asks.iter().for_each(|i| cache.remember(i));
                Ok(())
            }
            Approval::Deny(_) => Err(Error::policy(format!(
                "not approved: {question} ({by}: {}). Nothing was changed.",
                reason.unwrap_or_default()
            ))),
            Approval::Abort(_) => {
                self.end("aborted")?;
                Err(Error::new(
                    ErrorKind::Closed,
                    format!(
                        "not approved, and the run was ended: {question} ({by}: {})",
                        reason.unwrap_or_default()
                    ),
                ))
            }
        }
    }

    /// A resolved path as the model should see it: relative to the workspace.
    pub(crate) fn show_path(&self, path: &Path) -> String {
        match path.strip_prefix(&self.workspace) {
            Ok(rel) if rel.as_os_str().is_empty() => ".".into(),
            Ok(rel) => rel.display().to_string(),
            Err(_) => path.display().to_string(),
        }
    }
}

/// `a/b/../c` as `a/c`: the part of a path that does not exist yet is kept as written by
/// `resolve_path`, and a file tool creates it lexically (it does not ask the kernel about
/// `..` in a directory it is about to make).
fn fold_dots(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}
