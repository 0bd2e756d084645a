//! What a call produced: how the command ended, what it printed, and what the model read.

pub mod sandbox_report;

use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;

use crate::capture::Window;

/// How a command ended. Every variant is a normal outcome the model can act on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Status {
    /// It exited with this code.
    Exited {
        /// The exit code, 0 to 255.
        code: i32,
    },
    /// A signal ended it (not one corral sent for a timeout).
    Signaled {
        /// The signal number.
        signal: i32,
    },
    /// It was still running at its deadline, and corral ended it.
    TimedOut {
        /// The timeout it ran under.
        #[serde(rename = "after_ms", serialize_with = "millis")]
        after: Duration,
    },
    /// The call was cancelled while the command ran, and corral ended it.
    Cancelled,
    /// Its processes together reached the call's memory bound, and the kernel ended them
    /// all (see [`Config::memory_max`](crate::Config::memory_max)).
    OutOfMemory {
        /// The bound, in bytes.
        limit_bytes: u64,
    },
    /// Still running after the call's `yield_ms`: it is now a background handle.
    Running {
        /// The handle to poll or kill.
        handle: u32,
    },
    /// The program could not be started: missing, a directory, not executable.
    Unavailable {
        /// The program as the request named it.
        program: String,
        /// Why, in a sentence.
        reason: String,
        /// What a shell would exit with: 127 when there is no such program, 126 when it
        /// exists but cannot be run (a directory, no execute permission).
        code: i32,
    },
    /// The program was there, but the kernel refused its argument list and environment
    /// as too long (`E2BIG`): the data belongs in a file or on stdin. A shell exits 126.
    TooLong {
        /// The program as the request named it.
        program: String,
        /// Bytes of arguments and environment the kernel was asked to copy.
        bytes: usize,
        /// The longest single argument, in bytes.
        longest: usize,
    },
}

impl Status {
    /// The exit status a CLI reports for this outcome, following `timeout(1)`: the code
    /// itself, 128+N for signal N, 124 for a timeout, 127 for an unavailable program, 130
    /// for a cancelled call (as after Ctrl-C), 137 (SIGKILL's) for one ended at its
    /// memory bound.
    pub fn cli_exit_code(&self) -> i32 {
        match self {
            Status::Exited { code } => *code,
            Status::Signaled { signal } => 128 + signal,
            Status::TimedOut { .. } => 124,
            Status::Cancelled => 130,
            // As the SIGKILL that ended it reads to a shell.
            Status::OutOfMemory { .. } => 128 + 9,
            Status::Running { .. } => 0,
            Status::Unavailable { code, .. } => *code,
            Status::TooLong { .. } => 126,
        }
    }

    /// Whether the command ran and exited 0.
    pub fn success(&self) -> bool {
        matches!(self, Status::Exited { code: 0 })
    }

    /// What the trace's `exit_code` and `signal` columns hold, for a step and a handle
    /// alike: the code a command exited with (or would have, unavailable: 126, 127), the
    /// signal that ended it (SIGKILL for one ended at its memory bound).
    pub fn code_and_signal(&self) -> (Option<i32>, Option<i32>) {
        match self {
            Status::Exited { code } | Status::Unavailable { code, .. } => (Some(*code), None),
            Status::Signaled { signal } => (None, Some(*signal)),
            Status::OutOfMemory { .. } => (None, Some(9)),
            Status::TimedOut { .. }
            | Status::Cancelled
            | Status::Running { .. }
            | Status::TooLong { .. } => (None, None),
        }
    }

    /// The word the trace's `outcome` column holds.
    pub fn outcome(&self) -> &'static str {
        match self {
            Status::Exited { .. } => "exited",
            Status::Signaled { .. } => "signaled",
            Status::TimedOut { .. } => "timed_out",
            Status::Cancelled => "cancelled",
            Status::OutOfMemory { .. } => "out_of_memory",
            Status::Running { .. } => "running",
            Status::Unavailable { .. } => "unavailable",
            Status::TooLong { .. } => "too_long",
        }
    }
}

impl Outcome {
    /// What the command said about failing, as shown: its stderr's head and tail, or,
    /// where it wrote nothing there (a handle's one merged stream, a `2>&1`), its stdout's.
    pub(crate) fn what_it_said_of_failing(&self) -> String {
        let stream = if self.stderr.bytes == 0 {
            &self.stdout
        } else {
            &self.stderr
        };
        format!("{}\n{}", stream.window.head, stream.window.tail)
    }
}

/// One output stream of a finished command.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct StreamReport {
    /// Bytes the stream carried.
    pub bytes: u64,
    /// Lines, counting a final line without a newline.
    pub lines: u64,
    /// What the model was shown of it.
    pub window: Window,
    /// The capture file with every byte, if the stream carried any.
    pub capture: Option<PathBuf>,
    /// Why the capture file stopped taking bytes (a full disk), if it did: the stream was
    /// still read to its end and counted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub capture_error: Option<String>,
}

/// The trace's names for a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct StepRef {
    /// The step's id in the store (`corral trace output ID`).
    pub id: i64,
    /// Its position in its run: 1, 2, 3…
    pub seq: i64,
}

/// One stage of a call: what was asked to run and how it ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StageReport {
    /// The argv as spawned.
    pub argv: Vec<String>,
    /// The program file that ran, when one did.
    pub program: Option<PathBuf>,
    /// The directory it ran in.
    pub cwd: PathBuf,
    /// How it ended; `None` when it did not run (skipped by `&&`/`||`, or the call ended).
    pub status: Option<Status>,
    /// What the line wrote before it (`|`, `&&`, `||`, `;`, `&`; empty for the first), so
    /// that the stages line reads as the line did.
    #[serde(skip)]
    pub(crate) joint: &'static str,
}

/// The result of [`Run::exec`](crate::Run::exec) or [`Run::shell`](crate::Run::shell).
#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    /// Where the trace keeps this call.
    pub step: StepRef,
    /// How the call ended: for a line, as a shell would report it.
    pub status: Status,
    /// Every stage, in the order written, with its own status.
    pub stages: Vec<StageReport>,
    /// Wall-clock time from the first spawn to the end of the output.
    #[serde(rename = "wall_ms", serialize_with = "millis")]
    pub wall: Duration,
    /// Standard output.
    pub stdout: StreamReport,
    /// Standard error.
    pub stderr: StreamReport,
    /// Processes the command left running that corral ended when it was over.
    pub leftovers_ended: usize,
    /// The containment layer the command ran in: `"cgroup-v2+pids"`,
    /// `"cgroup-v2+pids-v1"` (the bound from a v1 `pids` hierarchy), `"cgroup-v2"` (no
    /// process bound), `"process-group+subreaper"` or `"process-group"`.
    pub containment: &'static str,
    /// What the sandbox enforced, layer by layer (see [`crate::sandbox::SandboxMode`]); `None`
    /// where no sandbox was considered (a background handle's start).
    pub sandbox: Option<crate::outcome::sandbox_report::SandboxReport>,
    /// The text the model reads: status, time, then the labelled streams.
    pub observation: String,
}

/// Durations are serialized as milliseconds with microsecond precision.
fn millis<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64((d.as_micros() as f64) / 1000.0)
}

/// What an interactive call's step row records.
pub(crate) trait Observed {
    /// The step's outcome word.
    fn outcome(&self) -> &'static str;
    /// What the model read.
    fn observation(&self) -> &str;
}
