//! Containment: the unit a call's processes live in, and the one thing that is signalled
//! to end them all.
//!
//! The seam is the [`Containment`] trait. Wrappers compose: each layer's `pre_spawn` adds
//! its steps to the [`Launch`] (a process group, a cgroup, the PID namespace's mounts, the
//! sandbox's confinement, a terminal's session), `spawn` starts it (a layer that must
//! change the spawning thread, as the PID namespace does, wraps it) and `post_spawn` records
//! the pid; all three have no-op defaults. `signal`, `is_empty` and `members` act on the
//! whole unit, the one thing that is signalled and watched. The caller
//! never needs to know which unit it holds beyond its name, which every result carries;
//! what the unit is made of is data ([`super::UnitKind`]), its name written from it.
//! The stack is built in one place, in one order: `job::Job::start`.
//!
//! # Layers, strongest first
//!
//! [`super::unit_for_call`] probes the host once per process and combines the layers it allows:
//! one of the first two, inside the third where it can be made. It never logs: a weaker
//! layer is never silent because its name is recorded in the outcome and the trace.
//!
//! 1. **A cgroup v2 group per call** (`cgroup-v2+pids`, `cgroup-v2+pids-v1`, `cgroup-v2`;
//!    see [`super::cgroup`]) where corral may create and join groups: as root, or in a
//!    delegated subtree. It reaches every descendant whatever it does with sessions,
//!    groups or parents, kills them all with one write, and bounds forks with `pids.max`.
//! 2. **Process groups + child subreaper** (`process-group+subreaper`, [`super::subreaped::Subreaped`]):
//!    where no cgroup can be made (or [`Config::cgroups`](crate::Config::cgroups) is off).
//!    corral becomes a child subreaper, so orphans re-parent to corral rather than init,
//!    and the unit finds its processes by walking `/proc`. Its reach is documented on the
//!    type; it is a sound best effort, not a guarantee.
//! 3. **A PID namespace per call** (`…+pid-ns`, [`super::pid_namespace`]) around either,
//!    where corral may make one (root, or a sandboxed call of an ordinary user's, in the
//!    boxes' user namespace; [`Config::pid_namespace`](crate::Config::pid_namespace)).
//!    Its init (`corral-init`) only waits; when the call ends the init is killed
//!    and the kernel kills everything in the namespace, however it left its group or
//!    cgroup. Its orphans are the init's, so the unit still finds and counts them. The
//!    command sees only its call's processes and cannot signal the host's. Without a
//!    cgroup, the layer inside it is plain process groups (`process-group+pid-ns`): the
//!    orphans a subreaper would collect are the init's, so no walk of `/proc` is needed.
//!
//! Plain [`super::group::ProcessGroup`] (`process-group`) remains the building block both layers use
//! for each pipeline.

use corral_sys::Signal;

use super::launch::{Launch, Proc};
use super::unit_kind::{Base, UnitKind};

