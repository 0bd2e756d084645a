//! Interactive handles: a line started on a pseudo-terminal (`tty: true`) or with a
//! writable stdin pipe (`stdin: true`), and the tools that talk to it: `shell_write`,
//! `shell_keys`, `shell_screen`, `shell_resize`.
//!
//! A terminal handle runs **one command**: a pipeline, a list or a redirect on a terminal
//! is refused by name, because which stage would own the terminal (read the keys, get
//! `C-c`, draw the screen) has no sound answer without a shell's job control. Start the
//! pipeline without `tty`, or run it through a shell on purpose: `bash -c '…'` (checked
//! as any `bash -c` is).
//!
//! The command runs in the same containment unit a pipe handle gets, as the leader of a
//! session of its own with the terminal as its controlling terminal, so `C-c` reaches its
//! foreground job as SIGINT and `shell_resize` reaches it as SIGWINCH. Its environment is
//! the run's, with `TERM=xterm-256color` instead of `dumb`.
//!
//! **What is typed is not checked.** Starting a shell or a REPL on a terminal is the
//! decision the policy makes (by default it asks); the commands then typed into it are
//! the program's business, as they would be for a person at a terminal. Every write and
//! key is recorded as a step of its own, with the handle, so the trace shows what was
//! typed and when. One exception, best-effort: a shell reading its commands from a stdin
//! pipe (`bash`, `sh -s`) gets what a model writes a whole command at a time, each
//! checked as a `shell` call first (see `handle::input::LineCheck`); a refused command
//! reaches it not at all.

use std::borrow::Cow;
use std::io;
use std::os::fd::OwnedFd;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use corral_trace::{NewStep, StepDone};

use crate::call::Prepared;
use crate::error::{Error, Result};
use crate::handle::input::Input;
use crate::handle::keys;
use crate::handle::live::{Live, Notify, ScreenTee};
use crate::handle::request::{
    HandleState, KeysRequest, Poll, PollRequest, ResizeRequest, ScreenRequest, StartRequest,
    WriteRequest,
};
use crate::handle::screen::{Screen, Term};
use crate::handle::table::{Found, orphan_poll};
use crate::outcome::{Observed, StepRef};
use crate::pipeline::Outputs;
use crate::plan::{Plan, PlannedPipeline};
use crate::run::Run;

/// The default terminal size.
pub const DEFAULT_ROWS: u16 = 24;
/// The default terminal size.
pub const DEFAULT_COLS: u16 = 80;
/// How long `shell_write` and `shell_keys` wait for the program's answer by default.
pub const DEFAULT_YIELD_MS: u64 = 2_000;
/// The longest they may be asked to wait.
pub const MAX_YIELD_MS: u64 = 30_000;
/// Once the program printed something after the input, this much silence ends the wait.
pub const QUIET: Duration = Duration::from_millis(100);

/// How a handle's input and output are wired.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Output to a pipe, stdin the null device.
    Pipe,
    /// Output to a pipe, stdin a pipe corral writes.
    Stdin,
    /// A pseudo-terminal for everything. `answers`: corral's emulated terminal answers
    /// the program's queries (off when a person's terminal is attached and answers them).
    Tty { rows: u16, cols: u16, answers: bool },
}

impl Mode {
    /// Whether the line runs on a terminal.
    pub(crate) fn is_terminal(self) -> bool {
        matches!(self, Mode::Tty { .. })
    }
}

const MAX_SIDE: u16 = 1000;

fn check_size(rows: u16, cols: u16) -> Result<()> {
    if rows == 0 || cols == 0 || rows > MAX_SIDE || cols > MAX_SIDE {
        return Err(Error::invalid(format!(
            "a terminal of {rows}×{cols} cannot be made: rows and cols are each from 1 to {MAX_SIDE} \
             (the default is {DEFAULT_ROWS}×{DEFAULT_COLS})"
        )));
    }
    Ok(())
}

