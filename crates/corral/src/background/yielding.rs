//! `yield_ms`: a foreground call that becomes a handle if it is still running.

use std::time::Duration;

use corral_trace::StepDone;

use super::pty;
use crate::call::{Ended, Prepared};
use crate::error::Result;
use crate::handle::request::{HandleState, PollRequest};
use crate::handle::table::Found;
use crate::outcome::{Outcome, Status};
use crate::run::Run;

impl Run {
    /// `exec`/`shell` with `yield_ms`: started as a handle, waited on for up to `ms`. If it
    /// ends in time, the outcome is as for a foreground call (its output merged, as a
    /// terminal shows it); otherwise the outcome says `Running` with the handle id and the
    /// output so far, and polls continue from there.
    pub(crate) fn yielding(
        &self,
        tool: &str,
        call_json: String,
        cwd: Option<&std::path::Path>,
        prepare: impl FnOnce(std::path::PathBuf) -> Result<Prepared>,
        ms: u64,
        timeout: bool,
    ) -> Result<Outcome> {
        let began = std::time::Instant::now();
        let mut stages_ran = Vec::new();
        let started = self.checked(
            tool,
            call_json,
            cwd,
            |cwd| {
                self.check_handle_cap()?;
                prepare(cwd)
            },
            |prepared, step| {
                // A time limit the call asked for still holds once it is a handle.
                let limit = timeout.then_some(prepared.timeout);
                let started = self.spawn_handle(prepared, step, pty::Mode::Pipe, limit)?;
                stages_ran = started.stages.clone();
                let live = match self.find(started.handle)? {
                    Found::Live(live) => live,
                    Found::Orphan(_) => unreachable!("a handle just started is live"),
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
                Ok((started, poll, step))
            },
            |(_, poll, _)| StepDone {
                argv_json: "null".into(),
                outcome: match &poll.state {
                    HandleState::Running => "running".into(),
                    _ => "exited".into(),
                },
                observation: poll.observation.clone(),
                ..StepDone::default()
            },
        )?;
        let (started, poll, step) = started;
        let status = match &poll.state {
            HandleState::Running => Status::Running {
                handle: started.handle,
            },
            HandleState::Exited { status } => status.clone(),
            _ => Status::Cancelled,
        };
        let wall = began.elapsed();
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
                self.capture_dir
                    .join(format!("handle-{}.out", started.handle)),
            ),
        };
        let ended = Ended {
            status,
            stages: stages_ran,
            wall,
            leftovers: 0,
            containment: started.containment,
        };
        let mut outcome = self.outcome_of(
            step,
            ended,
            [stdout, crate::outcome::StreamReport::default()],
            crate::output::Source::Handle(started.handle),
        );
        if let Some(report) = started.sandbox {
            crate::sandbox::annotate(&mut outcome, report, &self.sandbox_listed);
        }
        Ok(outcome)
    }
}
