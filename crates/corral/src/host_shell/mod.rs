//! The host shell: a line outside corral's grammar (a loop, `$( )`, `$VAR`, `[[ ]]`,
//! `source`) may run through `bash -c`, but only where that cannot carry anything past
//! the policy or out of the box:
//!
//! - **where**: [`HostShell::Sandboxed`] runs it only when the call runs in a sandbox every
//!   layer of which this host enforces ([`crate::sandbox::enforcement::host_report`]);
//!   [`HostShell::Ask`] runs it there too, and elsewhere asks a person first;
//!   [`HostShell::Never`] refuses it, with the grammar's own refusal. It is never run
//!   silently unsandboxed.
//! - **what**: before it runs, a real bash parser (`tree-sitter-bash`, the parser Codex
//!   uses; chosen by measurement, see `BENCHMARKS.md`) finds every simple command in it:
//!   in pipelines, lists, loop and `if` bodies, functions, `$( )` and backticks, process
//!   substitutions, and the static line given to `eval`, `bash -c` or `sh -c`. Each is
//!   checked like a stage, and each static redirect target like a redirect. A deny rule
//!   matching any of them refuses the line. A command word computed when the line runs
//!   (`$cmd`, `$(echo rm)`) is taken to match every deny rule.
//! - **how**: the line is one stage, `bash -c LINE`, in the call's containment unit: a job
//!   it puts in the background with `&` ends with the call like everything else.
//!
//! The boundary, as for any stage: what a checked command then does at run time (a
//! variable expanded into an argument, a file sourced) is the sandbox's to bound.

use std::path::PathBuf;
use std::sync::OnceLock;

pub use crate::config::host_shell::{
    HostLines, HostShell, LIBRARY_DEFAULT_HOST_SHELL, MCP_DEFAULT_HOST_SHELL,
};
use crate::plan::extract::extract;

use crate::call::Prepared;
use crate::ctx::Ctx;
use crate::error::{Error, Result};
use crate::plan::{HostCheck, Plan};

impl Ctx {
    /// Where a line outside the grammar runs in this run: the host-shell mode, the call's
    /// sandbox mode and what this host enforces, decided as a call would decide them.
    pub(crate) fn host_lines(&self) -> HostLines {
        let boxed = self.config.sandbox.mode.is_sandboxed() && host_enforces_every_layer();
        match (self.config.host_shell, boxed) {
            (HostShell::Never, _) | (HostShell::Sandboxed, false) => HostLines::Refused,
            (_, true) => HostLines::InSandbox,
            (HostShell::Ask, false) => HostLines::WhenApproved,
        }
    }
}

/// Whether every confinement layer of a sandbox is enforced on this host (probed once):
/// the same judgement as the surfaces' posture ([`crate::outcome::sandbox_report::CONFINEMENT`]), so a
/// resource limit a host lacks (`pids.max` without a delegated cgroup) does not decide
/// where a line runs.
pub(crate) fn host_enforces_every_layer() -> bool {
    static FULL: OnceLock<bool> = OnceLock::new();
    *FULL.get_or_init(|| {
        crate::sandbox::enforcement::host_report()
            .unenforced(crate::outcome::sandbox_report::CONFINEMENT)
            .is_empty()
    })
}

impl Ctx {
    /// Prepare a line the grammar refused for the host shell, where the run's mode allows
    /// it; otherwise the grammar's refusal, saying why the host shell did not take it.
    pub(crate) fn prepare_host_line(
        &self,
        line: &str,
        timeout: Option<std::time::Duration>,
        cwd: PathBuf,
        refusal: corral_line::Refusal,
    ) -> Result<Prepared> {
        let env = self.env.build(&Default::default())?;
        let path_var = crate::env::path_of(&env);
        let plan = plan_host_line(
            line,
            refusal,
            self.config.host_shell,
            self.config.sandbox.mode,
            cwd,
            path_var.as_deref(),
        )?;
        Ok(Prepared {
            plan,
            env,
            timeout: timeout.unwrap_or(self.config.timeout),
            report_unavailable: true,
            line: Some(line.to_string()),
            terminal: false,
            typed: false,
            approved_by: None,
            output_budget: self.config.output_budget,
        })
    }
}

/// The plan for a line the grammar refused (`refusal`), as a call in host-shell `mode`
/// and sandbox `sandbox` makes it: one `bash -c` stage carrying every command the bash
/// parser found, or the grammar's refusal saying why the host shell did not take it.
/// Nothing runs; `corral policy check --line` and the `shell` tool both plan here.
pub fn plan_host_line(
    line: &str,
    refusal: corral_line::Refusal,
    mode: HostShell,
    sandbox: crate::sandbox::SandboxMode,
    cwd: PathBuf,
    path_var: Option<&str>,
) -> Result<Plan> {
    if mode == HostShell::Never || refusal.construct.is_syntax_error() {
        return Err(Error::refused(refusal));
    }
    let boxed = sandbox.is_sandboxed() && host_enforces_every_layer();
    if !boxed && mode == HostShell::Sandboxed {
        return Err(Error::refused_noting(
            refusal,
            "the host shell runs such a line only in a sandbox every layer of which this host \
             enforces, and this call has none (`--sandbox workspace-write` gives one)",
        ));
    }
    let extracted = match extract(line) {
        Ok(extracted) => extracted,
        Err(why) => {
            return Err(Error::refused_noting(
                refusal,
                &format!("the host shell: {why}"),
            ));
        }
    };
    let argv = vec!["bash".to_string(), "-c".to_string(), line.to_string()];
    let unmodelled = crate::plan::unmodelled::unmodelled(line, &extracted, &cwd);
    let check = HostCheck {
        extracted,
        ask: !boxed,
        refusal: refusal.to_string(),
        unmodelled,
        kernel_holds_denied_programs: boxed && sandbox.kernel_holds_denied_programs(),
    };
    Ok(Plan::host_line(argv, cwd, path_var, check))
}

/// The note a host-shell result starts with: that it ran under the host shell, and in
/// which box. A sandboxed result names its sandbox on a line of its own already, so the
/// note names only what that line would not show.
pub(crate) fn note(outcome: &mut crate::Outcome) {
    let note = match &outcome.sandbox {
        Some(r) if r.mode != crate::sandbox::SandboxMode::Full => {
            "[ran under the host shell (bash -c), in the sandbox below]".to_string()
        }
        Some(r) => format!("[ran under the host shell (bash -c), {}]", r.status()),
        None => "[ran under the host shell (bash -c), no sandbox]".to_string(),
    };
    outcome.observation = format!("{note}\n{}", outcome.observation);
}
