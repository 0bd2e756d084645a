//! `shell`: a command line in corral's own grammar, parsed, planned and checked before
//! anything starts, then run stage by stage with corral's own pipes.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::call::CallOptions;
use crate::call::Prepared;
use crate::ctx::Ctx;
use crate::error::{Error, Result};
use crate::outcome::Outcome;
use crate::plan::{LineContext, Plan, plan_line};

/// Run a command line such as `cd web && npm test 2>&1 | tail -n 40`.
///
/// The grammar is corral's own (see [`corral_line`]): quotes, escapes, `|`, `&&`, `||`,
/// `;`, the redirects `<` `>` `>>` `2>` `2>>` `2>&1`, here-documents `<<'EOF'` and
/// here-strings `<<<'text'`, `NAME=value cmd`, `~/path`, comments, file-name patterns,
/// brace expansion, `[ EXPR ]`, `time`, one pipeline put in the background with `&`, and
/// `cd`, `pushd`, `popd` anywhere. Variables (`$VAR`), `$( )`, subshells and control flow
/// are refused by name with what to do instead (or run under the host shell, where the
/// run allows it).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ShellRequest {
    /// The command line.
    pub line: String,
    /// In the workspace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// 30s, 2m (default 15m).
    #[serde(
        default,
        with = "crate::request::timeout_arg",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(with = "Option<String>")]
    pub timeout: Option<Duration>,
    /// After this many ms, return a handle.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub yield_ms: Option<u64>,
    /// As for [`ExecRequest::max_output`](crate::ExecRequest).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_output: Option<usize>,
}

impl ShellRequest {
    /// A request for `line`, with every option at its default.
    pub fn new(line: impl Into<String>) -> Self {
        Self {
            line: line.into(),
            ..Self::default()
        }
    }

    /// Become a background handle if still running after `ms` milliseconds.
    pub fn yield_after(mut self, ms: u64) -> Self {
        self.yield_ms = Some(ms);
        self
    }

    /// Start in `dir`, relative to the workspace root.
    pub fn cwd(mut self, dir: impl Into<String>) -> Self {
        self.cwd = Some(dir.into());
        self
    }

    /// Limit the whole line to `timeout`.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Show at most `bytes` of output text in the result, as
    /// [`ExecRequest::max_output`](crate::ExecRequest::max_output).
    pub fn max_output(mut self, bytes: usize) -> Self {
        self.max_output = Some(bytes);
        self
    }
}

impl Ctx {
    /// `shell` in the foreground (see [`Run::shell`](crate::Run::shell)).
    pub(crate) fn shell_with(
        &self,
        request: &ShellRequest,
        options: CallOptions,
    ) -> Result<Outcome> {
        let call_json = serde_json::to_string(request).unwrap_or_default();
        let outcome = self.call(
            "shell",
            call_json,
            request.cwd.as_deref().map(std::path::Path::new),
            options,
            |cwd| self.prepare_line(request, cwd),
        );
        outcome.map(|outcome| host_note(request, outcome))
    }

    /// What `request` would run, without running anything or recording a step: the parse,
    /// the plan and every check, exactly as [`Run::shell`] makes them.
    pub(crate) fn plan_shell(&self, request: &ShellRequest) -> Result<Plan> {
        let cwd = self.resolve_cwd(request.cwd.as_deref().map(std::path::Path::new))?;
        Ok(self.in_box(self.prepare_line(request, cwd)?).plan)
    }

    /// Check `line`, written to a shell's stdin by a model, as the `shell` tool checks its
    /// line, planned from `cwd`; the decisions are recorded on `step`.
    pub(crate) fn check_written_line(
        &self,
        step: crate::outcome::StepRef,
        line: &str,
        cwd: PathBuf,
    ) -> Result<()> {
        let prepared = self.prepare_line(&ShellRequest::new(line), cwd)?;
        self.pass_gate("shell", step, &self.in_box(prepared))
    }

    pub(crate) fn prepare_line(&self, request: &ShellRequest, cwd: PathBuf) -> Result<Prepared> {
        if request.timeout == Some(Duration::ZERO) {
            return Err(Error::invalid(
                "timeout must be greater than zero, e.g. 500ms, 3s or 2m",
            ));
        }
        crate::request::check_max_output(request.max_output)?;
        if let Some(at) = request.line.find('\0') {
            return Err(Error::invalid(format!(
                "the line has a NUL byte at byte {at}, which no command line can carry: remove \
                 it, or put the data in a file and name the file"
            )));
        }
        if crate::patch::is_patch_heredoc(&request.line) {
            return Err(Error::invalid(crate::resolve::APPLY_PATCH_IS_A_TOOL));
        }
        let line = match corral_line::parse(&request.line) {
            Ok(line) => line,
            // An empty line stays the grammar's refusal, with its hint: under the host
            // shell it would be `exit 0`, a success that ran nothing, which a model takes
            // for a command that worked.
            Err(refusal) if request.line.trim().is_empty() => {
                return Err(Error::refused_noting(
                    refusal,
                    "give the command to run, e.g. \"ls -l\"",
                ));
            }
            Err(refusal) => {
                let mut prepared =
                    self.prepare_host_line(&request.line, request.timeout, cwd, refusal)?;
                prepared.output_budget = request.max_output.unwrap_or(prepared.output_budget);
                return Ok(prepared);
            }
        };
        let env = self.env.build(&Default::default())?;
        let home = env
            .iter()
            .find(|(k, _)| k == "HOME")
            .and_then(|(_, v)| v.to_str());
        // What the box hides, worked out only if the line has a pattern to expand.
        let sets = std::cell::OnceCell::new();
        let hidden = |path: &Path| {
            sets.get_or_init(|| self.file_sets())
                .hidden_by(path)
                .is_some()
        };
        let plan = plan_line(
            &line,
            &LineContext {
                workspace: &self.workspace,
                cwd: &cwd,
                path_var: crate::env::path_of(&env).as_deref(),
                home,
                protected: &self.protected,
                hidden: crate::glob::Hidden(&hidden),
            },
        )?;
        Ok(Prepared {
            plan,
            env,
            timeout: request.timeout.unwrap_or(self.config.timeout),
            report_unavailable: true,
            line: Some(request.line.clone()),
            terminal: false,
            typed: false,
            approved_by: None,
            output_budget: request.max_output.unwrap_or(self.config.output_budget),
        })
    }
}

/// A line the grammar does not take ran through the host's shell: its result says so.
pub(crate) fn host_note(request: &ShellRequest, mut outcome: Outcome) -> Outcome {
    if corral_line::parse(&request.line).is_err() {
        crate::host_shell::note(&mut outcome);
    }
    outcome
}
