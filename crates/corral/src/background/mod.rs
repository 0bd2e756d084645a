//! Background handles: `shell_start`, `shell_poll`, `shell_kill`.
//!
//! A handle is a different lifetime for a command line, not a second way to run one: the
//! line is parsed, planned and checked by exactly the machinery `shell` uses, all before
//! the first spawn. What changes is what happens after: no wall-clock timeout, the output
//! (stdout and stderr together, as a terminal shows them) goes to a capture file outside
//! the workspace and never to a growing buffer, and the handle lives until it exits, is
//! killed, or the run ends.
//!
//! - **Poll** reads from a byte cursor: what was printed since the previous poll, at most
//!   [`Config::poll_window`](crate::Config::poll_window) bytes. When more is waiting the
//!   newest bytes are returned, the poll says how many it skipped, and the cursor moves
//!   past them. A poll may wait (`wait_ms`) for output or the exit. Every byte a poll
//!   returns is appended to `handle_output` as it is read.
//! - **Kill** ends the handle and everything it started; killing an ended handle reports
//!   how it ended.
//! - **The cap**: [`Config::max_handles`](crate::Config::max_handles) live handles per
//!   run (8 by default); the next start is refused, not queued.
//! - **The end of the run** ends every live handle, however the run ends: closed, dropped,
//!   an error carried out, a panic. A run reopened in another process reports the
//!   handles the old process left as orphaned: never re-attached, polled or signalled,
//!   since a pid is not an identity.
//! - **Interactive handles** (see `pty`): `tty: true` runs one command (no pipeline, no
//!   redirect: "a terminal session runs one command") on a pseudo-terminal with
//!   `TERM=xterm-256color`; `stdin: true` gives a pipe handle a writable stdin.
//!   `shell_write` and `shell_keys` (tmux key names) send input and return what the
//!   program printed within the yield window (250 ms by default, at most 30 s; early once
//!   it printed and went quiet for 50 ms, or exited); `shell_screen` renders the screen
//!   with `vt100`, which also answers what the program asks its terminal (cursor position,
//!   device attributes, colours: `queries`); `shell_resize` sends SIGWINCH. A poll of a
//!   terminal handle strips escape sequences unless `strip_ansi: false`. Each of these
//!   calls is a step row of its own, its request (handle and what was sent) in
//!   `call_json` (a person typing on an attached terminal: only how many bytes).
//! - **What is typed is not checked.** The policy decides whether a shell or REPL may
//!   start on a terminal (by default it asks); the commands then typed into it are not
//!   checked by corral's policy, as they would not be for a person at that terminal.
//!   Where a rule holds by its arguments (`git push*`), a shell or REPL started for a
//!   model's typed input (a terminal corral emulates, a stdin pipe) is asked about.

mod pty;
mod watch;
mod watcher;
mod yielding;

use std::sync::Arc;
use std::time::Duration;

use corral_trace::{NewHandle, StepDone};

use crate::handle::request::{
    HandleState, KillRequest, Poll, PollRequest, SignalRequest, StartRequest, Started,
};

use crate::call::Prepared;
use crate::clock::now_ms;
use crate::error::{Error, ErrorKind, Result};
use crate::handle::live::Live;
use crate::handle::table::{Found, Handles, orphan_poll};
use crate::outcome::{StageReport, StepRef};
use crate::run::Run;
use watcher::Watcher;

/// How long `shell_signal` waits for the handle to answer (or end) before it shows what
/// it printed.
const SIGNAL_ANSWER: Duration = Duration::from_millis(500);

