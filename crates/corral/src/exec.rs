//! `exec`: one argv, run to its end inside the run's bounds.

use crate::call::{CallOptions, Prepared};
use crate::error::Result;
use crate::outcome::Outcome;
use crate::plan::Plan;
use crate::request::ExecRequest;
use crate::run::Run;

impl Run {
    /// Run one argv to its end.
    ///
    /// A command that runs is an `Ok` whatever its exit status, and so is a program the
    /// machine does not have ([`Status::Unavailable`](crate::Status::Unavailable)). `Err`
    /// means the request was bad or corral itself failed; the step row is kept either way.
    pub fn exec(&self, request: &ExecRequest) -> Result<Outcome> {
        self.exec_with(request, CallOptions::default())
    }

    /// [`Run::exec`], with live output and cancellation.
    pub fn exec_with(&self, request: &ExecRequest, options: CallOptions) -> Result<Outcome> {
        let call_json = serde_json::to_string(request).unwrap_or_default();
        let prepare = |cwd| self.prepare_exec(request, cwd);
        match request.yield_ms {
            Some(ms) => {
                let timed = request.timeout.is_some();
                self.yielding(
                    "exec",
                    call_json,
                    request.cwd.as_ref().map(crate::os_text::OsText::as_path),
                    prepare,
                    ms,
                    timed,
                )
            }
            None => self.call(
                "exec",
                call_json,
                request.cwd.as_ref().map(crate::os_text::OsText::as_path),
                options,
                prepare,
            ),
        }
    }

    /// Validate and plan `request` in `cwd`, as [`Run::exec`] does before the gate.
    pub(crate) fn prepare_exec(
        &self,
        request: &ExecRequest,
        cwd: std::path::PathBuf,
    ) -> Result<Prepared> {
        request.validate()?;
        crate::env::check_overrides(&request.env)?;
        // The call's overrides ride on the stage, where the gate sees them as the
        // policy sees `env NAME=value cmd`.
        let env = self.env.build(&Default::default())?;
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