/// A unit that holds every process a call starts: a base unit (a cgroup, process groups),
/// or a layer around another (a PID namespace, the sandbox's confinement, a terminal's
/// session). A layer names the unit it wraps with [`Containment::inner`] and overrides only
/// what it changes: every other method forwards to the inner unit by default, so a layer
/// never drops what it does not know about. A base unit has no inner unit and implements
/// what it holds (`name`, `signal`, `is_empty`, `members` at least).
pub(crate) trait Containment: Send + std::fmt::Debug {
    /// The unit this layer wraps; `None` for a base unit.
    fn inner(&self) -> Option<&dyn Containment>;
    /// [`Containment::inner`], to change.
    fn inner_mut(&mut self) -> Option<&mut dyn Containment>;
    /// What the unit is made of (see [`UnitKind`]); a layer that adds to it says so.
    fn kind(&self) -> UnitKind {
        self.inner().map_or(
            UnitKind::of(Base::ProcessGroups { subreaper: false }),
            |i| i.kind(),
        )
    }
    /// The name recorded in results and the trace, e.g. `"process-group"`: written from
    /// [`Containment::kind`].
    fn name(&self) -> &'static str {
        self.kind().name()
    }
    /// The next process starts a new pipeline (its own group, where groups are used).
    fn next_pipeline(&mut self) {
        if let Some(inner) = self.inner_mut() {
            inner.next_pipeline();
        }
    }
    /// The next process will start a session of its own (`setsid`, as a terminal's
    /// leader does): `prepare` must not put it in a group, since a group leader cannot
    /// start a session. The session's group, led by the process, becomes the pipeline's.
    fn next_leads_session(&mut self) {
        if let Some(inner) = self.inner_mut() {
            inner.next_leads_session();
        }
    }
    /// Add this layer's steps to a process about to be spawned into the unit (a layer
    /// that adds steps of its own calls its inner unit's first).
    fn pre_spawn(&mut self, launch: &mut Launch) {
        if let Some(inner) = self.inner_mut() {
            inner.pre_spawn(launch);
        }
    }
    /// Start the prepared process (a unit with a PID namespace starts it inside).
    fn spawn(&mut self, launch: Launch) -> std::io::Result<Proc> {
        match self.inner_mut() {
            Some(inner) => inner.spawn(launch),
            None => launch.spawn(),
        }
    }
    /// Record a process that was just spawned into this unit.
    fn post_spawn(&mut self, pid: u32) {
        if let Some(inner) = self.inner_mut() {
            inner.post_spawn(pid);
        }
    }
    /// Send `signal` to everything in the unit; `false` when nothing was left to signal.
    fn signal(&self, signal: Signal) -> std::io::Result<bool> {
        self.inner().map_or(Ok(false), |i| i.signal(signal))
    }
    /// Whether nothing is left in the unit.
    fn is_empty(&self) -> bool {
        self.inner().is_none_or(|i| i.is_empty())
    }
    /// The processes still in the unit (for reporting; may walk the process table).
    fn members(&self) -> Vec<u32> {
        self.inner().map(|i| i.members()).unwrap_or_default()
    }
    /// The CPU time every process of the unit has spent so far, when the unit keeps
    /// count (a cgroup does).
    fn cpu_time(&self) -> Option<corral_sys::cgroup::CpuTime> {
        self.inner().and_then(|i| i.cpu_time())
    }
    /// The memory the unit's processes may use together (`memory.max`), where it is bound.
    fn memory_max(&self) -> Option<u64> {
        self.inner().and_then(|i| i.memory_max())
    }
    /// The bound, if the kernel ended the unit's processes for reaching it.
    /// The per-process memory bound (`RLIMIT_DATA`) its children get, where it sets one
    /// (see `super::process_bounds`).
    fn data_max(&self) -> Option<u64> {
        self.inner().and_then(|i| i.data_max())
    }
    fn memory_exceeded(&self) -> Option<u64> {
        self.inner().and_then(|i| i.memory_exceeded())
    }
    /// Whether the unit's processes start in a mount namespace its PID namespace's init
    /// made by copying, and which sandbox mounts it copied (`Some(None)`: the plain
    /// template); `None` for a unit without one.
    fn mounts_copied(&self) -> Option<Option<u64>> {
        self.inner().and_then(|i| i.mounts_copied())
    }
    /// What may still run once the unit is dropped, to wait for (see [`super::Remains`]):
    /// asked just before the drop. A base unit's default is its members, each pinned.
    fn remains(&self) -> super::Remains {
        match self.inner() {
            Some(inner) => inner.remains(),
            None => super::Remains::processes(self.members()),
        }
    }
    /// Whether the unit's processes start confined to a sandbox, which then opens their
    /// redirects inside it (see [`corral_sys::box_redirects`]).
    fn confines(&self) -> bool {
        self.inner().is_some_and(|i| i.confines())
    }
}

/// A boxed unit is a unit, so the caller can hold whichever [`super::unit_for_call`] chose:
/// a layer that adds nothing.
impl Containment for Box<dyn Containment> {
    fn inner(&self) -> Option<&dyn Containment> {
        Some(&**self)
    }
    fn inner_mut(&mut self) -> Option<&mut dyn Containment> {
        Some(&mut **self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A base unit whose every answer is known.
    #[derive(Debug, Default)]
    struct Base {
        pipelines: usize,
        spawned: Vec<u32>,
    }

    impl Containment for Base {
        fn inner(&self) -> Option<&dyn Containment> {
            None
        }
        fn inner_mut(&mut self) -> Option<&mut dyn Containment> {
            None
        }
        fn kind(&self) -> UnitKind {
            use super::super::unit_kind::{Base as Made, PidsBound};
            UnitKind::of(Made::Cgroup {
                pids: PidsBound::V2,
                moved: false,
            })
        }
        fn next_pipeline(&mut self) {
            self.pipelines += 1;
        }
        fn post_spawn(&mut self, pid: u32) {
            self.spawned.push(pid);
        }
        fn signal(&self, _signal: Signal) -> std::io::Result<bool> {
            Ok(true)
        }
        fn is_empty(&self) -> bool {
            false
        }
        fn members(&self) -> Vec<u32> {
            vec![7]
        }
        fn memory_max(&self) -> Option<u64> {
            Some(1 << 20)
        }
        fn mounts_copied(&self) -> Option<Option<u64>> {
            Some(Some(3))
        }
        fn confines(&self) -> bool {
            true
        }
    }

    /// A layer that changes nothing.
    #[derive(Debug)]
    struct Layer(Box<dyn Containment>);

    impl Containment for Layer {
        fn inner(&self) -> Option<&dyn Containment> {
            Some(&*self.0)
        }
        fn inner_mut(&mut self) -> Option<&mut dyn Containment> {
            Some(&mut *self.0)
        }
    }

    #[test]
    fn a_layer_forwards_what_it_does_not_change() {
        let mut unit = Layer(Box::new(Layer(Box::new(Base::default()))));
        unit.next_pipeline();
        unit.post_spawn(42);
        assert_eq!(unit.name(), "cgroup-v2+pids");
        assert!(unit.signal(Signal::TERM).unwrap());
        assert!(!unit.is_empty());
        assert_eq!(unit.members(), [7]);
        assert_eq!(unit.memory_max(), Some(1 << 20));
        assert_eq!(unit.mounts_copied(), Some(Some(3)));
        assert!(unit.confines());
        let base = format!("{unit:?}");
        assert!(
            base.contains("pipelines: 1") && base.contains("spawned: [42]"),
            "{base}"
        );
    }
}