impl Mode {
    pub(crate) fn of(request: &StartRequest) -> Result<Self> {
        if request.tty {
            let rows = request.rows.unwrap_or(DEFAULT_ROWS);
            let cols = request.cols.unwrap_or(DEFAULT_COLS);
            check_size(rows, cols)?;
            return Ok(Mode::Tty {
                rows,
                cols,
                answers: !request.attached,
            });
        }
        if request.rows.is_some() || request.cols.is_some() {
            return Err(Error::invalid(
                "rows and cols size a terminal: add `tty: true`, or leave them out",
            ));
        }
        Ok(if request.stdin {
            Mode::Stdin
        } else {
            Mode::Pipe
        })
    }

    /// Fit a prepared line to the mode: a terminal runs one command, and tells it so in
    /// `TERM`.
    pub(crate) fn fit(self, prepared: &mut Prepared) -> Result<()> {
        // A model types into a stdin pipe or an emulated terminal; a person's own attached
        // terminal (`corral shell --tty`, no emulator answering) is the person's.
        prepared.typed = matches!(self, Mode::Stdin | Mode::Tty { answers: true, .. });
        if !matches!(self, Mode::Tty { .. }) {
            return Ok(());
        }
        one_command(&prepared.plan)?;
        prepared.terminal = true;
        match prepared.env.iter_mut().find(|(k, _)| k == "TERM") {
            Some((_, v)) if v == "dumb" || v.is_empty() => *v = "xterm-256color".into(),
            Some(_) => {}
            None => prepared.env.push(("TERM".into(), "xterm-256color".into())),
        }
        Ok(())
    }

    /// The sentence `shell_start` adds about the handle's input.
    pub(crate) fn note(self) -> String {
        match self {
            Mode::Pipe => String::new(),
            Mode::Stdin => " Write to its stdin with shell_write.".into(),
            Mode::Tty { rows, cols, .. } => format!(
                " It runs on a {rows}×{cols} terminal: type with shell_write and shell_keys, look \
                 with shell_screen. What is typed into it is not checked by corral's policy."
            ),
        }
    }
}

/// A terminal runs one command: refuse lists, pipelines and redirects by name.
fn one_command(plan: &Plan) -> Result<()> {
    const HOW: &str = "a terminal session runs one command; start the pipeline without tty, \
                       or wrap it: bash -c '…'";
    let pipelines: Vec<&PlannedPipeline> = plan
        .lists
        .iter()
        .flat_map(|l| std::iter::once(&l.first).chain(l.rest.iter().map(|(_, p)| p)))
        .collect();
    match pipelines.as_slice() {
        [PlannedPipeline::Stages(stages)] if stages.len() == 1 => {
            if stages[0].redirects.is_empty() {
                Ok(())
            } else {
                Err(Error::invalid(format!(
                    "a redirect on a terminal is refused: {HOW}"
                )))
            }
        }
        [PlannedPipeline::Stages(_)] => Err(Error::invalid(format!(
            "a pipeline on a terminal is refused: {HOW}"
        ))),
        _ => Err(Error::invalid(format!(
            "a list of commands (`;`, `&&`, `||`, `cd`) on a terminal is refused: {HOW}"
        ))),
    }
}

/// What spawning a handle needs, wired for its mode.
pub(crate) struct Wiring {
    pub outputs: Outputs,
    /// Where the watcher reads the output.
    pub reader: OwnedFd,
    /// The line's stdin, when it is not the null device.
    pub stdin: Option<OwnedFd>,
    /// What `shell_write` writes to.
    pub input: Option<Input>,
}

