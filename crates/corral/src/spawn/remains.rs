//! What of a unit may still be running once it is dropped, and the wait for it to end.
//!
//! Dropping a unit ends its processes, but the kernel finishes that after the drop
//! returns: a PID namespace's init exits only once every process in its namespace is
//! gone, a killed cgroup empties as its members die, a SIGKILLed process still unwinds.
//! What corral does after a unit's end on the assumption that nothing of it runs (the
//! last sweep of a handle's protected paths, see `background::watch`) first waits for
//! that, on the kernel's own word: the init's pidfd, the group's `cgroup.events`, each
//! process's pidfd. Never by sleeping and looking again, but for v1 groups, which have
//! no event to wait on.

use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// What to wait for after a unit's drop ([`super::Containment::remains`]).
#[derive(Debug, Default)]
pub(crate) enum Remains {
    /// Nothing was left running.
    #[default]
    Nothing,
    /// A PID namespace's init: once it has exited, every process of its namespace is gone
    /// (the kernel ends and collects them all before the init's own exit completes).
    Init(Arc<OwnedFd>),
    /// A cgroup that still held processes: gone once it is empty or removed. It is never
    /// given to another call (see `CgroupUnit::remains`), so its emptiness is this
    /// unit's.
    Cgroup(PathBuf),
    /// Processes found by walking (process groups, a subreaper's orphans), each pinned by
    /// a pidfd when the unit was dropped. Once killed they fork no more.
    Processes(Vec<OwnedFd>),
}

impl Remains {
    /// The processes `pids`, pinned; those already gone are left out.
    pub(crate) fn processes(pids: Vec<u32>) -> Remains {
        let fds: Vec<OwnedFd> = pids
            .into_iter()
            .filter_map(|pid| corral_sys::pidfd::open(pid).ok())
            .collect();
        if fds.is_empty() {
            Remains::Nothing
        } else {
            Remains::Processes(fds)
        }
    }

    /// Wait until nothing of the unit runs, at most until `until`; whether nothing does.
    /// `until` now (or past) only looks.
    pub(crate) fn wait(&self, until: Instant) -> bool {
        match self {
            Remains::Nothing => true,
            Remains::Init(init) => corral_sys::pidfd::wait_exited(&[&**init], until),
            Remains::Cgroup(dir) => corral_sys::cgroup::wait_empty(dir, until),
            Remains::Processes(fds) => corral_sys::pidfd::wait_exited(fds, until),
        }
    }
}

/// Where a handle's watcher leaves its unit's [`Remains`] once the unit is dropped; empty
/// while the handle runs.
#[derive(Debug, Default)]
pub(crate) struct RemainsSlot(Mutex<Option<Remains>>);

impl RemainsSlot {
    /// Keep what `unit` leaves, then drop it.
    pub(crate) fn retire(&self, unit: Box<dyn super::Containment>) {
        let remains = unit.remains();
        drop(unit);
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = Some(remains);
    }

    /// Whether the unit was dropped and nothing of it runs, waiting at most until
    /// `until` (now: only a look). `false` while the unit lives.
    pub(crate) fn ended_by(&self, until: Instant) -> bool {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .is_some_and(|r| r.wait(until))
    }
}
