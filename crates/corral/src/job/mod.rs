//! A job: the one engine every command line runs through.
//!
//! [`Job::start`] puts a planned line in its containment unit and its sandbox (the unit
//! named for the call, `step-4` or `handle-2`; the sandbox made for the plan, which may
//! refuse its write redirects; the environment changed as the sandbox needs; the PID
//! namespace started ahead of the call, passed in as a value). [`Job::wait`] then walks the
//! line on the calling thread: each pipeline's stages start as the walk reaches them, and
//! the walk is the watch (output read into the sinks, the deadline and the cancel token
//! kept). What comes back is an [`Ended`]: the one mapping of how the line ended to a
//! [`Status`], the stages' reports, what the unit still held, where a last `cd` went.
//!
//! Who calls it, and on which thread:
//! - a foreground call (`exec`, `shell`, the task's gate, the sandbox's reruns): start,
//!   then wait on the caller's thread, so a foreground call pays no thread hop;
//! - a handle (`shell_start`, and a `yield_ms` call, which is a handle waited on for its
//!   yield): start, then wait on the handle's own thread (`background::watcher`), since
//!   a line's walk cannot leave the thread it runs on midway;
//! - what a job's end becomes for the model, the result, is [`result`]'s (one builder).

mod result;

use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::cancel::Cancel;
use crate::capture::Sink;
use crate::config::sandbox::{SandboxConfig, SandboxMode};
use crate::ctx::Ctx;
use crate::env::Var;
use crate::error::{Error, Result};
use crate::outcome::sandbox_report::SandboxReport;
use crate::outcome::{StageReport, Status};
use crate::pipeline::Outputs;
use crate::plan::Plan;
use crate::spawn::{self, Containment};
use crate::supervise::{Limits, Watch};

/// A plan's unit, inside its sandbox, with what the sandbox enforced: ready to run.
#[derive(Debug)]
pub(crate) struct Job {
    /// What the plan's processes start in: the containment unit, wrapped by the sandbox.
    unit: Box<dyn Containment>,
    /// What the sandbox enforced on this host, for the result and the trace.
    report: SandboxReport,
    /// The copies of the files host programs run, settled once the job ends (see
    /// `autorun`).
    held: Option<crate::autorun::copies::Copies>,
}

/// The line a job runs and how it is wired.
pub(crate) struct Line<'a> {
    pub plan: &'a Plan,
    /// The call's environment (as [`Job::start`] left it).
    pub env: &'a [Var],
    /// The write ends the stages' stdout and stderr go to.
    pub outputs: Outputs,
    /// The read ends the watch reads, each with the index of the sink it feeds.
    pub readers: Vec<(OwnedFd, usize)>,
    /// The first stage's stdin (a handle's input pipe or terminal); the null device if
    /// `None`, unless a redirect says otherwise.
    pub stdin: Option<OwnedFd>,
    /// Write "corral: REASON" to a stage's stderr when its program is unavailable, as a
    /// shell would.
    pub report_unavailable: bool,
}

/// How a job is watched: its time limit (from the start of the walk), the graces of its
/// end, the token that cancels it.
pub(crate) struct Watching<'a> {
    pub timeout: Option<Duration>,
    pub kill_grace: Duration,
    pub drain_grace: Duration,
    pub cancel: Option<&'a Cancel>,
}

/// How a job ended, before its output is rendered.
#[derive(Debug)]
pub(crate) struct Ended {
    pub status: Status,
    /// What the line's last pipeline ended with, whether or not the job was then ended
    /// from outside (a killed handle's row keeps the signal that ended it).
    pub last: Option<Status>,
    pub stages: Vec<StageReport>,
    pub wall: Duration,
    /// Processes the unit still held when the command's own ended, and ended.
    pub leftovers: usize,
    /// The containment unit's name.
    pub containment: &'static str,
    /// The directory a last `cd` entered (see `cwd`).
    pub ended_in: Option<PathBuf>,
}

impl Job {
    /// The job for `plan` under `sandbox`: a unit named `name` (`step-4`, `handle-2`),
    /// the sandbox made for it (which may refuse the plan's write redirects), and `env`
    /// changed as the sandbox needs (its temp directory, caches, proxy); `ahead`, the PID
    /// namespace started for it, if one was; `terminal`, whether its one command leads a
    /// session on the terminal its stdin will be. Nothing of the line has started yet.
    ///
    /// The containment stack is built here and only here, innermost first: the base unit
    /// that holds the processes (a cgroup of the call's own, bounded by the run's
    /// [`spawn::Limits`]; else process groups, with corral a subreaper where no namespace
    /// is around them), the call's PID namespace around it, the sandbox's confinement
    /// around that, and a terminal's session outermost. Each layer's spawn hooks run
    /// its inner layer's first (see [`spawn::Containment`]), so a process is placed in its
    /// group and namespace before it is confined, and confined before it takes its
    /// terminal.
    pub(crate) fn start(
        run: &Ctx,
        name: &str,
        sandbox: &SandboxConfig,
        plan: &Plan,
        env: &mut Vec<Var>,
        mut ahead: spawn::NamespaceAhead,
        terminal: bool,
    ) -> Result<Job> {
        let unit = spawn::unit_for_call(&run.config, name, sandbox.mode.is_sandboxed(), &mut ahead);
        let about = crate::sandbox::Unit {
            kind: unit.kind(),
            pids_max: run.config.pids_max,
            memory: spawn::MemoryBound::of(&run.config, unit.as_ref()),
            nice: run.config.nice,
        };
        let path = env
            .iter()
            .find(|(k, _)| k == "PATH")
            .map(|(_, v)| v.as_os_str());
        let mut boxed =
            crate::sandbox::prepare(sandbox, &run.workspace, &about, &run.sandbox, plan, path)?;
        // The files host programs run on their own: the box works on copies of them (see
        // `autorun`), bound before the run's shared mounts may take this confinement.
        let held = match boxed.beside_temp() {
            Some((host_dir, box_dir, seen)) if sandbox.mode == SandboxMode::WorkspaceWrite => {
                let (mut copies, overlays) = crate::autorun::copies::Copies::make(
                    &run.workspace,
                    &host_dir,
                    &box_dir,
                    &seen,
                    plan.may_write(),
                );
                let bound = match boxed.confinement.as_mut() {
                    Some(c) => c
                        .set_overlays(&overlays)
                        .map_err(|e| Error::io("binding the held paths' copies", e))?,
                    None => false,
                };
                copies.bound(bound);
                Some(copies)
            }
            _ => None,
        };
        // In a mount namespace an init copied, a sandboxed call's stages may take the
        // run's sandbox mounts as they are (see `sandbox::shared`).
        if let (Some(copied), Some(confinement)) =
            (unit.mounts_copied(), boxed.confinement.as_mut())
        {
            run.sandbox.mounts.settle(confinement, copied);
        }
        boxed.apply_env(env);
        let report = boxed.report.clone();
        let unit = boxed.wrap(unit);
        let unit = if terminal {
            spawn::TerminalSession::around(unit)
        } else {
            unit
        };
        Ok(Job { unit, report, held })
    }