impl Wiring {
    pub(crate) fn new(mode: Mode) -> Result<Self> {
        let dup = |fd: &OwnedFd| {
            fd.try_clone()
                .map_err(|e| Error::io("duplicating a descriptor", e))
        };
        if let Mode::Tty {
            rows,
            cols,
            answers,
        } = mode
        {
            let pty = corral_sys::pty::open(rows, cols)
                .map_err(|e| Error::io("opening a pseudo-terminal", e))?;
            let writer = dup(&pty.master)?;
            rustix::io::ioctl_fionbio(&writer, true)
                .map_err(|e| Error::io("making the terminal's input non-blocking", e.into()))?;
            return Ok(Self {
                outputs: Outputs {
                    stdout: dup(&pty.slave)?,
                    stderr: dup(&pty.slave)?,
                },
                stdin: Some(pty.slave),
                reader: pty.master,
                input: Some(Input {
                    answers: Mutex::new(Some(dup(&writer)?)),
                    writer: Mutex::new(Some(writer)),
                    term: Some(Arc::new(Term::new(rows, cols, answers))),
                    lines: None,
                }),
            });
        }
        let (reader, writer) =
            std::io::pipe().map_err(|e| Error::io("creating an output pipe", e))?;
        let writer = OwnedFd::from(writer);
        let outputs = Outputs {
            stdout: dup(&writer)?,
            stderr: writer,
        };
        let (stdin, input) = if mode == Mode::Stdin {
            let (read, write) =
                std::io::pipe().map_err(|e| Error::io("creating an input pipe", e))?;
            let write = OwnedFd::from(write);
            rustix::io::ioctl_fionbio(&write, true)
                .map_err(|e| Error::io("making the input pipe non-blocking", e.into()))?;
            (
                Some(OwnedFd::from(read)),
                Some(Input {
                    writer: Mutex::new(Some(write)),
                    term: None,
                    answers: Mutex::new(None),
                    lines: None,
                }),
            )
        } else {
            (None, None)
        };
        Ok(Self {
            outputs,
            reader: reader.into(),
            stdin,
            input,
        })
    }
}

/// The capture's tee for `live`: its screen (if a terminal), then the waiting polls.
pub(crate) fn tee(live: &Arc<Live>) -> Box<dyn io::Write + Send> {
    let notify = Notify(Arc::clone(live));
    match live.input.as_ref().and_then(|i| i.term.clone()) {
        Some(term) => Box::new(ScreenTee { term, notify }),
        None => Box::new(notify),
    }
}

/// The write request for what a person typed, and its trace record: how many bytes,
/// never which (a password typed at a prompt that does not echo stays out of the trace).
fn typed_request(
    handle: u32,
    typed: &[u8],
    eof: bool,
    yield_ms: Option<u64>,
) -> (WriteRequest, String) {
    let call_json = serde_json::json!({
        "handle": handle,
        "typed_bytes": typed.len(),
        "eof": eof,
    })
    .to_string();
    let request = WriteRequest {
        handle,
        yield_ms,
        eof,
        ..WriteRequest::default()
    };
    (request, call_json)
}

/// A poll's output as shown: a terminal's escape sequences stripped unless asked to keep
/// them.
pub(crate) fn shown<'b>(live: &Live, bytes: &'b [u8], strip: Option<bool>) -> Cow<'b, [u8]> {
    if live.is_terminal() && strip.unwrap_or(true) {
        Cow::Owned(crate::handle::screen::strip_ansi(bytes))
    } else {
        Cow::Borrowed(bytes)
    }
}

/// Write all of `bytes` to the non-blocking `fd`, waiting for room until `until`. Returns
/// how many were taken.
fn write_until(fd: &OwnedFd, bytes: &[u8], until: Instant) -> io::Result<usize> {
    use rustix::event::{PollFd, PollFlags, Timespec, poll};
    let mut done = 0;
    while done < bytes.len() {
        match rustix::io::write(fd, &bytes[done..]) {
            Ok(n) => done += n,
            Err(rustix::io::Errno::INTR) => {}
            Err(rustix::io::Errno::AGAIN) => {
                let left = until.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    break;
                }
                let timeout = Timespec {
                    tv_sec: left.as_secs() as _,
                    tv_nsec: left.subsec_nanos() as _,
                };
                let mut fds = [PollFd::new(fd, PollFlags::OUT)];
                match poll(&mut fds, Some(&timeout)) {
                    Ok(_) | Err(rustix::io::Errno::INTR) => {}
                    Err(e) => return Err(e.into()),
                }
            }
            Err(e) => return Err(e.into()),
        }
    }
    Ok(done)
}

impl Run {
    /// See [`Run::shell_write`].
    pub(crate) fn write_to_handle(&self, request: &WriteRequest) -> Result<Poll> {
        let call_json = serde_json::to_string(request).unwrap_or_default();
        self.interaction_at("shell_write", call_json, |run, step| {
            let text = run.checked_input(step, request, request.text.as_bytes())?;
            run.send_bytes(request, &text, true)
        })
    }

