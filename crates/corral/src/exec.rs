//! `exec`: one argv, run to its end inside the run's bounds.

use crate::call::{CallOptions, Prepared};
use crate::ctx::Ctx;
use crate::error::Result;
use crate::outcome::Outcome;
use crate::plan::Plan;
use crate::request::ExecRequest;

impl Ctx {
    /// `exec` in the foreground (see [`Run::exec`](crate::Run::exec)).
    pub(crate) fn exec_with(&self, request: &ExecRequest, options: CallOptions) -> Result<Outcome> {
        let call_json = serde_json::to_string(request).unwrap_or_default();
        self.call(
            "exec",
            call_json,
            request.cwd.as_ref().map(crate::os_text::OsText::as_path),
            options,
            |cwd| self.prepare_exec(request, cwd),
        )
    }

    /// Validate and plan `request` in `cwd`, as [`Run::exec`] does before the gate.
    pub(crate) fn prepare_exec(
        &self,
        request: &ExecRequest,
        cwd: std::path::PathBuf,
    ) -> Result<Prepared> {
        self.prepare_exec_in(request, cwd, |_| {})
    }

    /// [`Ctx::prepare_exec`] in the run's environment as `adjust` changes it (the gate's
    /// activated virtual environment): the program is found on the changed `PATH`.
    pub(crate) fn prepare_exec_in(
        &self,
        request: &ExecRequest,
        cwd: std::path::PathBuf,
        adjust: impl FnOnce(&mut Vec<crate::env::Var>),
    ) -> Result<Prepared> {
        request.validate()?;
        crate::env::check_overrides(&request.env)?;
        // The call's overrides ride on the stage, where the gate sees them as the
        // policy sees `env NAME=value cmd`.
        let mut env = self.env.build(&Default::default())?;
        adjust(&mut env);
        let path_var = crate::env::path_of(&env);
        let overrides: Vec<_> = request
            .env
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let plan = Plan::single_os(&request.argv, cwd, path_var.as_deref(), &overrides);
        Ok(Prepared {
            plan,
            env,
            timeout: request.timeout.unwrap_or(self.config.timeout),
            report_unavailable: false,
            line: None,
            terminal: false,
            typed: false,
            approved_by: None,
            output_budget: request.max_output.unwrap_or(self.config.output_budget),
        })
    }
}
