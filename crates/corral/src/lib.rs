//! corral: the layer between a model that asks to run something and the operating system
//! that runs it.
//!
//! It decides what may start, starts it without a shell, keeps everything it started on a
//! leash, keeps the output bounded and useful, and records all of it.
//!
//! ```no_run
//! use corral::{ExecRequest, Policy, Run};
//!
//! let policy = Policy::default().layer("app").allow_exec("cargo*").deny_exec("cargo publish*");
//! let run = Run::builder("/path/to/repo").policy(policy).open()?;
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
//! dropping it records how it ended. A process that opens a run for one call (the `corral`
//! command) asks for [`RunBuilder::housekeeping_in_background`]: what the call's
//! containment needs is made, and old captures pruned, on a thread beside the store's open
//! and the call, not before them; and it closes the run with [`Run::close_for_exit`], which
//! leaves the trace's connection to the process's exit.
//!
//! **An argv, never a shell.** [`Run::exec`] takes an array of [`OsText`] (bytes, UTF-8 or
//! not; a string in JSON) and hands it to the operating system as an array, byte for byte;
//! the trace shows bytes that are not UTF-8 escaped, and the policy checks them in both
//! their escaped and their lossy form (escaped, a byte that is not part of valid UTF-8 is
//! `\xHH` and a backslash is doubled: [`trace::escape`]). The program is resolved on the
//! command's own `PATH` before anything starts; a program the machine does not have is
//! the outcome [`Status::Unavailable`], not an error. stdin is the null device, so a
//! command that prompts fails at once instead of waiting for an answer that will never
//! come.
//!
//! **Plan, check, spawn.** A request becomes a [`Plan`] (every stage's argv, resolved
//! program and directory, every redirect's resolved path) and the whole plan is checked
//! before the first process starts: every stage against the [`Policy`] (on its program and
//! on its joined argv, with wrappers such as `env`, `timeout`, `xargs`, `sudo`, `find
//! -exec` and `bash -c` unwrapped and checked too), every redirect as a read or a write. A
//! deny anywhere refuses the whole request; an *ask* goes to the run's [`Approver`](approve::Approver) under
//! its [`ApprovalMode`]. Every refusal and every answer is a row in `policy_events`. The
//! argv that was checked is the argv that runs. [`Run::shell`] does the same for a command
//! line in corral's own grammar (the [`line`](mod@crate::line) module), wiring the pipes itself: there is no shell.
//!
//! **Containment.** Every call runs in one containment unit, the strongest the host
//! allows, and the result names it ([`Outcome::containment`]). Where corral may create
//! cgroups (root, or a delegated subtree) each call gets a cgroup v2 group of its own,
//! every process born in it (`clone3` with `CLONE_INTO_CGROUP`, which also spares a fork
//! of corral; on older kernels it moves itself in before it execs, `+moved`): a `setsid`
//! or double-forked daemon is still
//! in it, `cgroup.kill` ends all of it at once, and `pids.max` ([`Config::pids_max`])
//! stops a fork bomb (`cgroup-v2+pids`). Elsewhere each pipeline leads a process group and
//! corral becomes a child subreaper, so orphans re-parent to it and are found in `/proc`
//! (`process-group+subreaper`, a best effort). Either runs inside a PID namespace of its
//! own (`+pid-ns`; as an ordinary user, a sandboxed call's, made in the boxes' user
//! namespace; there orphans are the namespace's init's, so process groups alone serve
//! inside it, `process-group+pid-ns`): when the call ends, the kernel ends everything in
//! it, even a process that left its cgroup, and its commands see only their own processes (in a
//! `/proc` of their own) and cannot signal anything else. A timeout sends the whole unit SIGTERM,
//! then SIGKILL after the kill grace (2 s by default). When the command's own process
//! exits, whatever it left in the unit is ended too, and the result says how many: nothing
//! outlives a foreground call. If corral itself dies, its direct children die with it
//! (`PR_SET_PDEATHSIG`) and the next corral to start ends what its groups still hold.
//!
//! **Handles.** [`Run::shell_start`] checks a line exactly as `shell` does and returns a
//! handle at once; [`Run::shell_poll`] reads what it printed since the previous poll (a
//! byte cursor, the newest window when more waits, the skipped bytes counted, an optional
//! wait that wakes on output); [`Run::shell_kill`] ends it with everything it started.
//! `yield_ms` on `exec`/`shell` turns a call still running into a handle. At most
//! [`Config::max_handles`] run at once. Every live handle ends when the run ends, however
//! it ends; a run reopened in another process ([`RunBuilder::resume`]) reports the old
//! handles as orphaned and never signals them, since a pid is not an identity.
//!
//! **Where a call starts.** At the workspace root, or at the `cwd` it names. With
//! [`Config::persist_cwd`] the run keeps a directory as a shell session does: a line that
//! ends with a `cd` that succeeded, or a call's `cwd`, sets where later calls start, and
//! each result names the directory it ran in.
//!
//! **Output.** Both streams are read at once by one `poll` loop into capture files beside
//! the trace, so memory stays flat whatever a command prints. The model is shown at most
//! [`Config::output_budget`] bytes (12 KiB by default; `[output] budget` in a
//! configuration file, or a call's `max_output`, up to 64 KiB), head and tail: the start
//! and the end survive and the middle is counted exactly in bytes and lines. As the bytes
//! pass, a scan (a literal prefilter, then a pattern per tool: pytest, cargo, go test,
//! jest, tsc, gcc, tracebacks, Maven, make, …) keeps the lines that say why a command
//! failed; those of the omitted middle are shown where the marker is, numbered as
//! `output` reads them, with a line or two of context, within 40 lines and 4 KB taken from
//! the same budget, so a failing run's first result carries its reason
//! ([`Config::failure_lines`] turns the scan off; its cost is in BENCHMARKS.md). The capture keeps
//! every byte up to [`Config::capture_cap`] per stream; past it the head stays and the
//! tail keeps rolling, so disk use is bounded too. Invalid UTF-8 is shown lossily, kept
//! raw. When an observation leaves something out, its marker names the exact call that
//! reads it ([`Config::read_more`]): [`Run::output`] reads a range of lines or bytes, a
//! head, a tail, or the lines matching a pattern with context, of this run's captures
//! only, numbered like `grep -n` and within the same budget, or 32 KiB when that is
//! more ([`config::MIN_READ_BUDGET`]; `corral trace output` does the same from a
//! terminal).
//!
//! **Environment.** Inherited by default, with names that look like secrets and model
//! provider credentials stripped, and non-interactive defaults (`NO_COLOR=1`, `TERM=dumb`,
//! pagers set to `cat`, a UTF-8 locale) injected; see [`EnvPolicy`]. A call may not
//! override `PATH` or a loader variable.
//!
//! **The sandbox.** What a started command may then do is bounded by
//! [`Config::sandbox`] ([`SandboxMode`](sandbox::SandboxMode)): `read-only`, `workspace-write` (writes only
//! under the workspace, its writable roots and a private temp, with `.git/hooks`,
//! `.git/config` and `corral.toml` kept read-only), `full` (the default: none) or
//! `external` (the caller's own box). The kernel enforces it in layers (Landlock, a
//! network and a mount namespace, seccomp, launch hygiene, `pids.max`), and each result
//! says what this host enforced fully, partly or not at all ([`Outcome::sandbox`], and
//! `sandbox_events` in the trace): its text lists the layers on a run's first sandboxed
//! result and wherever one does not hold, and is one short line otherwise. A failure that looks like a
//! denial is labelled as a guess; when it names a path outside the box (or a redirect
//! would write there), the `on-failure` approval mode offers the approver a rerun in the
//! sandbox with exactly that path added, never without the sandbox. With the network off,
//! a run's calls share one loopback-only network namespace.
//!
//! **Surfaces.** Which policy, approval mode and sandbox a run gets by default depends on
//! where it is driven from ([`Surface`], [`Posture`]): `corral mcp` makes the sandbox the
//! boundary where the host enforces every layer, with built-in asks (the policy layer
//! `built-in: destroys work`) for what destroys work inside it.
//!
//! **Interactive sessions.** [`Run::shell_start`] with `tty: true` runs one command on a
//! pseudo-terminal (the same parse, plan, gate and containment; a pipeline or redirect is
//! refused by name: wrap it in `bash -c '…'`), and [`Run::shell_write`],
//! [`Run::shell_keys`], [`Run::shell_screen`] and [`Run::shell_resize`] talk to it; its
//! state lasts between writes. Starting the session is the decision the policy makes:
//! commands then typed into an interactive shell or REPL are **not** checked by corral's
//! policy (the default policy asks before such a program starts). Every write and key is
//! recorded as a step with its handle; what a person types on an attached terminal goes
//! through [`Run::shell_type`], whose steps count the bytes instead of keeping them.
//!
//! **Files and patches.** [`Run::read_file`], [`Run::write_file`], [`Run::list_dir`] and
//! [`Run::apply_patch`] run in corral's own process, so every path is confined before it
//! is touched: inside the workspace; for a write, outside the sandbox's protected paths
//! and corral's own state, and as the sandbox's mode allows. Then the policy's `read` and
//! `write` rules decide, with the approver for an *ask*, as for a redirect. A patch (Codex's
//! format, see [`patch`]) is checked whole, computed in memory, and written all or nothing.
//!
//! **Tools.** [`tools`] is the one definition of every tool a model is offered, a file
//! each: name, description, request type (which gives the input schema), and the call
//! ([`tools::Tool::call`], [`Run::call_tool`]). The MCP server, the task loop and the
//! `corral` command's `exec` and `shell` all find and call tools there, and differ only in
//! how they render the answer. Adding a tool is one new file and one entry in
//! [`tools::TOOLS`] (`tools/shell_signal.rs` is the example).
//!
//! **Task runs.** [`task`] drives a model to a goal with these tools, and lets a
//! verification gate ([`Run::verify`]), run in a sandbox of its own, decide when it is done.
//!
//! **Undo.** A call that may write (a plan not entirely known-safe and read-only, a
//! `write_file`, an `apply_patch`) runs between two records of the workspace, in a
//! content-addressed store beside the trace that the box cannot reach; what it added,
//! modified and deleted is its step's `step_files`, and a person puts it back with
//! `corral undo` (see [`undo`]). A handle's changes are its start step's, recorded at
//! each poll and at its end. A model gets an `undo` tool only where the person offers it
//! (`corral mcp --undo-tool`). [`Config::record`] turns it off.
//!
//! **The trace.** Every call is a row in `steps` (the call as asked, the argv as spawned,
//! cwd, timing, exit, bytes per stream, the observation), written when the call starts
//! and completed when it ends, so even a call that crashed corral is on record. A bad
//! request is a clear [`Error`] whose row is kept.
//!
//! # Where each concept lives
//!
//! The crate root holds what a caller of a run needs:
//!
//! - the run and how it is set up: [`Run`], [`RunBuilder`], [`Config`], [`EnvPolicy`],
//!   [`Policy`], [`ApprovalMode`], [`CallOptions`], [`Cancel`];
//! - the requests: [`ExecRequest`], [`ShellRequest`], [`OutputRequest`],
//!   [`ReadFileRequest`], [`WriteFileRequest`], [`ListDirRequest`] (arguments as
//!   [`OsText`], durations as [`parse_duration`] reads them);
//! - the answers: [`Outcome`] ([`Status`], [`Unavailable`], [`StreamReport`] and its
//!   [`Window`], [`StageReport`], [`StepRef`]), [`OutputView`] ([`StreamName`]),
//!   [`FileOutcome`]; and [`Error`] ([`ErrorKind`], [`Result`], [`Denial`],
//!   [`DenialStatus`]);
//! - where a run is driven from and what it gets there: [`Surface`], [`Posture`]
//!   ([`Overrides`], [`run_summary`], the layers named in [`CONFINEMENT`] and
//!   [`RESOURCE_LIMITS`]), the policy files ([`PolicyFiles`]) and the ones a person trusted
//!   ([`TrustStore`]);
//! - a request as a [`Plan`] ([`PlannedList`], [`PlannedPipeline`], [`PlannedConnector`],
//!   [`Stage`], [`PlannedRedirect`], [`PlannedOp`], [`PlannedCd`], [`PlannedDirStack`])
//!   and what the policy makes of it, with nothing run: [`explain`] ([`Check`], [`Lift`],
//!   [`exact_allow`]), [`wants_a_terminal`], [`plan_host_line`];
//! - corral's own files: [`state_dir`] ([`StateDir`]), [`use_state_dir`],
//!   [`default_store_path`].
//!
//! The public modules are the areas a caller goes into on purpose (a test,
//! `tests/module_graph.rs`, keeps them few):
//!
//! | module | what it holds |
//! |---|---|
//! | [`approve`] | the [`Approver`](approve::Approver) a run asks, what it is asked and how it answers; [`ApproveAll`](approve::ApproveAll), [`DenyAll`](approve::DenyAll), a person at a terminal |
//! | [`config`] | [`Config`]'s parts and defaults: budgets, [`MemoryMax`](config::MemoryMax), [`ReadMore`](config::ReadMore), the sandbox's settings, the host shell's ([`config::host_shell`]) |
//! | [`handle`] | handles: what `shell_start`, `shell_poll`, `shell_write`, `shell_keys`, `shell_screen`, `shell_resize`, `shell_signal` and `shell_kill` take and answer, a terminal's [`Screen`](handle::Screen) |
//! | [`patch`] | the patch format `apply_patch` reads (Codex's): [`PatchRequest`](patch::PatchRequest), its parser and hunks |
//! | [`sandbox`] | the sandbox's modes and settings, and what this host enforces of it ([`SandboxReport`](sandbox::SandboxReport), [`sandbox::enforcement`]) |
//! | [`task`] | a model driven to a goal: the contract, the models, the verification gate |
//! | [`tools`] | every tool a model is offered, one definition each |
//! | [`trace`] | what a run records and how to read it back: the store, the captures beside it ([`trace::reader`], [`trace::failures`]), the text form of bytes that are not UTF-8 ([`trace::escape`]) |
//! | [`undo`] | the records of the workspace around each call that may write, and putting a call's changes back |
//! | [`policy`], [`line`](mod@line) | the policy and corral's command-line grammar, from their own crates |
//!
//! Inside, the modules (most of them private: `cargo doc --document-private-items` shows
//! their own docs) form layers, each using only those below it (a test,
//! `tests/module_graph.rs`, fails on any import loop between the top-level modules of a
//! crate in the workspace). From the bottom:
//!
//! | layer | modules |
//! |---|---|
//! | what is asked and answered | `request` ([`ExecRequest`]), `outcome` ([`Outcome`], [`Status`], the sandbox report a result carries), `error`, `clock`, `paths` |
//! | how a run is configured | `config` ([`Config`]), `env` ([`EnvPolicy`]), `config::sandbox`, `config::host_shell`, `policy_files`, `trust` |
//! | a request becomes a plan | `plan` ([`Plan`]), `resolve`, `glob`, `redirect`, `identity`, `plan::extract` (with `corral_policy::stdin_script`) |
//! | whether it may run | `gate` (the plan against the [`Policy`], asks to the [`Approver`](approve::Approver)), `approve`, `destructive` (the built-in asks) |
//! | starting it, contained | `spawn` (the containment unit: cgroup, PID namespace, process group; the launch), `sandbox` (its layers around a unit, the run's network namespace and proxy), `pipeline` (one pipeline's stages wired with pipes), `line_run` (a line walked pipeline by pipeline: connectors, `cd`, the directory stack, `&`, `time`), `supervise` (the watch: output, deadline, ending) |
//! | what it printed | `capture` (capture files, the head-and-tail window, reading back), `render` (the observation), `output` (a capture read back, the pointer to the rest) |
//! | handles, as data | `handle` (the table of a run's handles, each one's input and emulated terminal, the handle tools' requests and answers; nothing in it names a run) |
//! | the engine | `ctx` (what every call takes: the run's id, workspace, config, trace, gate, sandbox, pending rows), `job` (the one engine: `Job::start` builds a line's containment stack, in one order, with its sandbox; `Job::wait` walks and watches the line on the caller's thread and maps its end to a [`Status`]; the one [`Outcome`] builder), `call` (the path every call shares: step row, gate, job, record; after a sandbox refusal, the rerun a person approves and the network domain they allow), `exec`, `shell`, `host_shell`, `cwd`, `files`, [`patch`], `verify` (the gate a task's done is decided by) |
//! | handles, driven | `background` (`shell_start`, the watcher thread that waits on a handle's job, terminals, `yield_ms`), `output_call` ([`Run::output`]) |
//! | the facade and above | `run` ([`Run`]: a `Ctx` with the handle table and the owner's claim; every public method in `run/api.rs`), [`tools`], `surface` ([`Surface`], [`Posture`]), [`task`] |
//!
//! # Caveats
//!
//! - Without cgroups, a process that leaves its process group is found only as a
//!   descendant or a `setsid` orphan re-parented to corral; what that fallback cannot
//!   reach is listed on its type. In a cgroup, only a process allowed to write the cgroup
//!   hierarchy (a root command, unsandboxed: the sandbox makes the cgroup file system
//!   read-only) can move itself out; the call's PID namespace still ends it. Without one
//!   (not root, or [`Config::pid_namespace`] off) a process corral started itself is
//!   still ended by its pid, but a deeper descendant that moves itself out survives.
//!   Either way corral stops reading a pipe held by an escaped process after a short
//!   drain, so it never hangs.
//! - In a PID namespace a command's pids are small, pid 1 is `corral-init`, every stage's
//!   parent reads as 0 (so `kill $PPID` in a stage signals its own process group), `ps`
//!   lists only its call's processes, and mounts it makes (as root) stay in the
//!   call's mount namespace. A command that must see or signal the host's processes
//!   needs [`Config::pid_namespace`] off.
//! - A redirect to a named pipe (`> fifo`, `< fifo`) is refused when its stage would start,
//!   not opened: corral opens a stage's redirects itself before the stage starts, and a
//!   pipe's open waits for its other end. Let a program open it (`… | tee fifo`, `cat fifo
//!   | …`).
//! - Linux only for now: corral waits on processes through pidfds (Linux 5.3+).
//! - The policy decides what may *start*, not what a started process then does: `make`
//!   runs whatever its Makefile says, and `python script.py` can delete anything its user
//!   can. Commands run with the embedding program's privileges unless the sandbox
//!   ([`Config::sandbox`]) bounds what they can touch; by default it does not (`full`).
//! - [`Policy::default`] asks about everything no rule allows, and a run without an
//!   approver ([`DenyAll`](approve::DenyAll)) refuses what would be asked: give the run a policy that allows
//!   what it needs, or an approver.

