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
use crate::outcome::Status;
use crate::pipeline::Outputs;
use crate::spawn;
use crate::supervise::{Limits, Watch};

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
    pub(super) fn watch(
        self,
        plan: crate::plan::Plan,
        env: Vec<crate::env::Var>,
        outputs: Outputs,
        reader: OwnedFd,
        stdin: Option<OwnedFd>,
        mut unit: Box<dyn spawn::Containment>,
    ) {
        let mut sinks =
            [Sink::new(self.live.capture.clone(), self.cap).with_tee(pty::tee(&self.live))];
        let limits = Limits {
            deadline: self.limit.map(|l| std::time::Instant::now() + l),
            kill_grace: self.kill_grace,
            drain_grace: self.drain_grace,
        };
        let cancel = self.live.cancel.clone();
        let mut watch = Watch::new(vec![(reader, 0)], &mut sinks, limits, Some(&cancel));
        let ran = pty::run_line(
            &plan, &env, &outputs, stdin, &self.live, &mut watch, &mut unit,
        );
        drop(outputs);
        let (cancelled, timed_out) = (watch.cancelled, watch.timed_out);
        let _ = watch.finish(&unit);
        let memory_exceeded = unit.memory_exceeded();
        drop(unit);
        let ended_in = ran.as_ref().ok().and_then(|r| r.ended_in.clone());
        let status = match ran {
            Ok(r) => crate::job::ended(
                r.status,
                false,
                timed_out,
                self.limit.unwrap_or_default(),
                memory_exceeded,
            ),
            Err(e) => Status::Unavailable {
                program: String::new(),
                reason: format!("the handle failed: {e}"),
                code: 126,
            },
        };
        let state = {
            let progress = self.live.progress();
            match (&progress.ending, cancelled) {
                (Some(how), true) => how.clone(),
                _ => HandleState::Exited {
                    status: status.clone(),
                },
            }
        };
        let (exit_code, signal) = status.code_and_signal();
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
            p.ended_in = ended_in;
        });
    }
}