impl Run {
    fn handles(&self) -> std::sync::MutexGuard<'_, Handles> {
        self.handles.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// See [`Run::shell_start`].
    pub(crate) fn start_handle(&self, request: &StartRequest) -> Result<Started> {
        let call_json = serde_json::to_string(request).unwrap_or_default();
        let shell = crate::ShellRequest {
            line: request.line.clone(),
            cwd: request.cwd.clone(),
            timeout: None,
            yield_ms: None,
            max_output: None,
        };
        self.ctx.checked(
            // A terminal start is its own tool in the trace.
            if request.tty {
                "shell_start_tty"
            } else {
                "shell_start"
            },
            call_json,
            request.cwd.as_deref().map(std::path::Path::new),
            |cwd| {
                self.check_handle_cap()?;
                let mode = pty::Mode::of(request)?;
                let mut prepared = self.ctx.prepare_line(&shell, cwd)?;
                mode.fit(&mut prepared)?;
                Ok(prepared)
            },
            |prepared, step| {
                let absent = crate::sandbox::appeared::Absent::before(
                    &self.ctx.config.sandbox,
                    &self.ctx.workspace,
                );
                let mut started =
                    self.spawn_handle(prepared, step, pty::Mode::of(request)?, None)?;
                // The sandbox's status line, where this run has not shown it yet.
                if let Some(report) = started
                    .sandbox
                    .as_ref()
                    .filter(|r| r.mode != crate::sandbox::SandboxMode::Full)
                {
                    let status = report.status();
                    if self.ctx.sandbox_shown.fresh(&status) {
                        started.observation.push_str(&status);
                        started.observation.push('\n');
                    }
                }
                self.watch_protected(started.handle, step, absent);
                Ok(started)
            },
            |started| StepDone {
                argv_json: serde_json::to_string(
                    &started.stages.iter().map(|s| &s.argv).collect::<Vec<_>>(),
                )
                .unwrap_or_default(),
                outcome: "started".into(),
                observation: started.observation.clone(),
                containment: Some(started.containment.to_string()),
                ..StepDone::default()
            },
        )
    }

    /// How many of the run's handles are still running.
    pub(crate) fn handles_running(&self) -> usize {
        self.handles().running()
    }

    fn check_handle_cap(&self) -> Result<()> {
        let running = self.handles().running();
        if running >= self.ctx.config.max_handles {
            return Err(Error::invalid(format!(
                "this run already has {running} live handles, the most it may have ({}): kill one with \
                 shell_kill before starting another",
                self.ctx.config.max_handles
            )));
        }
        Ok(())
    }

    pub(crate) fn spawn_handle(
        &self,
        prepared: Prepared,
        step: StepRef,
        mode: pty::Mode,
        limit: Option<Duration>,
    ) -> Result<Started> {
        let Prepared {
            plan,
            mut env,
            line,
            ..
        } = prepared;
        let id = {
            let mut handles = self.handles();
            handles.next += 1;
            handles.next
        };
        let stages: Vec<StageReport> = plan.stage_reports();
        // Recorded before anything of it starts, as a foreground call is.
        let files = self
            .ctx
            .recorder
            .as_ref()
            .filter(|_| crate::recorded::may_write(&plan))
            .and_then(|recorder| crate::undo::HandleFiles::start(recorder, &self.ctx.id, step.id));
        let mut job = crate::job::Job::start(
            &self.ctx,
            &format!("handle-{id}"),
            &self.ctx.config.sandbox,
            &plan,
            &mut env,
            crate::spawn::NamespaceAhead::default(),
            mode.is_terminal(),
        )?;
        crate::env::unbuffered(&mut env);
        if let Some(held) = job.take_held() {
            self.ctx
                .handle_held
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push((id, held));
        }
        let report = job.report().clone();
        let containment = job.containment();
        let pty::Wiring {
            outputs,
            reader,
            stdin,
            mut input,
        } = pty::Wiring::new(mode)?;
        if let Some(input) = input.as_mut().filter(|i| i.term.is_none())
            && let [stage] = stages.as_slice()
            && corral_policy::stdin_script::shell_reading_commands(&stage.argv)
        {
            input.lines = Some(crate::handle::input::LineCheck::new(stage.cwd.clone()));
        }
        let live = Arc::new(
            Live::new(
                id,
                // The line as it was asked; an argv (a yielded `exec`) as corral shows one.
                line.unwrap_or_else(|| self.line_of(&plan)),
                self.ctx.capture_dir.join(format!("handle-{id}.out")),
                self.ctx.config.handle_capture_cap,
                input,
                files,
            )
            .map_err(|e| Error::io("creating a cancel token", e))?,
        );
        // In the table first (the cap and the run's end are checked there), then its row:
        // a start refused at either writes no row, and a row once written always ends.
        self.register(id, &live)?;
        if let Err(e) = self.record_start(step, &live, &stages, containment) {
            self.handles().live.remove(&id);
            return Err(e);
        }
        let watcher = Watcher {
            live: Arc::clone(&live),
            store: Arc::clone(&self.ctx.store),
            run_id: self.ctx.id.clone(),
            observer: self.handles().observer.clone(),
            kill_grace: self.ctx.config.kill_grace,
            drain_grace: self.ctx.config.drain_grace,
            cap: self.ctx.config.handle_capture_cap,
            limit,
        };
        let thread = std::thread::Builder::new()
            .name(format!("corral-handle-{id}"))
            .spawn(move || watcher.watch(job, plan, env, outputs, reader, stdin))
            .map_err(|e| {
                self.handles().live.remove(&id);
                // Nothing started: the row says so rather than running for ever.
                let _ = self.ctx.store().record_handle_end(
                    &self.ctx.id,
                    id,
                    now_ms(),
                    HandleState::Exited {
                        status: crate::outcome::Status::Cancelled,
                    }
                    .word(),
                    None,
                    None,
                );
                Error::io("starting the handle's watcher", e)
            })?;
        *live.thread.lock().unwrap_or_else(|e| e.into_inner()) = Some(thread);
        self.ctx.record_sandbox(step, Some(&report))?;
        Ok(started(id, mode, stages, containment, report))
    }