    /// See [`Run::shell_type`].
    pub(crate) fn type_into_handle(&self, request: &WriteRequest) -> Result<Poll> {
        self.shell_type_bytes(
            request.handle,
            request.text.as_bytes(),
            request.eof,
            request.yield_ms,
        )
    }

    /// See [`Run::shell_type_bytes`].
    pub(crate) fn type_bytes_into_handle(
        &self,
        handle: u32,
        typed: &[u8],
        eof: bool,
        yield_ms: Option<u64>,
    ) -> Result<Poll> {
        let (request, call_json) = typed_request(handle, typed, eof, yield_ms);
        self.write_input(&request, typed, call_json)
    }

    /// See [`Run::shell_forward_bytes`].
    pub(crate) fn forward_to_handle(
        &self,
        handle: u32,
        typed: &[u8],
        eof: bool,
    ) -> Result<HandleState> {
        let (request, call_json) = typed_request(handle, typed, eof, Some(0));
        let poll = self.interaction("shell_write", call_json, |run| {
            run.send_bytes(&request, typed, false)
        })?;
        Ok(poll.state)
    }

    fn write_input(&self, request: &WriteRequest, text: &[u8], call_json: String) -> Result<Poll> {
        self.interaction("shell_write", call_json, |run| {
            run.send_bytes(request, text, true)
        })
    }