#![deny(missing_docs)]
// Every type a caller can be handed is one it can name: a private module's type in the
// public interface is re-exported below.
#![warn(unnameable_types)]
#![forbid(unsafe_code)]

pub mod approve;
mod autorun;
mod background;
mod beneath;
mod beside;
mod call;
mod cancel;
mod capture;
mod clock;
pub mod config;
mod ctx;
mod cwd;
mod destructive;
mod env;
mod error;
mod exec;
mod files;
mod gate;
mod glob;
pub mod handle;
mod held;
mod host_shell;
mod housekeeping;
mod identity;
mod job;
mod line_run;
mod os_text;
mod outcome;
mod output;
mod output_call;
pub mod patch;
mod paths;
mod pending;
mod pipeline;
mod plan;
mod policy_files;
mod recorded;
mod redirect;
mod render;
mod request;
mod resolve;
mod run;
pub mod sandbox;
mod shell;
mod spawn;
mod supervise;
mod surface;
pub mod task;
pub mod tools;
mod trust;
pub mod undo;
mod undo_call;
mod verify;

// What every caller needs: a run, its configuration, its requests and what they answer.
pub use call::CallOptions;
pub use cancel::Cancel;
pub use config::Config;
pub use env::EnvPolicy;
pub use error::{Denial, DenialStatus, Error, ErrorKind, Result};
pub use files::{FileOutcome, ListDirRequest, ReadFileRequest, WriteFileRequest};
pub use os_text::OsText;
pub use outcome::{Outcome, StageReport, Status, StepRef, StreamReport};
pub use output::{OutputRequest, OutputView, StreamName};
pub use request::{ExecRequest, parse_duration};
pub use resolve::Unavailable;
pub use run::{Run, RunBuilder};
pub use shell::ShellRequest;