    /// The handle's row, before anything of it starts.
    fn record_start(
        &self,
        step: StepRef,
        live: &Live,
        stages: &[StageReport],
        containment: &str,
    ) -> Result<()> {
        let argvs: Vec<&Vec<String>> = stages.iter().map(|s| &s.argv).collect();
        self.ctx.store().record_handle_start(&NewHandle {
            run_id: self.ctx.id.clone(),
            handle: live.id,
            step_id: Some(step.id),
            line: live.line.clone(),
            stages_json: serde_json::to_string(&argvs).unwrap_or_default(),
            pids_json: "[]".into(),
            containment: containment.to_string(),
            capture_path: Some(live.capture.display().to_string()),
            owner_pid: std::process::id(),
            started_at_ms: self.ctx.stamp(),
        })?;
        Ok(())
    }

    /// Put `live` in the run's table, unless the run has ended or has as many live handles
    /// as it may.
    fn register(&self, id: u32, live: &Arc<Live>) -> Result<()> {
        // Nothing has started yet: the watcher starts the processes. Checking the cap
        // and the run's end and registering the handle under one lock means two
        // starts cannot both take the last slot, and a run that is ending either sees
        // this handle (and ends it) or this start sees the run ended.
        let mut handles = self.handles();
        if self.ctx.is_ended() {
            return Err(Error::new(
                ErrorKind::Closed,
                "this run has ended: open a new run to start more handles",
            ));
        }
        let running = handles.running();
        if running >= self.ctx.config.max_handles {
            return Err(Error::invalid(format!(
                "this run already has {running} live handles, the most it may have ({}): kill one \
                 with shell_kill before starting another",
                self.ctx.config.max_handles
            )));
        }
        handles.live.insert(id, Arc::clone(live));
        Ok(())
    }

