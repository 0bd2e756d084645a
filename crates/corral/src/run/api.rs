//! Everything a [`Run`] offers, in one place: each method hands its call to the layer
//! that makes it (the context's calls, `ctx`; the background handles, `background`) and,
//! where an approver aborted the run during the call, ends the run once the call has
//! returned. One method is defined with the layer above, since it dispatches to these:
//! [`Run::call_tool`], with the tools' table (`tools`).

use std::path::{Path, PathBuf};
use std::time::Duration;

use corral_policy::{ApprovalMode, Policy};
use corral_trace::Abandoned;

use super::{Run, RunBuilder};
use crate::call::CallOptions;
use crate::cancel::Cancel;
use crate::config::Config;
use crate::config::sandbox::SandboxConfig;
use crate::error::Result;
use crate::files::{FileOutcome, ListDirRequest, ReadFileRequest, WriteFileRequest};
use crate::handle::request::{
    HandleState, KeysRequest, KillRequest, Poll, PollRequest, ResizeRequest, ScreenRequest,
    SignalRequest, StartRequest, Started, WriteRequest,
};
use crate::handle::screen::Screen;
use crate::host_shell::HostLines;
use crate::outcome::Outcome;
use crate::output::{OutputRequest, OutputView};
use crate::patch::PatchRequest;
use crate::plan::Plan;
use crate::request::ExecRequest;
use crate::shell::ShellRequest;
use crate::undo::UndoRequest;
use crate::verify::{GateVerdict, Verification};

impl Run {
    /// Start opening a run in `workspace`.
    pub fn builder(workspace: impl Into<PathBuf>) -> RunBuilder {
        RunBuilder {
            workspace: workspace.into(),
            store: None,
            config: Config::default(),
            policy: None,
            approval: None,
            approver: None,
            resume: None,
            observer: None,
            keep_log: false,
            housekeeping_in_background: false,
        }
    }

    /// The run's id, as the trace knows it.
    pub fn id(&self) -> &str {
        &self.ctx.id
    }

    /// The workspace root, canonical.
    pub fn workspace(&self) -> &Path {
        &self.ctx.workspace
    }

    /// The configuration every call obeys.
    pub fn config(&self) -> &Config {
        &self.ctx.config
    }

    /// Where this run's trace is.
    pub fn store_path(&self) -> PathBuf {
        self.ctx.store().path().to_path_buf()
    }

    /// End the run and record that it was closed.
    ///
    /// Takes `&self` so a run shared between threads can be closed by whoever ends it;
    /// every live handle is ended first, and later calls are refused.
    pub fn close(&self) -> Result<()> {
        self.end("closed")
    }

    /// [`Run::close`], recorded as `interrupted`: the person (or a service manager)
    /// stopped it before its work was done.
    pub fn close_interrupted(&self) -> Result<()> {
        self.end("interrupted")
    }

    /// [`Run::close`], for a process that exits next, as a command-line call's does. A
    /// trace that keeps its log ([`RunBuilder::keep_trace_log`]) is then not closed but
    /// left to the exit, where the kernel releases its files and locks: its rows are all
    /// written, and such a store's close would write nothing more. What that saves is the
    /// connection's teardown, its memory freed piece by piece (about 60 µs of a
    /// command-line call, BENCHMARKS.md). Everything else of the run is dropped as usual.
    /// A process that goes on after this keeps the connection's memory and files open.
    pub fn close_for_exit(self) -> Result<()> {
        let closed = self.close();
        if self.keep_log {
            std::mem::forget(std::sync::Arc::clone(&self.ctx.store));
        }
        closed
    }

    /// Runs whose corral had died without ending them, which opening this run closed as
    /// `aborted` (with their unfinished steps and live handles). Each is reported by the
    /// one run that closed it, so a caller that shows these says so once.
    pub fn abandoned(&self) -> &[Abandoned] {
        &self.abandoned
    }

    /// The policy every call is checked against.
    pub fn policy(&self) -> &Policy {
        &self.ctx.gate.policy
    }

