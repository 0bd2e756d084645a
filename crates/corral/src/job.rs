//! A job: a plan put in its containment unit and its sandbox, ready to start, and the
//! one way a job's end becomes a [`Status`].
//!
//! A foreground call (`call`) and a background handle (`handle`) both make their job
//! here, so both get the same unit, the same sandbox wrapper, the same environment
//! changes and the same report; they differ only in who watches the job (the caller's
//! thread, or the handle's watcher) and where its output goes.

use std::time::Duration;

use crate::config::sandbox::SandboxConfig;
use crate::error::Result;
use crate::outcome::Status;
use crate::outcome::sandbox_report::SandboxReport;
use crate::plan::Plan;
use crate::run::Run;
use crate::spawn::{self, Containment};

/// A plan's unit, inside its sandbox, with what the sandbox enforced.
pub(crate) struct Job {
    /// What the plan's processes start in: the containment unit, wrapped by the sandbox.
    pub unit: Box<dyn Containment>,
    /// What the sandbox enforced on this host, for the result and the trace.
    pub report: SandboxReport,
}

impl Run {
    /// The job for `plan` under `sandbox`: a unit named `name` (`step-4`, `handle-2`),
    /// the sandbox made for it (which may refuse the plan's write redirects), and `env`
    /// changed as the sandbox needs (its temp directory, caches, proxy); `ahead`, the PID
    /// namespace started for it, if one was.
    pub(crate) fn job(
        &self,
        name: &str,
        sandbox: &SandboxConfig,
        plan: &Plan,
        env: &mut Vec<(std::ffi::OsString, std::ffi::OsString)>,
        mut ahead: spawn::NamespaceAhead,
    ) -> Result<Job> {
        let unit =
            spawn::unit_for_call(&self.config, name, sandbox.mode.is_sandboxed(), &mut ahead);
        let about = crate::sandbox::Unit {
            name: unit.name(),
            pids_max: self.config.pids_max,
            memory: spawn::MemoryBound::of(&self.config, unit.as_ref()),
            nice: self.config.nice,
        };
        let path = env
            .iter()
            .find(|(k, _)| k == "PATH")
            .map(|(_, v)| v.as_os_str());
        let mut boxed =
            crate::sandbox::prepare(sandbox, &self.workspace, &about, &self.sandbox, plan, path)?;
        // In a mount namespace an init copied, a sandboxed call's stages may take the
        // run's sandbox mounts as they are (see `sandbox::shared`).
        if let (Some(copied), Some(confinement)) =
            (unit.mounts_copied(), boxed.confinement.as_mut())
        {
            self.sandbox.mounts.settle(confinement, copied);
        }
        boxed.apply_env(env);
        let report = boxed.report.clone();
        Ok(Job {
            unit: boxed.wrap(unit),
            report,
        })
    }
}

/// How a job ended: ended from outside (`cancelled`), past its time limit (`timed_out`
/// after `limit`), by the kernel at its memory bound (`memory_exceeded`, the unit's
/// bound when it did, and the command did not succeed anyway), or as its pipeline's last
/// stage did (`ran`; a pipeline with nothing to run succeeds).
pub(crate) fn ended(
    ran: Option<Status>,
    cancelled: bool,
    timed_out: bool,
    limit: Duration,
    memory_exceeded: Option<u64>,
) -> Status {
    if cancelled {
        Status::Cancelled
    } else if timed_out {
        Status::TimedOut { after: limit }
    } else if let (Some(limit_bytes), false) =
        (memory_exceeded, ran.as_ref().is_some_and(Status::success))
    {
        Status::OutOfMemory { limit_bytes }
    } else {
        ran.unwrap_or(Status::Exited { code: 0 })
    }
}
