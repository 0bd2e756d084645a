//! corral: the layer between a model that asks to run something and the operating system
//! that runs it.
//!
//! It decides what may start, starts it without a shell, keeps everything it started on a
//! leash, keeps the output bounded and useful, and records all of it.
//!
//! ```no_run
//! use corral::{ExecRequest, Run};
//!
//! let run = Run::builder("/path/to/repo").open()?;
//! let outcome = run.exec(&ExecRequest::new(["cargo", "test"]).cwd("crates/app"))?;
//! println!("{}", outcome.observation); // what the model reads
//! run.close()?;
//! # Ok::<(), corral::Error>(())
//! ```
//!
//! # Theory of operation
//!
//! **A run.** Everything happens inside a [`Run`]: one agent run, with an id, a workspace
//! root, a [`Config`] and a trace. Opening one records it in the SQLite trace; closing or
//! dropping it records how it ended.
//!
//! **An argv, never a shell.** [`Run::exec`] takes an array of strings and hands it to the
//! operating system as an array. The program is resolved on the command's own `PATH`
//! before anything starts; a program the machine does not have is the outcome
//! [`Status::Unavailable`], not an error. stdin is the null device, so a command that
//! prompts fails at once instead of waiting for an answer that will never come.
//!
//! **Containment.** Each command leads a process group of its own. A timeout sends the
//! whole group SIGTERM, then SIGKILL after the kill grace (2 s by default). When the
//! command's own process exits, whatever it left in the group is ended too, and the result
//! says how many: nothing outlives a foreground call. The group is the first layer; the
//! unit is a trait, so stronger ones (cgroups, PID namespaces) slot in beside it.
//!
//! **Output.** Both streams are read at once by one `poll` loop into capture files beside
//! the trace, so memory stays flat whatever a command prints. The model is shown at most
//! [`Config::output_budget`] bytes (32 KiB by default), head and tail: the start and the
//! end survive and the middle is counted exactly in bytes and lines. The capture keeps
//! every byte (`corral trace output STEP`). Invalid UTF-8 is shown lossily, kept raw.
//!
//! **Environment.** Inherited by default, with names that look like secrets and model
//! provider credentials stripped, and non-interactive defaults (`NO_COLOR=1`, `TERM=dumb`,
//! pagers set to `cat`, a UTF-8 locale) injected; see [`EnvPolicy`]. A call may not
//! override `PATH` or a loader variable.
//!
//! **The trace.** Every call is a row in `steps` (the call as asked, the argv as spawned,
//! cwd, timing, exit, bytes per stream, the observation), written when the call starts
//! and completed when it ends, so even a call that crashed corral is on record. A bad
//! request is a clear [`Error`] whose row is kept.
//!
//! # Caveats
//!
//! - A process that leaves its process group (`setsid`, a double fork into a daemon)
//!   escapes the group signal; corral stops reading any pipe such a process holds after a
//!   short drain, so it never hangs, but the process itself is not reached by this layer.
//! - Linux only for now: corral waits on processes through pidfds (Linux 5.3+).
//! - The policy that decides what may start is not part of this layer yet: everything
//!   requested runs.

mod call;
mod cancel;
mod capture;
mod config;
mod env;
mod error;
mod exec;
mod outcome;
mod pipeline;
mod plan;
mod render;
mod request;
mod resolve;
mod run;
mod shell;
mod spawn;
mod supervise;

pub use cancel::Cancel;
pub use capture::{Captured, Window};
pub use config::{Config, DEFAULT_KILL_GRACE, DEFAULT_OUTPUT_BUDGET, DEFAULT_TIMEOUT};
pub use env::{DEFAULT_DENIED, EnvPolicy, NON_INTERACTIVE};
pub use error::{Error, ErrorKind, Result};
pub use exec::CallOptions;
pub use outcome::{Outcome, StageReport, Status, StepRef, StreamReport};
pub use plan::{
    Plan, PlannedConnector, PlannedList, PlannedOp, PlannedPipeline, PlannedRedirect, Stage,
};
pub use request::{ExecRequest, parse_duration};
pub use resolve::Unavailable;
pub use run::{Run, RunBuilder, default_store_path};
pub use shell::ShellRequest;

/// Show an argv the one shell-escaped way corral uses everywhere: each word quoted only
/// when it must be, so that corral's own grammar reads it back as the same words.
pub use corral_line::{display_argv, quote};

/// corral's command-line grammar, for callers that parse or display lines themselves.
pub use corral_line as line;

/// The trace store, for readers such as `corral trace`.
pub mod trace {
    pub use corral_trace::{
        NewRun, NewStep, PruneReport, Retention, RunRow, StepDone, StepIds, StepRow, Store,
        TraceError,
    };
}

/// The README's Rust examples, compiled as doctests so they cannot drift.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
pub struct ReadmeDoctests;