    /// The approval mode in force.
    pub fn approval_mode(&self) -> ApprovalMode {
        self.ctx.gate.mode
    }

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
        self.said(match request.yield_ms {
            Some(ms) => self.exec_yielding(request, ms),
            None => self.ctx.exec_with(request, options),
        })
    }

    /// Run a command line to its end. A line that is refused runs nothing: the error says
    /// which construct, where, and what to do instead, and the step row records it.
    pub fn shell(&self, request: &ShellRequest) -> Result<Outcome> {
        self.shell_with(request, CallOptions::default())
    }

    /// [`Run::shell`], with live output and cancellation.
    pub fn shell_with(&self, request: &ShellRequest, options: CallOptions) -> Result<Outcome> {
        self.said(match request.yield_ms {
            Some(ms) => self.shell_yielding(request, ms),
            None => self.ctx.shell_with(request, options),
        })
    }

    /// What `request` would run, without running anything or recording a step: the parse,
    /// the plan and every check, exactly as [`Run::shell`] makes them.
    pub fn plan_shell(&self, request: &ShellRequest) -> Result<Plan> {
        self.ctx.plan_shell(request)
    }

    /// Where a line outside the grammar runs in this run: the host-shell mode, the call's
    /// sandbox mode and what this host enforces, decided as a call would decide them.
    pub fn host_lines(&self) -> HostLines {
        self.ctx.host_lines()
    }

    /// Run the gate: `phases` in order, each in `sandbox` with `timeout`, each a step
    /// (`tool = 'verify'`). A phase the policy refuses, or that the host cannot sandbox,
    /// fails the gate with the reason; only a closed run or a trace that cannot be
    /// written is an `Err`. What the policy would ask about is asked, as for any call;
    /// [`Run::verify_approved`] runs a person's own gate without asking.
    pub fn verify(
        &self,
        phases: &[Verification],
        sandbox: &SandboxConfig,
        timeout: Duration,
    ) -> Result<GateVerdict> {
        self.verify_approved(phases, sandbox, timeout, None, None)
    }

    /// [`Run::verify`] for a gate a person set (`--verify`, the task contract, a trusted
    /// `[verify]`): what the policy would ask about runs, recorded as approved by
    /// `approved_by`; a deny still refuses. When `interrupt` fires, the running phase
    /// ends ([`Status::Cancelled`](crate::Status::Cancelled)) and no later phase starts.
    pub fn verify_approved(
        &self,
        phases: &[Verification],
        sandbox: &SandboxConfig,
        timeout: Duration,
        approved_by: Option<&str>,
        interrupt: Option<&Cancel>,
    ) -> Result<GateVerdict> {
        self.settled(
            self.ctx
                .verify_approved(phases, sandbox, timeout, approved_by, interrupt),
        )
    }

    /// List a directory inside the workspace: directories end in `/`, files show their
    /// size, symbolic links their target; `.git`, `node_modules`, `target` and the like
    /// are named but not entered.
    pub fn list_dir(&self, request: &ListDirRequest) -> Result<FileOutcome> {
        self.settled(self.ctx.list_dir(request))
    }

    /// Read a file inside the workspace: numbered lines (`cat -n` style), at most `limit`
    /// of them and at most the run's output budget in bytes, with where to read on.
    pub fn read_file(&self, request: &ReadFileRequest) -> Result<FileOutcome> {
        self.settled(self.ctx.read_file(request))
    }

    /// Create or replace a file inside the workspace (a temporary file renamed over it,
    /// keeping its permissions), after the confinement and policy checks.
    pub fn write_file(&self, request: &WriteFileRequest) -> Result<FileOutcome> {
        self.settled(self.ctx.write_file(request))
    }

    /// Apply a patch to files in the workspace, all of it or none of it. The observation
    /// lists each file changed (`A` added, `M` modified, `D` deleted, `R` moved, with
    /// lines added and removed); an error says which hunk did not apply and where the
    /// nearest match is.
    pub fn apply_patch(&self, request: &PatchRequest) -> Result<FileOutcome> {
        self.settled(self.ctx.apply_patch(request))
    }

    /// Undo `request.step` (a step of this run, by the id its result gave), or the
    /// newest step of this run that changed files and is not back as it was.
    pub fn undo(&self, request: &UndoRequest) -> Result<FileOutcome> {
        self.settled(self.ctx.undo(request))
    }

    /// Start a command line in the background; its handle comes back at once.
    pub fn shell_start(&self, request: &StartRequest) -> Result<Started> {
        self.settled(self.start_handle(request))
    }

    /// What a handle printed since the previous poll, and whether it still runs.
    pub fn shell_poll(&self, request: &PollRequest) -> Result<Poll> {
        self.settled(self.poll_handle(request))
            .map(|poll| self.poll_said(poll))
    }

    /// [`Run::shell_poll`], whose wait ends early when `cancel` fires (a client that
    /// cancelled its request): the wait is taken in slices, each ending at news.
    pub fn shell_poll_until(
        &self,
        request: &PollRequest,
        cancel: Option<&crate::Cancel>,
    ) -> Result<Poll> {
        self.settled(self.poll_handle_until(request, cancel))
            .map(|poll| self.poll_said(poll))
    }

    /// End a handle and everything it started. Killing an ended handle reports how it
    /// ended.
    pub fn shell_kill(&self, request: &KillRequest) -> Result<Poll> {
        self.settled(self.kill_handle(request))
            .map(|poll| self.poll_said(poll))
    }

    /// Send a signal to everything a handle started, then show what it printed within
    /// half a second (it may end: then its end). A handle that has ended answers how it
    /// ended, and nothing is sent.
    pub fn shell_signal(&self, request: &SignalRequest) -> Result<Poll> {
        self.settled(self.signal_handle(request))
    }

    /// Write `text` to a handle's input and return what the program printed in answer
    /// (see [`WriteRequest::yield_ms`]). A handle started without `tty` or `stdin` has no
    /// input: that is an error saying how to start one. Writing to a handle that has
    /// ended answers how it ended.
    pub fn shell_write(&self, request: &WriteRequest) -> Result<Poll> {
        self.settled(self.write_to_handle(request))
    }

    /// [`Run::shell_write`] for what a person types on a terminal attached to a session
    /// (`corral shell --tty`): passed on the same way, but the trace records how many
    /// bytes were typed, not which, since a person may type a password at a prompt that
    /// does not echo it.
    pub fn shell_type(&self, request: &WriteRequest) -> Result<Poll> {
        self.settled(self.type_into_handle(request))
    }

    /// [`Run::shell_type`] for bytes exactly as typed: a terminal passes on whatever its
    /// keyboard sends (Latin-1 keys, Meta sent as a high bit), which need not be UTF-8.
    pub fn shell_type_bytes(
        &self,
        handle: u32,
        typed: &[u8],
        eof: bool,
        yield_ms: Option<u64>,
    ) -> Result<Poll> {
        self.settled(self.type_bytes_into_handle(handle, typed, eof, yield_ms))
    }

    /// Pass what a person types on to the program and return at once with its state,
    /// leaving what it prints to whoever polls the handle (`corral shell --tty`, whose
    /// output loop polls while its input thread types): [`Run::shell_type_bytes`] returns
    /// that output itself, so a second reader of the same handle would take, and lose,
    /// output the loop never saw. Recorded as [`Run::shell_type_bytes`] is.
    pub fn shell_forward_bytes(&self, handle: u32, typed: &[u8], eof: bool) -> Result<HandleState> {
        self.settled(self.forward_to_handle(handle, typed, eof))
    }

    /// Press named keys on a handle's input (see [`KeysRequest::keys`]) and return what
    /// the program printed in answer, as [`Run::shell_write`] does.
    pub fn shell_keys(&self, request: &KeysRequest) -> Result<Poll> {
        self.settled(self.keys_to_handle(request))
    }

    /// The screen of a terminal handle as a terminal shows it now, with the cursor and
    /// the window size. An ended handle shows its last screen.
    pub fn shell_screen(&self, request: &ScreenRequest) -> Result<Screen> {
        self.settled(self.screen_of_handle(request))
    }

    /// Change a terminal handle's window size. The program gets SIGWINCH and redraws in
    /// its own time: look again with `shell_screen`.
    pub fn shell_resize(&self, request: &ResizeRequest) -> Result<Screen> {
        self.settled(self.resize_handle(request))
    }

    /// Read part of a capture of this run (see [`OutputRequest`]).
    pub fn output(&self, request: &OutputRequest) -> Result<OutputView> {
        self.settled(self.read_on(request))
    }

    /// Record a call that was refused before any tool could read it (a tool this surface
    /// does not offer): a step of its own, ended `invalid` with `message`, so the trace
    /// holds every call a client made.
    pub fn record_rejected_call(&self, tool: &str, call_json: String, message: &str) {
        self.ctx
            .record_invalid_call(tool, call_json, &crate::Error::invalid(message.to_string()));
    }

    /// [`Run::settled`], with what the watch over running handles found said in the
    /// outcome (see `background::watch`).
    fn said(&self, result: Result<Outcome>) -> Result<Outcome> {
        self.settled(result).map(|mut outcome| {
            self.ctx.say_swept(&mut outcome.observation);
            outcome
        })
    }

    /// `poll`, with what the watch over running handles found said in it.
    fn poll_said(&self, mut poll: Poll) -> Poll {
        self.ctx.say_swept(&mut poll.observation);
        poll
    }

    /// `result` as the call left it; if an approver aborted the run during the call, the
    /// run is ended first (its handles, its row), and an error ending it is returned.
    fn settled<T>(&self, result: Result<T>) -> Result<T> {
        if self.ctx.aborted.load(std::sync::atomic::Ordering::Acquire) {
            self.end("aborted")?;
        }
        // What a running handle's commands created meanwhile (see `background::watch`).
        self.sweep_handles();
        result
    }
}
