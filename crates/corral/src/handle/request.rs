//! The handle tools' requests and answers, as a caller sends and reads them.

use serde::{Deserialize, Serialize};

use crate::outcome::{StageReport, Status};

/// Start a command line in the background and return a handle at once.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StartRequest {
    /// As for shell.
    pub line: String,
    /// In the workspace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// Run on a terminal, e.g. a REPL (one command).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub tty: bool,
    /// Rows (default 24).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rows: Option<u16>,
    /// Columns (default 80).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cols: Option<u16>,
    /// A stdin pipe for shell_write.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub stdin: bool,
    /// A person's terminal is attached to this one (`corral shell --tty`) and answers the
    /// program's queries (cursor position, device attributes) itself, so corral's
    /// emulated terminal does not answer them too. Not a tool parameter.
    #[serde(skip)]
    pub attached: bool,
}

impl StartRequest {
    /// A request for `line`.
    pub fn new(line: impl Into<String>) -> Self {
        Self {
            line: line.into(),
            ..Self::default()
        }
    }

    /// Run the command on a pseudo-terminal (see [`StartRequest::tty`]).
    pub fn on_tty(mut self) -> Self {
        self.tty = true;
        self
    }

    /// A person's terminal is attached (see [`StartRequest::attached`]).
    pub fn attached(mut self) -> Self {
        self.attached = true;
        self
    }

    /// The terminal's size, `rows` × `cols`.
    pub fn size(mut self, rows: u16, cols: u16) -> Self {
        self.rows = Some(rows);
        self.cols = Some(cols);
        self
    }

    /// Give the line a writable stdin pipe (see [`StartRequest::stdin`]).
    pub fn with_stdin(mut self) -> Self {
        self.stdin = true;
        self
    }
}

/// Read what a handle printed since the previous poll, and whether it still runs.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PollRequest {
    /// The handle id `shell_start` returned.
    pub handle: u32,
    /// Wait for output or the exit (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait_ms: Option<u64>,
    /// Drop escape sequences (default: on a tty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strip_ansi: Option<bool>,
}

/// End a handle and everything it started.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct KillRequest {
    /// The handle id `shell_start` returned.
    pub handle: u32,
}

/// Send a signal to everything a handle started, without ending it: `INT` for what Ctrl-C
/// does, `HUP` to reload, `TERM` to ask it to stop, `USR1`/`USR2`, `STOP`/`CONT`. The
/// answer shows what it printed within half a second, or its end.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SignalRequest {
    /// The handle id `shell_start` returned.
    pub handle: u32,
    /// INT, TERM, HUP, QUIT, USR1, …
    pub signal: String,
}

/// The signals `shell_signal` sends, by name.
pub(crate) const SIGNALS: &[(&str, corral_sys::Signal)] = &[
    ("INT", corral_sys::Signal::INT),
    ("TERM", corral_sys::Signal::TERM),
    ("HUP", corral_sys::Signal::HUP),
    ("QUIT", corral_sys::Signal::QUIT),
    ("USR1", corral_sys::Signal::USR1),
    ("USR2", corral_sys::Signal::USR2),
    ("STOP", corral_sys::Signal::STOP),
    ("CONT", corral_sys::Signal::CONT),
    ("KILL", corral_sys::Signal::KILL),
];

impl SignalRequest {
    /// The signal named, or a bad request naming the ones there are.
    pub(crate) fn signal(&self) -> crate::error::Result<corral_sys::Signal> {
        let name = self.signal.trim().to_ascii_uppercase();
        let name = name.strip_prefix("SIG").unwrap_or(&name);
        SIGNALS
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, s)| *s)
            .ok_or_else(|| {
                let names: Vec<&str> = SIGNALS.iter().map(|(n, _)| *n).collect();
                crate::error::Error::invalid(format!(
                    "unknown signal {:?}: send one of {} (to end a handle and everything it \
                     started, use shell_kill)",
                    self.signal,
                    names.join(", ")
                ))
            })
    }
}

/// Where a handle is in its life.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum HandleState {
    /// Still running.
    Running,
    /// Its line ended by itself.
    Exited {
        /// How, as for a foreground call.
        status: Status,
    },
    /// `shell_kill` ended it.
    Killed,
    /// The run ended while it ran, and corral ended it.
    RunEnded,
    /// Left by an earlier process of this run: never re-attached, polled or signalled.
    Orphaned,
}

impl HandleState {
    /// The word the trace's `how` column holds.
    pub fn word(&self) -> &'static str {
        match self {
            HandleState::Running => "running",
            HandleState::Exited { .. } => "exited",
            HandleState::Killed => "killed",
            HandleState::RunEnded => "run_ended",
            HandleState::Orphaned => "orphaned",
        }
    }
}

/// What `shell_start` answers.
#[derive(Debug, Clone, Serialize)]
pub struct Started {
    /// The handle's id in this run.
    pub handle: u32,
    /// Every stage, as planned.
    pub stages: Vec<StageReport>,
    /// The containment the handle's processes run in.
    pub containment: &'static str,
    /// The sandbox the handle's processes run in, as for a foreground call.
    pub sandbox: Option<crate::sandbox::SandboxReport>,
    /// The text the model reads.
    pub observation: String,
}

/// What `shell_poll` and `shell_kill` answer.
#[derive(Debug, Clone, Serialize)]
pub struct Poll {
    /// The handle polled.
    pub handle: u32,
    /// Where it is now.
    #[serde(flatten)]
    pub state: HandleState,
    /// The bytes read since the previous poll, lossily decoded (the capture keeps them raw).
    pub output: String,
    /// How many bytes `output` holds.
    pub bytes: u64,
    /// Bytes printed since the previous poll that were skipped because more than one
    /// poll's window was waiting: the newest are returned, the cursor moves past the rest.
    pub skipped_bytes: u64,
    /// Bytes the capture cap dropped from the middle of the handle's output so far.
    pub dropped_bytes: u64,
    /// The text the model reads.
    pub observation: String,
}

/// A handle's exit, for whoever watches the run (the MCP server turns it into a
/// notification).
#[derive(Debug, Clone, Serialize)]
pub struct HandleEvent {
    /// The handle.
    pub handle: u32,
    /// How it ended.
    #[serde(flatten)]
    pub state: HandleState,
    /// The line it ran.
    pub line: String,
}

/// Write text to a handle's input (a terminal's keyboard, or a stdin pipe).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WriteRequest {
    /// The handle id `shell_start` returned.
    pub handle: u32,
    /// End a line with \n.
    pub text: String,
    /// ms to wait (default 2000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub yield_ms: Option<u64>,
    /// Then close the input.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub eof: bool,
}

/// Press named keys on a handle's input, in tmux's spelling.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct KeysRequest {
    /// The handle id `shell_start` returned.
    pub handle: u32,
    /// tmux key names (Enter, Tab, Up, F5, C-c, M-x, …); `submit`; `paste:TEXT`.
    pub keys: Vec<String>,
    /// As for `shell_write`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub yield_ms: Option<u64>,
}

/// Look at a terminal handle's screen.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScreenRequest {
    /// The handle id `shell_start` returned.
    pub handle: u32,
}

/// Change a terminal handle's window size; the program gets SIGWINCH.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ResizeRequest {
    /// The handle id `shell_start` returned.
    pub handle: u32,
    /// The new height in rows.
    pub rows: u16,
    /// The new width in columns.
    pub cols: u16,
}