    /// A plan given as an argv, shown as one.
    fn line_of(&self, plan: &crate::plan::Plan) -> String {
        plan.stages()
            .map(|s| corral_line::display_argv(&s.argv))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// See [`Run::shell_poll`].
    pub(crate) fn poll_handle(&self, request: &PollRequest) -> Result<Poll> {
        self.ctx.ensure_open()?;
        let live = match self.find(request.handle)? {
            Found::Live(live) => live,
            Found::Retired(id, retired) => return Ok(retired_poll(id, retired)),
            Found::Orphan(row) => return Ok(orphan_poll(&row)),
        };
        let wait = Duration::from_millis(request.wait_ms.unwrap_or(0).min(600_000));
        let (state, layout, from, to, skipped) = {
            let mut progress = live.wait_for_news(wait);
            let layout = progress.layout;
            let to = layout.total;
            let window = self.ctx.config.poll_window as u64;
            let from = progress.cursor.max(to.saturating_sub(window));
            // Bytes the cap already dropped count as skipped too: they cannot be returned.
            let held_from = layout.first_held(from);
            let skipped = held_from - progress.cursor;
            // Where the skipped bytes are, while the capture still holds them in order.
            let read_skipped = (skipped > 0 && layout.dropped() == 0).then(|| {
                self.ctx.pointer().call(
                    crate::output::Source::Handle(live.id),
                    ("bytes", &format!("{}-{}", progress.cursor, held_from - 1)),
                )
            });
            progress.cursor = to;
            (
                progress.state.clone(),
                layout,
                held_from,
                to,
                (skipped, read_skipped),
            )
        };
        let bytes = live
            .read(layout, from, to)
            .map_err(|e| Error::io("reading the handle's capture", e))?;
        // What it changed so far is its step's (its end is recorded by its watcher, before
        // a poll can see it ended).
        if state == HandleState::Running
            && let Some(files) = &live.files
        {
            files.update(&self.ctx.store)?;
        }
        let (skipped, read_skipped) = skipped;
        if !bytes.is_empty() || skipped > 0 {
            self.ctx.store().record_handle_output(
                &self.ctx.id,
                live.id,
                now_ms(),
                from,
                skipped,
                &bytes,
            )?;
        }
        let answer = poll_answer(
            live.id,
            state,
            &pty::shown(&live, &bytes, request.strip_ansi),
            (skipped, read_skipped.as_deref()),
            layout.dropped(),
        );
        if answer.state != HandleState::Running && to == layout.total {
            self.retire_handle(&live, &answer.state, layout);
        }
        Ok(answer)
    }

    /// Drop an ended handle whose last output a poll just returned, keeping what a later
    /// poll, kill or read of it needs: the run's table holds no process, thread or buffer
    /// of a handle nobody can drive any more. A handle with an input (a terminal, a stdin
    /// pipe) stays whole: its screen can still be looked at.
    fn retire_handle(&self, live: &Arc<Live>, state: &HandleState, layout: crate::capture::Layout) {
        if live.input.is_some() {
            return;
        }
        live.join();
        let mut handles = self.handles();
        if handles.live.remove(&live.id).is_some() {
            handles.retired.insert(
                live.id,
                crate::handle::table::Retired {
                    state: state.clone(),
                    capture: live.capture.clone(),
                    layout,
                },
            );
        }
    }

    /// See [`Run::shell_poll_until`].
    pub(crate) fn poll_handle_until(
        &self,
        request: &PollRequest,
        cancel: Option<&crate::Cancel>,
    ) -> Result<Poll> {
        const SLICE: Duration = Duration::from_millis(100);
        let Some(cancel) = cancel else {
            return self.poll_handle(request);
        };
        let deadline =
            std::time::Instant::now() + Duration::from_millis(request.wait_ms.unwrap_or(0));
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            let slice = PollRequest {
                wait_ms: Some(left.min(SLICE).as_millis() as u64),
                ..request.clone()
            };
            let poll = self.poll_handle(&slice)?;
            let news = poll.bytes > 0 || poll.skipped_bytes > 0;
            if news || poll.state != HandleState::Running || left <= SLICE || cancel.is_cancelled()
            {
                return Ok(poll);
            }
        }
    }

    /// See [`Run::shell_kill`].
    pub(crate) fn kill_handle(&self, request: &KillRequest) -> Result<Poll> {
        self.ctx.ensure_open()?;
        let live = match self.find(request.handle)? {
            Found::Live(live) => live,
            Found::Retired(id, retired) => return Ok(retired_poll(id, retired)),
            Found::Orphan(row) => return Ok(orphan_poll(&row)),
        };
        end_handle(&live, HandleState::Killed);
        self.shell_poll(&PollRequest {
            handle: request.handle,
            wait_ms: None,
            strip_ansi: None,
        })
    }

    /// See [`Run::shell_signal`].
    pub(crate) fn signal_handle(&self, request: &SignalRequest) -> Result<Poll> {
        let call_json = serde_json::to_string(request).unwrap_or_default();
        self.interaction("shell_signal", call_json, |run| run.send_signal(request))
    }

    fn send_signal(&self, request: &SignalRequest) -> Result<Poll> {
        let signal = request.signal()?;
        let live = match self.find(request.handle)? {
            Found::Live(live) => live,
            Found::Retired(id, retired) => return Ok(retired_poll(id, retired)),
            Found::Orphan(row) => return Ok(orphan_poll(&row)),
        };
        if live.progress().state == HandleState::Running {
            live.cancel.send(signal);
        }
        live.wait_for_end(SIGNAL_ANSWER);
        self.shell_poll(&PollRequest {
            handle: request.handle,
            wait_ms: None,
            strip_ansi: None,
        })
    }

