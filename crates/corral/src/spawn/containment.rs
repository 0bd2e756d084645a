//! Containment: the unit a call's processes live in, and the one thing that is signalled
//! to end them all.
//!
//! The seam is the [`Containment`] trait. Wrappers compose: each layer's `pre_spawn` adds
//! its steps to the [`Launch`] (a process group, a cgroup, the PID namespace's mounts, the
//! sandbox's confinement, a terminal's session), `spawn` starts it (a layer that must
//! change the spawning thread, as the PID namespace does, wraps it) and `post_spawn` records
//! the pid; all three have no-op defaults. `signal`, `is_empty` and `members` act on the
//! whole unit, the one thing that is signalled and watched. The caller
//! never needs to know which unit it holds beyond its name, which every result carries.
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

/// A unit that holds every process a call starts.
pub(crate) trait Containment: Send + std::fmt::Debug {
    /// The name recorded in results and the trace, e.g. `"process-group"`.
    fn name(&self) -> &'static str;
    /// The next process starts a new pipeline (its own group, where groups are used).
    fn next_pipeline(&mut self);
    /// The next process will start a session of its own (`setsid`, as a terminal's
    /// leader does): `prepare` must not put it in a group, since a group leader cannot
    /// start a session. The session's group, led by the process, becomes the pipeline's.
    fn next_leads_session(&mut self);
    /// Add this layer's steps to a process about to be spawned into the unit.
    fn pre_spawn(&mut self, _launch: &mut Launch) {}
    /// Start the prepared process (a unit with a PID namespace starts it inside).
    fn spawn(&mut self, launch: Launch) -> std::io::Result<Proc> {
        launch.spawn()
    }
    /// Record a process that was just spawned into this unit.
    fn post_spawn(&mut self, _pid: u32) {}
    /// Send `signal` to everything in the unit; `false` when nothing was left to signal.
    fn signal(&self, signal: Signal) -> std::io::Result<bool>;
    /// Whether nothing is left in the unit.
    fn is_empty(&self) -> bool;
    /// The processes still in the unit (for reporting; may walk the process table).
    fn members(&self) -> Vec<u32>;
    /// The CPU time every process of the unit has spent so far, when the unit keeps
    /// count (a cgroup does).
    fn cpu_time(&self) -> Option<corral_sys::cgroup::CpuTime> {
        None
    }
    /// The memory the unit's processes may use together (`memory.max`), where it is bound.
    fn memory_max(&self) -> Option<u64> {
        None
    }
    /// The bound, if the kernel ended the unit's processes for reaching it.
    fn memory_exceeded(&self) -> Option<u64> {
        None
    }
    /// Whether the unit's processes start in a mount namespace its PID namespace's init
    /// made by copying, and which sandbox mounts it copied (`Some(None)`: the plain
    /// template); `None` for a unit without one.
    fn mounts_copied(&self) -> Option<Option<u64>> {
        None
    }
    /// Whether the unit's processes start confined to a sandbox, which then opens their
    /// redirects inside it (see [`corral_sys::box_redirects`]).
    fn confines(&self) -> bool {
        false
    }
}

/// A boxed unit is a unit, so the caller can hold whichever [`super::unit_for_call`] chose.
impl<T: Containment + ?Sized> Containment for Box<T> {
    fn name(&self) -> &'static str {
        (**self).name()
    }
    fn next_pipeline(&mut self) {
        (**self).next_pipeline();
    }
    fn next_leads_session(&mut self) {
        (**self).next_leads_session();
    }
    fn pre_spawn(&mut self, launch: &mut Launch) {
        (**self).pre_spawn(launch);
    }
    fn spawn(&mut self, launch: Launch) -> std::io::Result<Proc> {
        (**self).spawn(launch)
    }
    fn post_spawn(&mut self, pid: u32) {
        (**self).post_spawn(pid);
    }
    fn signal(&self, signal: Signal) -> std::io::Result<bool> {
        (**self).signal(signal)
    }
    fn is_empty(&self) -> bool {
        (**self).is_empty()
    }
    fn members(&self) -> Vec<u32> {
        (**self).members()
    }
    fn cpu_time(&self) -> Option<corral_sys::cgroup::CpuTime> {
        (**self).cpu_time()
    }
    fn mounts_copied(&self) -> Option<Option<u64>> {
        (**self).mounts_copied()
    }
    fn memory_max(&self) -> Option<u64> {
        (**self).memory_max()
    }
    fn memory_exceeded(&self) -> Option<u64> {
        (**self).memory_exceeded()
    }
    fn confines(&self) -> bool {
        (**self).confines()
    }
}
