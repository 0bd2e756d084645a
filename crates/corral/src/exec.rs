//! `exec`: one argv, run to its end inside the run's bounds.

use std::io::Write;
use std::os::fd::OwnedFd;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::time::{Duration, Instant};

use corral_trace::{NewStep, StepDone};

use crate::cancel::Cancel;
use crate::capture::{self, Captured, Sink};
use crate::error::{Error, Result};
use crate::outcome::{ExecOutcome, Status, StepRef, StreamReport};
use crate::request::ExecRequest;
use crate::run::{Run, canonical_dir, now_ms};
use crate::spawn::{self, Containment, ProcessGroup};
use crate::supervise::{self, Limits, Started};
use crate::{render, resolve};

/// How a call is watched from outside, beyond its request.
#[derive(Default)]
pub struct CallOptions {
    /// Receives every chunk of the command's stdout as it is read, besides the capture.
    /// The CLI passes its own stdout, so a person sees output as it is printed.
    pub stdout: Option<Box<dyn Write + Send>>,
    /// The same for stderr.
    pub stderr: Option<Box<dyn Write + Send>>,
    /// Ends the call when triggered.
    pub cancel: Option<Cancel>,
}

impl std::fmt::Debug for CallOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallOptions")
            .field("stdout", &self.stdout.is_some())
            .field("stderr", &self.stderr.is_some())
            .field("cancel", &self.cancel)
            .finish()
    }
}

impl Run {
    /// Run one argv to its end.
    ///
    /// A command that runs is an `Ok` whatever its exit status, and so is a program the
    /// machine does not have ([`Status::Unavailable`]). `Err` means the request was bad or
    /// corral itself failed; the step row is kept either way.
    pub fn exec(&self, request: &ExecRequest) -> Result<ExecOutcome> {
        self.exec_with(request, CallOptions::default())
    }

    /// [`Run::exec`], with live output and cancellation.
    pub fn exec_with(&self, request: &ExecRequest, options: CallOptions) -> Result<ExecOutcome> {
        self.ensure_open()?;
        let call_json = serde_json::to_string(request).unwrap_or_default();
        let cwd = self.resolve_cwd(request.cwd.as_deref());
        let ids = self.store().begin_step(&NewStep {
            run_id: self.id.clone(),
            tool: "exec".into(),
            call_json,
            cwd: match &cwd {
                Ok(dir) => dir.display().to_string(),
                Err(_) => request.cwd.clone().unwrap_or_default(),
            },
            started_at_ms: now_ms(),
        })?;
        let step = StepRef {
            id: ids.id,
            seq: ids.seq,
        };
        let started = Instant::now();
        match self.exec_step(request, cwd, step, options) {
            Ok(outcome) => {
                self.store().finish_step(step.id, &done(&outcome))?;
                Ok(outcome)
            }
            Err(err) => {
                self.store()
                    .finish_step(step.id, &refused(&err, started.elapsed()))?;
                Err(err)
            }
        }
    }

    /// The working directory for a call: `dir` under the workspace root, which must exist
    /// and stay inside the workspace.
    pub(crate) fn resolve_cwd(&self, dir: Option<&str>) -> Result<PathBuf> {
        let Some(dir) = dir.filter(|d| !d.is_empty()) else {
            return Ok(self.workspace.clone());
        };
        let resolved = canonical_dir(&self.workspace.join(dir), "cwd")?;
        if !resolved.starts_with(&self.workspace) {
            return Err(Error::invalid(format!(
                "cwd {dir} resolves to {}, outside the workspace {}: choose a directory inside the workspace",
                resolved.display(),
                self.workspace.display()
            )));
        }
        Ok(resolved)
    }