    /// What of a model's `text` to pass on to the handle now: all of it, unless the handle
    /// is a shell reading its stdin (see [`crate::handle::input::LineCheck`]), where whole commands go on once
    /// checked as `shell` calls and the rest is held until it makes one.
    fn checked_input(&self, step: StepRef, request: &WriteRequest, text: &[u8]) -> Result<Vec<u8>> {
        let live = match self.find(request.handle)? {
            Found::Live(live) => live,
            _ => return Ok(text.to_vec()),
        };
        let Some(check) = live.input.as_ref().and_then(|i| i.lines.as_ref()) else {
            return Ok(text.to_vec());
        };
        let mut held = check.held.lock().unwrap_or_else(|e| e.into_inner());
        let mut buffer = std::mem::take(&mut *held);
        buffer.extend_from_slice(text);
        let whole_lines = match request.eof {
            true => buffer.len(),
            false => buffer
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |i| i + 1),
        };
        let rest = buffer.split_off(whole_lines);
        let unit = String::from_utf8_lossy(&buffer).into_owned();
        if unit.trim().is_empty() {
            *held = rest;
            return Ok(buffer);
        }
        if !crate::plan::extract::parses(&unit) {
            if request.eof {
                return Err(Error::invalid(format!(
                    "shell_write: the shell's input would end inside an unfinished command, so \
                     none of it was passed on: {:?}. Finish the command and write it again, \
                     then end the input",
                    unit.trim_end()
                )));
            }
            // Not a whole command yet: held, as the shell itself would wait for the rest.
            buffer.extend_from_slice(&rest);
            *held = buffer;
            return Ok(Vec::new());
        }
        self.ctx
            .check_written_line(step, unit.trim_end(), check.cwd.clone())
            .map_err(|e| e.noting("None of this input was passed on to the shell."))?;
        *held = rest;
        Ok(buffer)
    }

    /// Write `text` (and, for `eof`, the terminal's ^D or the pipe's end) to the handle's
    /// input; with `answer`, wait for and return what the program printed after it.
    fn send_bytes(&self, request: &WriteRequest, text: &[u8], answer: bool) -> Result<Poll> {
        let mut bytes = text.to_vec();
        self.send(
            request.handle,
            "shell_write",
            request.yield_ms,
            answer,
            |input| {
                if request.eof && input.term.is_some() {
                    bytes.push(0x04);
                }
                Ok((bytes, request.eof && input.term.is_none()))
            },
        )
    }

    /// See [`Run::shell_keys`].
    pub(crate) fn keys_to_handle(&self, request: &KeysRequest) -> Result<Poll> {
        let call_json = serde_json::to_string(request).unwrap_or_default();
        self.interaction("shell_keys", call_json, |run| {
            if request.keys.is_empty() {
                return Err(Error::invalid(format!(
                    "no keys to press: name at least one, e.g. [\"C-c\"] or [\"Enter\"]; the keys are {}",
                    keys::NAMES
                )));
            }
            run.send(request.handle, "shell_keys", request.yield_ms, true, |input| {
                let modes = input.term.as_ref().map(|t| t.modes()).unwrap_or_default();
                let bytes = keys::encode(&request.keys, modes).map_err(Error::invalid)?;
                Ok((bytes, false))
            })
        })
    }

    /// See [`Run::shell_screen`].
    pub(crate) fn screen_of_handle(&self, request: &ScreenRequest) -> Result<Screen> {
        let call_json = serde_json::to_string(request).unwrap_or_default();
        self.interaction("shell_screen", call_json, |run| {
            let (live, term) = run.terminal(request.handle, "shell_screen")?;
            let state = live.progress().state.clone();
            Ok(term.snapshot(live.id, state))
        })
    }

    /// See [`Run::shell_resize`].
    pub(crate) fn resize_handle(&self, request: &ResizeRequest) -> Result<Screen> {
        let call_json = serde_json::to_string(request).unwrap_or_default();
        self.interaction("shell_resize", call_json, |run| {
            check_size(request.rows, request.cols)?;
            let (live, term) = run.terminal(request.handle, "shell_resize")?;
            let input = live.input.as_ref().expect("a terminal handle has an input");
            {
                let writer = input.writer();
                if let Some(master) = writer.as_ref() {
                    // The screen first: the program's redraw must land on the new size.
                    term.resize(request.rows, request.cols);
                    corral_sys::pty::set_size(master, request.rows, request.cols)
                        .map_err(|e| Error::io("resizing the terminal", e))?;
                }
            }
            let state = live.progress().state.clone();
            Ok(term.snapshot(live.id, state))
        })
    }

    /// A terminal handle and its screen, or an error that says what the handle is.
    fn terminal(&self, id: u32, tool: &str) -> Result<(Arc<Live>, Arc<Term>)> {
        let live = match self.find(id)? {
            Found::Live(live) => live,
            Found::Retired(..) => {
                return Err(Error::invalid(format!(
                    "{tool}: handle {id} is not a terminal, and it has ended: read its output \
                     with shell_poll or output"
                )));
            }
            Found::Orphan(row) => {
                return Err(Error::invalid(format!(
                    "{tool}: handle {id} ({}) was started by an earlier process of this run and is \
                     orphaned: it is not re-attached. Start again what you still need.",
                    row.line
                )));
            }
        };
        let term = live.input.as_ref().and_then(|i| i.term.clone());
        match term {
            Some(term) => Ok((live, term)),
            None => Err(Error::invalid(format!(
                "{tool}: handle {id} is not a terminal: read its output with shell_poll, or start \
                 the command with `tty: true` to get a screen"
            ))),
        }
    }

    /// Send what `bytes` makes of the handle's input, then wait for the answer.
    fn send(
        &self,
        id: u32,
        tool: &str,
        yield_ms: Option<u64>,
        answer: bool,
        bytes: impl FnOnce(&Input) -> Result<(Vec<u8>, bool)>,
    ) -> Result<Poll> {
        let live = match self.find(id)? {
            Found::Live(live) => live,
            Found::Retired(..) => {
                return Err(Error::invalid(format!(
                    "{tool}: handle {id} has ended and had no input: start the command again \
                     with shell_start and `tty: true` or `stdin: true` to write to it"
                )));
            }
            Found::Orphan(row) => return Ok(orphan_poll(&row)),
        };
        let Some(input) = live.input.as_ref() else {
            return Err(Error::invalid(format!(
                "{tool}: handle {id} has no input: it was started without a terminal or a stdin \
                 pipe. Start the command again with shell_start and `tty: true` (a terminal, for \
                 shells, REPLs and full-screen programs) or `stdin: true` (a pipe, for programs \
                 that read stdin)"
            )));
        };
        let (bytes, close) = bytes(input)?;
        let wait = Duration::from_millis(yield_ms.unwrap_or(DEFAULT_YIELD_MS).min(MAX_YIELD_MS));
        let until = Instant::now() + wait;
        let ended = |live: &Live| live.progress().state != HandleState::Running;
        let mut taken = bytes.len();
        if !ended(&live) {
            let before = live.progress().layout.total;
            let written = {
                let mut writer = input.writer();
                let written = match writer.as_ref() {
                    Some(fd) => write_until(fd, &bytes, until).map(Some),
                    None => Ok(None),
                };
                if close {
                    writer.take();
                }
                written
            };
            match written {
                Ok(Some(n)) => taken = n,
                // Closed: the line is over, or its pipe's end was closed by an `eof`.
                Ok(None) => taken = 0,
                Err(e) if e.raw_os_error() == Some(libc_epipe()) || ended(&live) => taken = 0,
                Err(e) => return Err(Error::io("writing to the handle's input", e)),
            }
            // A terminal echoes the text typed (a newline as `\r\n`) before the program
            // has read it: only output past the echo is an answer to wait for. Control
            // keys echo in ways that vary, so they are not counted.
            let echo: u64 = match input.term {
                Some(_) => bytes[..taken]
                    .iter()
                    .map(|b| match b {
                        b'\n' => 2,
                        0x20..=0x7e | 0x80.. => 1,
                        _ => 0,
                    })
                    .sum(),
                None => 0,
            };
            if answer {
                live.settle(before + echo, until, QUIET);
            }
        }
        if !answer {
            // The output stays for the handle's poller.
            return Ok(Poll {
                handle: id,
                state: live.progress().state.clone(),
                output: String::new(),
                bytes: 0,
                skipped_bytes: 0,
                dropped_bytes: 0,
                observation: String::new(),
            });
        }
        let mut poll = self.shell_poll(&PollRequest {
            handle: id,
            wait_ms: None,
            strip_ansi: None,
        })?;
        if taken < bytes.len() && poll.state == HandleState::Running {
            poll.observation.push_str(&format!(
                "[only {taken} of {} bytes were taken: the program is not reading its input, or its \
                 input is closed]\n",
                bytes.len()
            ));
        }
        Ok(poll)
    }

    /// Record an interactive call as a step of its own: the request (with its handle) as
    /// asked, what came back.
    pub(crate) fn interaction<T: Observed>(
        &self,
        tool: &str,
        call_json: String,
        act: impl FnOnce(&Self) -> Result<T>,
    ) -> Result<T> {
        self.interaction_at(tool, call_json, |run, _| act(run))
    }

    /// [`Run::interaction`], for an `act` that records decisions on the step.
    pub(crate) fn interaction_at<T: Observed>(
        &self,
        tool: &str,
        call_json: String,
        act: impl FnOnce(&Self, StepRef) -> Result<T>,
    ) -> Result<T> {
        self.ctx.ensure_open()?;
        let _ = self.ctx.flush_pending();
        let started = Instant::now();
        let ids = self.ctx.begin_recorded(&NewStep {
            run_id: self.ctx.id.clone(),
            tool: tool.into(),
            call_json,
            cwd: crate::os_text::escape_path(&self.ctx.workspace).into_owned(),
            started_at_ms: self.ctx.stamp(),
        })?;
        let step = StepRef {
            id: ids.id,
            seq: ids.seq,
        };
        let result = act(self, step);
        let duration_ms = started.elapsed().as_millis() as i64;
        let done = match &result {
            Ok(value) => StepDone {
                argv_json: "null".into(),
                duration_ms,
                outcome: value.outcome().into(),
                observation: value.observation().to_string(),
                ..StepDone::default()
            },
            Err(err) => StepDone {
                argv_json: "null".into(),
                duration_ms,
                outcome: "invalid".into(),
                observation: format!("error: {err}"),
                error: Some(err.to_string()),
                ..StepDone::default()
            },
        };
        // Through the queue every call's end takes: a store busy now takes it later, and
        // ends land in the order the calls ended.
        self.ctx.record_end(ids.id, done)?;
        result
    }
}

fn libc_epipe() -> i32 {
    rustix::io::Errno::PIPE.raw_os_error()
}
