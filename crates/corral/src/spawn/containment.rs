//! Containment: the unit a call's processes live in, and the one thing that is signalled
//! to end them all.
//!
//! The seam is the [`Containment`] trait: `prepare` runs on the `Command` before spawn,
//! `adopt` after, and `signal`, `is_empty` and `members` act on the whole unit. Today's
//! unit is a set of process groups, one per pipeline; stronger units (a cgroup, a PID
//! namespace) implement the same trait, and the caller never needs to know which one it
//! holds beyond its name.

use std::process::Command;

use corral_sys::Signal;

/// A unit that holds every process a call starts.
pub(crate) trait Containment: Send + std::fmt::Debug {
    /// The name recorded in results and the trace, e.g. `"process-group"`.
    fn name(&self) -> &'static str;
    /// The next process starts a new pipeline (its own group, where groups are used).
    fn next_pipeline(&mut self);
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

/// Process groups, one per pipeline, each led by its first stage; later stages of the
/// pipeline join it. A group cannot outlive its last member, so a line's later pipelines
/// need groups of their own.
///
/// Its blind spot: a process that calls `setsid` or `setpgid` leaves its group, and the
/// group's signal no longer reaches it.
#[derive(Debug, Default)]
pub(crate) struct ProcessGroup {
    groups: Vec<u32>,
    current: Option<u32>,
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

    fn next_pipeline(&mut self) {
        self.current = None;
    }

    fn prepare(&mut self, cmd: &mut Command) {
        use std::os::unix::process::CommandExt;
        // 0 makes the child the leader of a new group; later stages join the leader's.
        cmd.process_group(self.current.map_or(0, |p| p as i32));
    }

    fn adopt(&mut self, pid: u32) {
        if self.current.is_none() {
            self.current = Some(pid);
            self.groups.push(pid);
        }
    }

    fn signal(&self, signal: Signal) -> std::io::Result<bool> {
        let mut any = false;
        // Later pipelines first: they are the ones still being fed.
        for pgid in self.groups.iter().rev() {
            any |= corral_sys::group::signal(*pgid, signal)?;
        }
        Ok(any)
    }

    fn is_empty(&self) -> bool {
        !self.groups.iter().any(|g| corral_sys::group::is_alive(*g))
    }

    fn members(&self) -> Vec<u32> {
        self.groups
            .iter()
            .flat_map(|g| corral_sys::group::members(*g))
            .collect()
    }
}
