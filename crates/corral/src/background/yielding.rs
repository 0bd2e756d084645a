//! `yield_ms`: a foreground call that becomes a handle if it is still running.

use std::time::{Duration, Instant};

use super::pty;
use crate::call::{CallOptions, Prepared};
use crate::error::Result;
use crate::handle::request::{HandleState, Poll, PollRequest, Started};
use crate::handle::table::Found;
use crate::job::Ended;
use crate::outcome::{Outcome, Status, StepRef};
use crate::request::ExecRequest;
use crate::run::Run;
use crate::shell::ShellRequest;

impl Run {
    /// `exec` with `yield_ms` (see [`Run::yielding`]).
    pub(crate) fn exec_yielding(&self, request: &ExecRequest, ms: u64) -> Result<Outcome> {
        self.yielding(
            "exec",
            serde_json::to_string(request).unwrap_or_default(),
            request.cwd.as_ref().map(crate::os_text::OsText::as_path),
            |cwd| self.ctx.prepare_exec(request, cwd),
            ms,
            request.timeout.is_some(),
        )
    }

    /// `shell` with `yield_ms` (see [`Run::yielding`]).
    pub(crate) fn shell_yielding(&self, request: &ShellRequest, ms: u64) -> Result<Outcome> {
        self.yielding(
            "shell",
            serde_json::to_string(request).unwrap_or_default(),
            request.cwd.as_deref().map(std::path::Path::new),
            |cwd| self.ctx.prepare_line(request, cwd),
            ms,
            request.timeout.is_some(),
        )
        .map(|outcome| crate::shell::host_note(request, outcome))
    }

    /// `exec`/`shell` with `yield_ms`: started as a handle, waited on for up to `ms`. If it
    /// ends in time, the outcome is as for a foreground call (its output merged, as a
    /// terminal shows it; the directory a last `cd` entered kept; protected paths that
    /// appeared reported; a sandbox denial offered its rerun); otherwise the outcome
    /// says `Running` with the handle id and the output so far, and polls continue from
    /// there. Either way its step row is a foreground call's: argv, status, duration,
    /// containment. At the run's handle cap it runs in the foreground: only a call still
    /// running at the end of its wait needs a handle's slot, and a refusal would cost the
    /// model a call for nothing.
    pub(crate) fn yielding(
        &self,
        tool: &str,
        call_json: String,
        cwd: Option<&std::path::Path>,
        prepare: impl FnOnce(std::path::PathBuf) -> Result<Prepared>,
        ms: u64,
        timeout: bool,
    ) -> Result<Outcome> {
        if self.handles_running() >= self.ctx.config.max_handles {
            return self
                .ctx
                .call(tool, call_json, cwd, CallOptions::default(), prepare);
        }
        let began = Instant::now();
        self.ctx.checked(
            tool,
            call_json,
            cwd,
            prepare,
            |prepared, step| {
                // A time limit the call asked for still holds once it is a handle.
                let limit = timeout.then_some(prepared.timeout);
                let start = prepared.plan.start.logical.clone();
                let sandbox = &self.ctx.config.sandbox;
                let retry = sandbox.mode.is_sandboxed().then(|| prepared.clone());
                let absent = crate::sandbox::appeared::Absent::before(sandbox, &self.ctx.workspace);
                let mark = self.ctx.proxy_mark();
                let started = self.spawn_handle(prepared, step, pty::Mode::Pipe, limit)?;
                let Found::Live(live) = self.find(started.handle)? else {
                    unreachable!("a handle just started is live")
                };
                live.wait_for_end(Duration::from_millis(ms).saturating_sub(began.elapsed()));
                if live.progress().state != HandleState::Running {
                    // Its watcher has recorded the end; the output is complete.
                    live.join();
                }
                let poll = self.shell_poll(&PollRequest {
                    handle: started.handle,
                    wait_ms: None,
                    strip_ansi: None,
                })?;
                // After the poll: a line that ended once it was read has its end here too
                // (the watcher sets the state and these at once).
                let (ended_in, stages) = {
                    let progress = live.progress();
                    (progress.ended_in.clone(), progress.stages.clone())
                };
                drop(live);
                let handle = started.handle;
                let mut outcome = self.yielded(step, started, stages, poll, began.elapsed());
                if matches!(outcome.status, Status::Running { .. }) {
                    self.watch_protected(handle, step, absent);
                    return Ok(outcome);
                }
                // Ended within its wait: what a foreground call's end does.
                self.ctx.keep_cwd(&start, ended_in, &mut outcome);
                absent.report_appeared(&mut outcome, self.ctx.quarantine_dir(step).as_deref());
                self.ctx
                    .settle_held(self.take_handle_held(handle), step, &mut outcome);
                let outcome = match retry {
                    Some(retry) => {
                        self.ctx.settle_proxy(mark);
                        self.ctx.after_sandboxed(step, retry, mark, outcome, None)?
                    }
                    None => outcome,
                };
                self.ctx.record_stub_refusals(&outcome);
                Ok(outcome)
            },
            |outcome| crate::call::done(tool, outcome),
        )
    }

    /// The outcome of a call that yielded: `poll` is what it printed until it ended or
    /// its wait did; `stages`, how each stage ended, once the line did.
    fn yielded(
        &self,
        step: StepRef,
        started: Started,
        stages: Option<Vec<crate::outcome::StageReport>>,
        poll: Poll,
        wall: Duration,
    ) -> Outcome {
        let status = match &poll.state {
            HandleState::Running => Status::Running {
                handle: started.handle,
            },
            HandleState::Exited { status } => status.clone(),
            HandleState::Killed | HandleState::RunEnded | HandleState::Orphaned => {
                Status::Cancelled
            }
        };
        let stdout = crate::outcome::StreamReport {
            bytes: poll.bytes + poll.skipped_bytes,
            lines: poll.output.lines().count() as u64,
            window: crate::capture::Window {
                head: poll.output.clone(),
                omitted_bytes: poll.skipped_bytes,
                ..Default::default()
            },
            capture_error: None,
            capture: Some(
                self.ctx
                    .capture_dir
                    .join(format!("handle-{}.out", started.handle)),
            ),
        };
        let ended = Ended {
            last: Some(status.clone()),
            status,
            stages: stages.unwrap_or(started.stages),
            wall,
            leftovers: 0,
            containment: started.containment,
            ended_in: None,
        };
        let mut outcome = self.ctx.outcome_of(
            step,
            ended,
            [stdout, crate::outcome::StreamReport::default()],
            crate::output::Source::Handle(started.handle),
        );
        if let Some(report) = started.sandbox {
            crate::sandbox::annotate(&mut outcome, report, &self.ctx.sandbox_shown);
        }
        outcome
    }
}