    /// The containment unit's name, as results and the trace carry it.
    pub(crate) fn containment(&self) -> &'static str {
        self.unit.name()
    }

    /// The copies of the files host programs run, for the caller to settle once the
    /// job's processes are gone.
    pub(crate) fn take_held(&mut self) -> Option<crate::autorun::copies::Copies> {
        self.held.take()
    }

    /// What the sandbox enforced for this job.
    pub(crate) fn report(&self) -> &SandboxReport {
        &self.report
    }

    /// Run `line` to its end on this thread, its output read into `sinks` (indexed as
    /// `line.readers` say), watched as `watching` says. `line_over` runs when the walk
    /// is over, before what it left is ended (a handle closes its input there); `retire`
    /// is given the unit once its processes are ended, to tear down where it likes.
    ///
    /// A failure of corral's own while the line ran (a pipe it could not make, a read
    /// that failed) ends it as well and is its status: the program could not be run
    /// (126), with the reason; what ran until then is reported as for any end.
    pub(crate) fn wait(
        self,
        line: Line<'_>,
        sinks: &mut [Sink],
        watching: Watching<'_>,
        line_over: impl FnOnce(),
        retire: impl FnOnce(Box<dyn Containment>),
    ) -> Ended {
        let Line {
            plan,
            env,
            outputs,
            readers,
            stdin,
            report_unavailable,
        } = line;
        let mut unit = self.unit;
        let began = Instant::now();
        let limits = Limits {
            deadline: watching.timeout.map(|t| began + t),
            kill_grace: watching.kill_grace,
            drain_grace: watching.drain_grace,
        };
        let mut watch = Watch::new(readers, sinks, limits, watching.cancel);
        let ran = crate::line_run::run(
            plan,
            env,
            &outputs,
            stdin.as_ref(),
            report_unavailable,
            &mut watch,
            &mut *unit,
        );
        line_over();
        drop(outputs);
        drop(stdin);
        let (timed_out, cancelled) = (watch.timed_out, watch.cancelled);
        let finished = watch.finish(&*unit);
        let wall = began.elapsed();
        // Ended now, so that the kernel's teardown of the unit (a PID namespace's init
        // takes its mount namespace down) overlaps what the caller does with the end.
        let containment = unit.name();
        let memory_exceeded = unit.memory_exceeded();
        retire(unit);

        let planned = plan.stage_reports();
        let (ran, leftovers) = match (ran, finished) {
            (Ok(mut ran), Ok(leftovers)) => {
                ran.background.settle(&mut ran.stages);
                (Ok(ran), leftovers)
            }
            (Err(e), _) | (Ok(_), Err(e)) => (Err(e), 0),
        };
        match ran {
            Ok(ran) => {
                let last = ran.status.clone();
                let status = ended(
                    ran.status,
                    cancelled,
                    timed_out,
                    watching.timeout.unwrap_or_default(),
                    memory_exceeded,
                );
                let stages = planned
                    .into_iter()
                    .zip(ran.stages)
                    .map(|(planned, run)| StageReport {
                        program: run.program,
                        cwd: run.cwd.unwrap_or(planned.cwd),
                        status: run.status,
                        ..planned
                    })
                    .collect();
                Ended {
                    status,
                    last,
                    stages,
                    wall,
                    leftovers,
                    containment,
                    ended_in: ran.ended_in,
                }
            }
            Err(e) => {
                let status = could_not_run(plan, &e);
                Ended {
                    last: Some(status.clone()),
                    status,
                    stages: planned,
                    wall,
                    leftovers,
                    containment,
                    ended_in: None,
                }
            }
        }
    }
}

/// The status of a line corral itself failed to run to its end: as a program that could
/// not be run (126), named by the line's first program, with corral's reason.
fn could_not_run(plan: &Plan, e: &std::io::Error) -> Status {
    Status::Unavailable {
        program: plan
            .stages()
            .next()
            .and_then(|s| s.argv.first())
            .cloned()
            .unwrap_or_default(),
        reason: format!("corral could not run the line to its end: {e}"),
        code: 126,
    }
}

/// How a job ended: ended from outside (`cancelled`), past its time limit (`timed_out`
/// after `limit`), by the kernel at its memory bound (`memory_exceeded`, the unit's
/// bound when it did, and the command did not succeed anyway), or as its pipeline's last
/// stage did (`ran`; a pipeline with nothing to run succeeds).
fn ended(
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
