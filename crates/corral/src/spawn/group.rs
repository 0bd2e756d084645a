//! Process groups, the building block both the cgroup unit and the fallback use for each
//! pipeline, and the registry of what every unit in this process started.

use std::collections::HashSet;
use std::sync::{Mutex, OnceLock};

use corral_sys::Signal;

use super::containment::Containment;
use super::launch::Launch;
use super::unit_kind::{Base, UnitKind};

/// Process groups, one per pipeline, each led by its first stage; later stages of the
/// pipeline join it. A group cannot outlive its last member, so a line's later pipelines
/// need groups of their own.
///
/// Its blind spot: a process that calls `setsid` or `setpgid` leaves its group, and the
/// group's signal no longer reaches it.
#[derive(Debug, Default)]
pub(crate) struct ProcessGroup {
    pub(super) groups: Vec<u32>,
    current: Option<u32>,
    spawned: Vec<u32>,
    /// The next process starts a session (and so a group) itself.
    session_next: bool,
    /// The groups, registered for a signal that must end corral at once.
    held: Vec<corral_sys::escalation::Held>,
    /// How many steps nicer than corral its processes run (see [`Launch::nice`]).
    nice: u8,
}

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        let mut registry = registry();
        for pid in &self.spawned {
            registry.pids.remove(pid);
        }
        for pgid in &self.groups {
            registry.groups.remove(pgid);
            super::leash::release(*pgid);
        }
    }
}

impl ProcessGroup {
    /// Its processes run `by` steps nicer than corral (see [`Launch::nice`]).
    pub(crate) fn niced(by: u8) -> Self {
        let mut group = Self::default();
        group.nice = by;
        group
    }
}

impl Containment for ProcessGroup {
    fn inner(&self) -> Option<&dyn Containment> {
        None
    }
    fn inner_mut(&mut self) -> Option<&mut dyn Containment> {
        None
    }
    fn kind(&self) -> UnitKind {
        UnitKind::of(Base::ProcessGroups { subreaper: false })
    }

    fn next_pipeline(&mut self) {
        self.current = None;
    }

    fn next_leads_session(&mut self) {
        self.current = None;
        self.session_next = true;
    }

    fn pre_spawn(&mut self, launch: &mut Launch) {
        launch.nice(self.nice);
        if std::mem::take(&mut self.session_next) {
            return;
        }
        // 0 makes the child the leader of a new group; later stages join the leader's,
        // named as the child will see it (a PID namespace numbers it differently).
        let leader = self
            .current
            .map_or(0, |p| corral_sys::reaper::pid_inside(p).unwrap_or(p));
        launch.process_group(leader as i32);
    }

    fn post_spawn(&mut self, pid: u32) {
        registry().pids.insert(pid);
        self.spawned.push(pid);
        if self.current.is_none() {
            self.current = Some(pid);
            self.groups.push(pid);
            registry().groups.insert(pid);
            super::leash::record(pid);
            self.held.extend(corral_sys::escalation::hold_group(pid));
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

/// What every unit in this process has started, so that the process-table walk of one
/// [`super::subreaped::Subreaped`] unit does not claim another unit's processes as orphans.
#[derive(Debug, Default)]
pub(super) struct Registry {
    /// Processes a unit spawned itself (corral's direct children).
    pub(super) pids: HashSet<u32>,
    /// Process groups a unit's pipelines lead.
    pub(super) groups: HashSet<u32>,
}

pub(super) fn registry() -> std::sync::MutexGuard<'static, Registry> {
    static REGISTRY: OnceLock<Mutex<Registry>> = OnceLock::new();
    REGISTRY
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner())
}