    /// End every live handle because the run ends.
    pub(crate) fn end_handles(&self) {
        let live: Vec<Arc<Live>> = self.handles().live.values().cloned().collect();
        for handle in &live {
            if handle.progress().state == HandleState::Running {
                handle
                    .progress()
                    .ending
                    .get_or_insert(HandleState::RunEnded);
                handle.cancel.cancel();
            }
        }
        for handle in &live {
            handle.join();
        }
    }

    pub(crate) fn find(&self, id: u32) -> Result<Found> {
        let handles = self.handles();
        if let Some(live) = handles.live.get(&id) {
            return Ok(Found::Live(Arc::clone(live)));
        }
        if let Some(retired) = handles.retired.get(&id) {
            return Ok(Found::Retired(id, retired.clone()));
        }
        if let Some(row) = handles.orphans.get(&id) {
            return Ok(Found::Orphan(Box::new(row.clone())));
        }
        let known: Vec<String> = handles
            .live
            .keys()
            .chain(handles.retired.keys())
            .chain(handles.orphans.keys())
            .map(u32::to_string)
            .collect();
        Err(Error::new(
            ErrorKind::InvalidRequest,
            if known.is_empty() {
                format!(
                    "there is no handle {id}: this run has started none; start one with shell_start"
                )
            } else {
                format!(
                    "there is no handle {id}: this run's handles are {}",
                    known.join(", ")
                )
            },
        ))
    }
}

/// What starting a handle answers: its id, where it runs, and how to follow it.
fn started(
    id: u32,
    mode: pty::Mode,
    stages: Vec<StageReport>,
    containment: &'static str,
    report: crate::sandbox::SandboxReport,
) -> Started {
    Started {
        handle: id,
        observation: format!(
            "started handle {id} ({containment}): poll it with shell_poll, end it with shell_kill.{}\n",
            mode.note()
        ),
        stages,
        containment,
        sandbox: Some(report),
    }
}

/// Ask the watching thread to end the handle, and wait until it has.
fn end_handle(live: &Live, how: HandleState) {
    {
        let mut progress = live.progress();
        if progress.state != HandleState::Running {
            return;
        }
        progress.ending.get_or_insert(how);
    }
    live.cancel.cancel();
    live.join();
}

/// A poll of a handle that ended and was read to its end: how it ended, nothing new.
fn retired_poll(id: u32, retired: crate::handle::table::Retired) -> Poll {
    poll_answer(id, retired.state, &[], (0, None), retired.layout.dropped())
}

/// A poll's answer; `skipped` counts the bytes not shown and names the call that reads
/// them, while the capture still holds them.
fn poll_answer(
    handle: u32,
    state: HandleState,
    bytes: &[u8],
    (skipped, read_skipped): (u64, Option<&str>),
    dropped: u64,
) -> Poll {
    let output = String::from_utf8_lossy(bytes).into_owned();
    let mut observation = match &state {
        HandleState::Running => format!("handle {handle}: running"),
        HandleState::Exited { status } => {
            format!(
                "handle {handle}: {}",
                crate::render::status_line(status, Duration::ZERO)
                    .split(" · ")
                    .next()
                    .unwrap_or_default()
            )
        }
        HandleState::Killed => format!("handle {handle}: killed, with everything it started"),
        HandleState::RunEnded => format!("handle {handle}: ended with the run"),
        HandleState::Orphaned => format!("handle {handle}: orphaned"),
    };
    observation.push('\n');
    match (skipped, read_skipped) {
        (0, _) => {}
        (_, Some(call)) => observation.push_str(&format!(
            "[… {skipped} earlier bytes skipped: only the newest are shown; read them with {call} …]\n"
        )),
        (_, None) => observation.push_str(&format!(
            "[… {skipped} earlier bytes skipped: only the newest are shown …]\n"
        )),
    }
    if bytes.is_empty() {
        observation.push_str("(no new output)\n");
    } else {
        observation.push_str(&output);
        if !output.ends_with('\n') {
            observation.push('\n');
        }
    }
    Poll {
        handle,
        state,
        bytes: bytes.len() as u64,
        output,
        skipped_bytes: skipped,
        dropped_bytes: dropped,
        observation,
    }
}
