//! Where a file tool may reach, and who decides: the workspace, the sandbox's rules for
//! writes, and the policy's `read`/`write` rules with the approver, exactly as a
//! redirect is checked. Every file tool call is a step in the trace.

use std::path::{Path, PathBuf};
use std::time::Instant;

use corral_policy::Act;
use corral_trace::{NewStep, StepDone};

use crate::clock::now_ms;
use crate::ctx::Ctx;
use crate::error::{Error, ErrorKind, Result};
use crate::outcome::StepRef;
use crate::sandbox::SandboxMode;

/// What a file tool call produced: the text the model reads and the step it is.
#[derive(Debug, Clone, serde::Serialize)]
pub struct FileOutcome {
    /// Where the trace keeps this call.
    pub step: StepRef,
    /// The text the model reads.
    pub observation: String,
}

impl Ctx {
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
        // A file tool that writes is recorded as a command that may write is (an undo
        // too: a person can undo it in turn).
        let writes = matches!(tool, "write_file" | "apply_patch" | "undo");
        let result = self
            .recorded(step, writes, || act(step))
            .map(|(mut text, note)| {
                crate::recorded::with_note(&mut text, note);
                text
            });
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
        if let Some(p) = sandbox.protected_in(&self.workspace).iter().find(|p| {
            resolved.starts_with(p) || p.canonicalize().is_ok_and(|c| resolved.starts_with(c))
        }) {
            let shown = p.strip_prefix(&self.workspace).unwrap_or(p);
            return Err(Error::policy(format!(
                "{path} is under the protected path {}, which stays read-only (it can run code or \
                 configures corral): change it yourself, or ask the operator{}. Nothing was changed.",
                shown.display(),
                if shown.starts_with(".git") && !sandbox.git_write {
                    "; to let git write its metadata, set `[sandbox] git_write = true` in a \
                     trusted policy file (hooks and config stay read-only)"
                } else {
                    ""
                }
            )));
        }
        if let Some(dir) = self.protected.iter().find(|p| resolved.starts_with(p)) {
            return Err(Error::policy(format!(
                "{path} is inside corral's own state or policy ({}): nothing may write there; a person changes the policy with an editor, outside corral",
                dir.display()
            )));
        }
        Ok(resolved)
    }

    /// Check every `(act, path)` against the policy before anything is touched, as the
    /// gate checks a command ([`Gate::check_paths`](crate::gate::Gate::check_paths)): a
    /// deny refuses all of them, asks go to the approver in one request, an abort ends
    /// the run. Every refusal and answer is a row in `policy_events`.
    pub(crate) fn check_files(
        &self,
        tool: &str,
        step: StepRef,
        items: &[(Act, PathBuf)],
    ) -> Result<()> {
        let ctx = crate::gate::Context {
            approved_by: None,
            unrecorded: None,
            run_id: &self.id,
            step_id: step.id,
            tool,
            line: None,
            terminal: false,
            typed: false,
            workspace: &self.workspace,
            now_ms: now_ms(),
            nothing: "Nothing was changed.",
        };
        self.gated(&ctx, |gate, ctx, record| {
            gate.check_paths(items, ctx, record)
        })
    }

    /// The roots a file tool may reach, open (see [`super::beneath`]): the workspace, and
    /// in `workspace-write` its writable roots.
    pub(crate) fn file_roots(&self) -> Result<crate::beneath::Roots> {
        let sandbox = &self.config.sandbox;
        let mut roots = vec![self.workspace.clone()];
        if sandbox.mode == SandboxMode::WorkspaceWrite {
            roots.extend(sandbox.writable_roots.iter().map(|r| {
                let r = self.workspace.join(r);
                r.canonicalize().unwrap_or(r)
            }));
        }
        crate::beneath::Roots::open(roots)
            .map_err(|e| Error::io(format!("opening {}", self.workspace.display()), e))
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
