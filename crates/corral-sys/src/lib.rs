//! The operating-system edge of corral.
//!
//! Everything here is a thin, documented wrapper over one kernel facility that the
//! library needs to start, watch and end processes. This is the only corral crate allowed
//! `unsafe` code; each block carries a `// SAFETY:` note, and nothing that runs between
//! `fork` and `exec` allocates, logs or takes a lock.
//!
//! - [`box_dirs`]: a box's mounts read-only but its writable roots, and a `/tmp` and
//!   runtime directory of its own over the host's, where host programs keep sockets.
//! - [`box_redirects`]: a sandboxed stage's redirects, opened by the stage itself inside
//!   its box (after Landlock, before seccomp), so they reach only what the command may.
//! - [`cgroup`]: find the cgroup hierarchies, make groups, join one between fork and
//!   exec (a v1 group through `tasks`, without the grace period a `cgroup.procs` write
//!   waits for), kill a whole group, remove it.
//! - [`escalation`]: a second SIGINT/SIGTERM/SIGHUP, or a first one unanswered for a
//!   few seconds, kills every unit this process registered and exits `128+N` at once.
//! - [`group`]: signal a process group, ask whether anything is left in it, list who is.
//! - [`own_process`]: corral's own `/proc` entries kept from the commands it runs
//!   (non-dumpable, after the boxes' user namespace is made).
//! - [`pidfd`]: a file descriptor that becomes readable when a process exits, so one
//!   `poll` can wait for output and for the exit at the same time.
//! - [`pidns`]: a PID namespace per call whose init, when it goes, takes every process
//!   in it; a fresh `/proc` for it; starting commands inside. Its init is cloned without
//!   waiting for its exec (`init_start`, private: raw system calls only, on memory kept
//!   until the exec), runs a few dozen
//!   bytes of corral's own on x86-64 (`init_image`, private), `cat` elsewhere, and its
//!   mounts a copy of a template made once per process and again when the host's mounts
//!   change (`mount_template`, private), or, for a sandboxed run, of the sandbox's mounts
//!   made once for its calls ([`pidns::SandboxMounts`]).
//! - [`program_stubs`]: denied programs' files covered, in the box, by a stub that names
//!   the rule and exits 126: they cannot start there, however they are reached.
//!   Where a box has no mount namespace, a Landlock layer of their own keeps them from
//!   running and from being read (`program_landlock`, private).
//! - [`priority`]: a command niced below corral, with `RLIMIT_NICE` 0 so it stays there.
//! - [`pty`]: pseudo-terminals: open, size, make one the controlling terminal between
//!   fork and exec, raw mode for corral's own terminal.
//! - [`reaper`]: child subreaper, parent-death signal, the process table, reaping orphans.
//! - [`signals`]: default dispositions and an empty mask for what corral starts.
//! - [`spawn`]: start a program with `clone3` (no copy of corral's memory), born in its
//!   v2 cgroup (`CLONE_INTO_CGROUP`), with a pidfd.
//! - [`sandbox`]: Landlock, seccomp and namespaces, built before the fork, applied after it.
//! - [`userns`]: whether an ordinary user may make a user namespace here, and why not.
//! - [`sandbox_reach`]: read denies, a private `/dev` and dropped capabilities, the part
//!   of the sandbox that keeps secrets unreadable.

#![deny(missing_docs)]
// The one crate of the workspace allowed `unsafe` (the workspace denies it, every other
// crate forbids it at its root).
#![allow(unsafe_code)]

pub mod box_dirs;
pub mod box_redirects;
pub mod cgroup;
mod clone_stack;
pub mod escalation;
pub mod group;
mod init_image;
mod init_start;
mod joined;
mod kernel_file;
mod mount_template;
pub mod own_process;
pub mod pidfd;
pub mod pidns;
pub mod priority;
mod program_landlock;
pub mod program_stubs;
pub mod pty;
mod read_only_walk;
pub mod reaper;
pub mod rlimits;
pub mod sandbox;
mod sandbox_mounts;
pub mod sandbox_reach;
pub mod signals;
pub mod spawn;
pub mod threads;
pub mod userns;

pub use rustix::process::Signal;