// The window of a stream a result shows, and what corral's own state is and where.
pub use capture::Window;
pub use paths::{StateDir, default_store_path, mcp_token_path, state_dir, use_state_dir};

// Where a run is driven from, and what it gets there by default.
pub use policy_files::{FileSettings, PolicyFiles};
pub use surface::{CONFINEMENT, Overrides, Posture, RESOURCE_LIMITS, Surface, run_summary};
pub use trust::TrustStore;

// A request as a plan, and what the policy makes of it, without running anything.
pub use gate::{Check, Lift, exact_allow, explain, wants_a_terminal};
pub use host_shell::plan_host_line;
pub use plan::{
    Plan, PlannedCd, PlannedConnector, PlannedDirStack, PlannedList, PlannedOp, PlannedPipeline,
    PlannedRedirect, Stage,
};

/// The policy: acts, effects, rules, layers, tiers, approval modes, known-safe commands.
pub use corral_policy as policy;
pub use corral_policy::{ApprovalMode, Policy};

/// corral's command-line grammar, for callers that parse or display lines themselves.
pub use corral_line as line;

/// The files host programs run on their own, which a box's writes are held from.
pub use autorun::table as held_class;
pub use held::{
    Applied as HeldApplied, AppliedAs as HeldAppliedAs, Change as HeldChange,
    Conflict as HeldConflict, Held, HeldError, HeldStore, NewHeld, Version as HeldVersion,
};
pub use render::person;

/// What a run records and how to read it back: the trace store (for readers such as
/// `corral trace`), the captures beside it, and the text form in which both show bytes
/// that are not UTF-8.
pub mod trace {
    pub use corral_trace::{
        Abandoned, ModelTurnRow, NewRun, NewStep, PENDING, PolicyEventRow, PruneReport, Retention,
        RunRow, StepDone, StepIds, StepRow, Store, TraceError, TraceErrorKind,
    };

    pub use crate::capture::{failures, reader};
    pub use crate::os_text::{escape, escape_path};
}

/// The Rust examples of `docs/rust-library.md`, compiled as doctests so they cannot drift.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/rust-library.md")]
pub struct RustLibraryDoctests;
