//! Containment: the unit a command's processes live in, and the one thing that is
//! signalled to end them all.
//!
//! The seam is the [`Containment`] trait: `prepare` runs on the `Command` before spawn,
//! `adopt` after, and `signal`, `is_empty` and `members` act on the whole unit. Today's
//! unit is a process group; stronger units (a cgroup, a PID namespace) implement the same
//! trait, and the caller never needs to know which one it holds beyond its name.

use std::process::Command;

use corral_sys::Signal;

/// A unit that holds every process a command starts.
pub(crate) trait Containment: Send + std::fmt::Debug {
    /// The name recorded in results and the trace, e.g. `"process-group"`.
    fn name(&self) -> &'static str;
    /// Configure a command before it is spawned into this unit.
    fn prepare(&mut self, cmd: &mut Command);
    /// Record a process that was just spawned into this unit.
    fn adopt(&mut self, pid: u32);
    /// Send `signal` to everything in the unit; `false` when nothing was left to signal.
    fn signal(&self, signal: Signal) -> std::io::Result<bool>;
    /// Whether nothing is left in the unit.
    fn is_empty(&self) -> bool;
    /// The processes still in the unit (for reporting; may walk the process table).
    fn members(&self) -> Vec<u32>;
}

/// A process group led by the first process spawned into it. Later stages join it.
///
/// Its blind spot: a process that calls `setsid` or `setpgid` leaves the group, and the
/// group's signal no longer reaches it.
#[derive(Debug, Default)]
pub(crate) struct ProcessGroup {
    pgid: Option<u32>,
}

impl ProcessGroup {
    pub(crate) fn new() -> Self {
        Self::default()
    }
}

impl Containment for ProcessGroup {
    fn name(&self) -> &'static str {
        "process-group"
    }

    fn prepare(&mut self, cmd: &mut Command) {
        use std::os::unix::process::CommandExt;
        // 0 makes the child the leader of a new group; later stages join the leader's.
        cmd.process_group(self.pgid.map_or(0, |p| p as i32));
    }

    fn adopt(&mut self, pid: u32) {
        self.pgid.get_or_insert(pid);
    }

    fn signal(&self, signal: Signal) -> std::io::Result<bool> {
        match self.pgid {
            Some(pgid) => corral_sys::group::signal(pgid, signal),
            None => Ok(false),
        }
    }

    fn is_empty(&self) -> bool {
        self.pgid
            .is_none_or(|pgid| !corral_sys::group::is_alive(pgid))
    }

    fn members(&self) -> Vec<u32> {
        self.pgid
            .map(corral_sys::group::members)
            .unwrap_or_default()
    }
}
