//! The thread that watches one handle: it runs the line, feeds the capture, and records
//! how the handle ended (and tells the run's observer).

use std::os::fd::OwnedFd;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::pty;
use crate::capture::Sink;
use crate::clock::now_ms;
use crate::handle::live::Live;
use crate::handle::request::{HandleEvent, HandleState};
use crate::handle::table::ExitObserver;
use crate::job::{Job, Line, Watching};
use crate::outcome::Status;
use crate::pipeline::Outputs;

/// What the watching thread needs, owned.
pub(super) struct Watcher {
    pub(super) live: Arc<Live>,
    pub(super) store: Arc<Mutex<corral_trace::Store>>,
    pub(super) run_id: String,
    pub(super) observer: Option<ExitObserver>,
    pub(super) kill_grace: Duration,
    pub(super) drain_grace: Duration,
    pub(super) cap: u64,
    /// A time limit, for a call that became a handle with its own timeout.
    pub(super) limit: Option<Duration>,
}

impl Watcher {
    /// Run `job`'s line to its end on this thread (see [`crate::job`]), then record and
    /// announce how the handle ended.
    pub(super) fn watch(
        self,
        job: Job,
        plan: crate::plan::Plan,
        env: Vec<crate::env::Var>,
        outputs: Outputs,
        reader: OwnedFd,
        stdin: Option<OwnedFd>,
    ) {
        let mut sinks =
            [Sink::new(self.live.capture.clone(), self.cap).with_tee(pty::tee(&self.live))];
        let cancel = self.live.cancel.clone();
        let line = Line {
            plan: &plan,
            env: &env,
            outputs,
            readers: vec![(reader, 0)],
            stdin,
            report_unavailable: true,
        };
        let watching = Watching {
            timeout: self.limit,
            kill_grace: self.kill_grace,
            drain_grace: self.drain_grace,
            cancel: Some(&cancel),
        };
        let live = &self.live;
        let ended = job.wait(
            line,
            &mut sinks,
            watching,
            || {
                if let Some(input) = &live.input {
                    input.close();
                }
            },
            |unit| live.remains.retire(unit),
        );
        let state = {
            let progress = self.live.progress();
            match (&progress.ending, &ended.status) {
                (Some(how), Status::Cancelled) => how.clone(),
                (None, Status::Cancelled) => HandleState::Exited {
                    status: ended.last.clone().unwrap_or(Status::Cancelled),
                },
                (_, status) => HandleState::Exited {
                    status: status.clone(),
                },
            }
        };
        // A handle ended from outside keeps, in its row, what its line's end said.
        let (exit_code, signal) = match &ended.status {
            Status::Cancelled => ended.last.as_ref().unwrap_or(&ended.status),
            status => status,
        }
        .code_and_signal();
        // What it changed, whole, before anyone can see it ended.
        if let Some(files) = &self.live.files {
            let _ = files.update(&self.store);
        }
        if let Ok(store) = self.store.lock() {
            let _ = store.record_handle_end(
                &self.run_id,
                self.live.id,
                now_ms(),
                state.word(),
                exit_code,
                signal,
            );
        }
        // The observer first: whoever it tells (an MCP client's announcement, sent at the
        // level asked for at the end) hears of the end no later than a poll shows it.
        if let Some(observer) = &self.observer {
            observer(HandleEvent {
                handle: self.live.id,
                state: state.clone(),
                line: self.live.line.clone(),
            });
        }
        self.live.update(|p| {
            p.state = state;
            p.ended_in = ended.ended_in;
            p.stages = Some(ended.stages);
        });
    }
}