    fn exec_step(
        &self,
        request: &ExecRequest,
        cwd: Result<PathBuf>,
        step: StepRef,
        options: CallOptions,
    ) -> Result<ExecOutcome> {
        request.validate()?;
        let cwd = cwd?;
        let env = self.env.build(&request.env)?;
        let timeout = request.timeout.unwrap_or(self.config.timeout);
        let path_var = env
            .iter()
            .find(|(k, _)| k == "PATH")
            .map(|(_, v)| v.as_str());
        let program_name = &request.argv[0];
        let mut unit = ProcessGroup::new();
        let began = Instant::now();

        let program = match resolve::program(program_name, path_var, &cwd) {
            Ok(p) => p,
            Err(u) => {
                return Ok(self.finish(
                    request,
                    step,
                    None,
                    cwd,
                    Status::Unavailable {
                        program: u.program,
                        reason: u.reason,
                    },
                    began.elapsed(),
                    [Captured::default(), Captured::default()],
                    0,
                    unit.name(),
                ));
            }
        };

        let mut sinks = [
            self.sink(step, "stdout", options.stdout),
            self.sink(step, "stderr", options.stderr),
        ];
        let spawned = spawn::spawn(
            spawn::Stage {
                program: &program,
                argv: &request.argv,
                cwd: &cwd,
                env: &env,
                stdin: Stdio::null(),
                stdout: Stdio::piped(),
                stderr: Stdio::piped(),
            },
            &mut unit,
        );
        let mut child = match spawned {
            Ok(child) => child,
            Err(e) => {
                let reason = format!(
                    "`{program_name}` ({}) could not be started: {e}",
                    program.display()
                );
                return Ok(self.finish(
                    request,
                    step,
                    Some(program),
                    cwd,
                    Status::Unavailable {
                        program: program_name.clone(),
                        reason,
                    },
                    began.elapsed(),
                    [Captured::default(), Captured::default()],
                    0,
                    unit.name(),
                ));
            }
        };
        let pipes: Vec<(OwnedFd, usize)> = [
            child.stdout.take().map(|p| (OwnedFd::from(p), 0)),
            child.stderr.take().map(|p| (OwnedFd::from(p), 1)),
        ]
        .into_iter()
        .flatten()
        .collect();
        let limits = Limits {
            deadline: Some(began + timeout),
            kill_grace: self.config.kill_grace,
            drain_grace: self.config.drain_grace,
        };
        let started = Started {
            children: vec![child],
            pipes,
        };
        let ended = supervise::watch(started, &unit, &mut sinks, limits, options.cancel.as_ref())
            .map_err(|e| Error::io(format!("watching `{program_name}`"), e))?;
        let wall = began.elapsed();
        let status = if ended.cancelled {
            Status::Cancelled
        } else if ended.timed_out {
            Status::TimedOut { after: timeout }
        } else {
            status_of(ended.statuses[0])
        };
        let [out, err] = sinks.map(Sink::finish);
        Ok(self.finish(
            request,
            step,
            Some(program),
            cwd,
            status,
            wall,
            [out, err],
            ended.leftovers,
            unit.name(),
        ))
    }

    fn sink(&self, step: StepRef, stream: &str, tee: Option<Box<dyn Write + Send>>) -> Sink {
        let sink = Sink::new(self.capture_dir.join(format!("{}.{stream}", step.seq)));
        match tee {
            Some(tee) => sink.with_tee(tee),
            None => sink,
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn finish(
        &self,
        request: &ExecRequest,
        step: StepRef,
        program: Option<PathBuf>,
        cwd: PathBuf,
        status: Status,
        wall: Duration,
        captured: [Captured; 2],
        leftovers: usize,
        containment: &'static str,
    ) -> ExecOutcome {
        let [out, err] = captured;
        let (out_budget, err_budget) =
            capture::split_budget(self.config.output_budget, out.bytes, err.bytes);
        let stdout = report(out, out_budget);
        let stderr = report(err, err_budget);
        let observation = render::observation(&status, wall, &stdout, &stderr, leftovers, step.id);
        ExecOutcome {
            step,
            status,
            argv: request.argv.clone(),
            program,
            cwd,
            wall,
            stdout,
            stderr,
            leftovers_ended: leftovers,
            containment,
            observation,
        }
    }
}

fn report(captured: Captured, budget: usize) -> StreamReport {
    let window = capture::window(&captured, budget).unwrap_or_else(|e| capture::Window {
        head: format!("[output could not be read back from its capture file: {e}]"),
        ..capture::Window::default()
    });
    StreamReport {
        bytes: captured.bytes,
        lines: captured.lines,
        window,
        capture: captured.path,
    }
}

fn status_of(status: ExitStatus) -> Status {
    match (status.code(), status.signal()) {
        (Some(code), _) => Status::Exited { code },
        (None, Some(signal)) => Status::Signaled { signal },
        (None, None) => Status::Exited { code: -1 },
    }
}

fn path_string(p: &Option<PathBuf>) -> Option<String> {
    p.as_deref().map(Path::display).map(|d| d.to_string())
}

fn done(outcome: &ExecOutcome) -> StepDone {
    let (exit_code, signal) = match &outcome.status {
        Status::Exited { code } => (Some(*code), None),
        Status::Signaled { signal } => (None, Some(*signal)),
        _ => (None, None),
    };
    StepDone {
        argv_json: match outcome.status {
            Status::Unavailable { .. } => "null".into(),
            _ => serde_json::to_string(&outcome.argv).unwrap_or_default(),
        },
        duration_ms: outcome.wall.as_millis() as i64,
        exit_code,
        signal,
        timed_out: matches!(outcome.status, Status::TimedOut { .. }),
        outcome: outcome.status.outcome().into(),
        stdout_bytes: outcome.stdout.bytes,
        stderr_bytes: outcome.stderr.bytes,
        stdout_path: path_string(&outcome.stdout.capture),
        stderr_path: path_string(&outcome.stderr.capture),
        observation: outcome.observation.clone(),
        error: match &outcome.status {
            Status::Unavailable { reason, .. } => Some(reason.clone()),
            _ => None,
        },
    }
}

fn refused(err: &Error, elapsed: Duration) -> StepDone {
    StepDone {
        argv_json: "null".into(),
        duration_ms: elapsed.as_millis() as i64,
        exit_code: None,
        signal: None,
        timed_out: false,
        outcome: "invalid".into(),
        stdout_bytes: 0,
        stderr_bytes: 0,
        stdout_path: None,
        stderr_path: None,
        observation: format!("error: {err}"),
        error: Some(err.to_string()),
    }
}
