//! Where a file tool may reach, and who decides: the workspace, the sandbox's rules for
//! writes, and the policy's `read`/`write` rules with the approver, exactly as a
//! redirect is checked. Every file tool call is a step in the trace.

use std::path::{Path, PathBuf};
use std::time::Instant;

use corral_policy::Act;
use corral_policy::snippet::{Snippet, Value};
use corral_trace::{NewStep, StepDone};

use crate::clock::now_ms;
use crate::ctx::Ctx;
use crate::error::{Error, ErrorKind, Result};
use crate::outcome::StepRef;
use crate::sandbox::SandboxMode;
use crate::sandbox::sets::{HiddenRule, Reach, ReadOnlyRule, Sets};

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
        // A file tool that writes changes the workspace as a command does: it starts only
        // once its step is recorded, where there is room for its rows.
        let ids = self.begin_recorded(&NewStep {
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

    /// The sets the run's box is built from, as the file tools take them (see
    /// [`crate::sandbox::sets`]): what is hidden, what stays read-only.
    pub(crate) fn file_sets(&self) -> Sets {
        Sets::for_own_process(&self.config.sandbox, &self.workspace, &self.sandbox)
    }

    /// [`Self::resolve_in`] with the run's sets as they are now.
    pub(crate) fn resolve_file(&self, path: &str, writing: bool) -> Result<PathBuf> {
        self.resolve_in(&self.file_sets(), path, writing)
    }

    /// Resolve `path` (relative to the workspace, or absolute inside it) through every
    /// part that exists, and confine it. The steps:
    ///
    /// 1. Inside the workspace, or for a write in `workspace-write` one of its writable
    ///    roots.
    /// 2. What `sets` answers for it: a hidden path is neither read nor written (the box
    ///    does not show it); a read-only one (the sandbox's mode, a protected path,
    ///    corral's own state) is not written.
    pub(crate) fn resolve_in(&self, sets: &Sets, path: &str, writing: bool) -> Result<PathBuf> {
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
        self.within_bounds(path, &resolved, writing)?;
        match sets.reach(&resolved) {
            Reach::Hidden { rule } => Err(hidden(path, &rule)),
            Reach::ReadOnly { rule } if writing => Err(self.read_only(path, &rule)),
            _ => match resolved
                .strip_prefix(&self.workspace)
                .ok()
                .filter(|_| writing && self.config.sandbox.mode.is_sandboxed())
                .and_then(|rel| crate::autorun::runs(&self.workspace, rel))
            {
                // Held as the box holds it: corral's own writes for a model go by the
                // same class (see `autorun`).
                Some(runs) => Err(Error::policy(format!(
                    "{path} is a file a host program runs on its own ({runs}): a file tool \
                     does not write it, and the workspace keeps the person's version. A \
                     command that writes it has its change held for the person to review \
                     (`corral review`); tell the person what it is for. Nothing was changed."
                ))),
                None => Ok(resolved),
            },
        }
    }

    /// Refuse `path` when the box hides it, as written (a symlink in it not followed):
    /// for a check made before anything about the path is looked at (what a link in it
    /// leads to).
    pub(crate) fn not_hidden(&self, sets: &Sets, path: &str) -> Result<()> {
        match sets.hidden_by(&fold_dots(&self.workspace.join(path))) {
            Some(rule) => Err(hidden(path, &rule)),
            None => Ok(()),
        }
    }

    /// Step 1 of [`Self::resolve_in`]: the workspace, or a writable root for a write.
    fn within_bounds(&self, path: &str, resolved: &Path, writing: bool) -> Result<()> {
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
        Ok(())
    }

    /// The refusal of a write to `path`, which `rule` keeps read-only.
    fn read_only(&self, path: &str, rule: &ReadOnlyRule) -> Error {
        let sandbox = &self.config.sandbox;
        match rule {
            ReadOnlyRule::Mode => Error::policy(format!(
                "{path} cannot be written: the run's sandbox is read-only. Nothing was changed."
            )),
            ReadOnlyRule::Protected { path: p } => {
                let shown = p.strip_prefix(&self.workspace).unwrap_or(p);
                let git = if shown.starts_with(".git") && !sandbox.git_write {
                    let snippet = Snippet::new().set("sandbox", "git_write", Value::Bool(true));
                    format!(
                        " To let git write its metadata (its hooks and config stay read-only), \
                         a person adds these lines to a trusted policy file; {}",
                        snippet.pasting()
                    )
                } else {
                    String::new()
                };
                Error::policy(format!(
                    "{path} is under the protected path {}, which stays read-only (it can run code or \
                     configures corral): change it yourself, or ask the operator. Nothing was changed.{git}",
                    shown.display(),
                ))
            }
            ReadOnlyRule::Own { path: dir } => Error::policy(format!(
                "{path} is inside corral's own state or policy ({}): nothing may write there; a person changes the policy with an editor, outside corral",
                dir.display()
            )),
        }
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
            env: &[],
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

/// The refusal of `path`, which the box hides by `rule`: nothing read or written, the
/// rule named, and what to do instead.
pub(crate) fn hidden(path: &str, rule: &HiddenRule) -> Error {
    let hint = rule.instead().to_string();
    Error::denied(
        format!(
            "{path} is out of reach: {rule}. A command in the sandbox cannot read it either, \
             so the file tools do not read, list or write it; nothing was read or changed. \
             {hint}"
        ),
        crate::error::Denial {
            status: crate::error::DenialStatus::Refused,
            rule: Some(rule.name()),
            layer: Some("sandbox".into()),
            hint,
        },
    )
}
