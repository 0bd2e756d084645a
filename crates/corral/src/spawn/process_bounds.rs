//! Per-process bounds for a call whose unit has no cgroup to bound it (see
//! [`corral_sys::rlimits`]): a wrapper that sets them on every child the unit starts.
//!
//! - **Forks**, for an ordinary user's unsandboxed call without `pids.max`:
//!   `RLIMIT_NPROC` at the uid's process count when the call starts plus `pids_max`. Not
//!   a user namespace, which would show the call other users' files as `nobody` and break
//!   `sudo` and other set-ID programs. (A sandboxed call is bounded in the boxes' user
//!   namespace by the sandbox instead; root is not held by `RLIMIT_NPROC`, and gets a
//!   cgroup.)
//! - **Memory**, for every call without a cgroup's `memory.max`: `RLIMIT_DATA` at the
//!   call's memory bound, each process on its own; never `RLIMIT_AS`, under which V8, the
//!   JVM and Go do not start. Shared memory and files in `/tmp` are not counted, and the
//!   report says so.

use corral_sys::rlimits::Rlimits;

use super::containment::Containment;
use super::launch::Launch;
use super::limits::Limits;
use crate::config::Config;

/// The unit, with the bounds its children get.
#[derive(Debug)]
pub(crate) struct ProcessBounds {
    unit: Box<dyn Containment>,
    bounds: Rlimits,
}

/// The per-process bounds a call in `unit` gets under `config` (`sandboxed`: in a box,
/// which bounds its forks itself).
pub(crate) fn bounds_for(config: &Config, unit: &dyn Containment, sandboxed: bool) -> Rlimits {
    let limits = Limits::of(config);
    let uid = rustix::process::getuid();
    let nproc = limits
        .pids
        .filter(|_| !sandboxed && !uid.is_root() && !unit.kind().bounds_processes())
        .map(|max| corral_sys::rlimits::uid_tasks(uid.as_raw()) + u64::from(max));
    let data = limits.memory.filter(|_| unit.memory_max().is_none());
    Rlimits { nproc, data }
}

/// `unit` with the bounds [`bounds_for`] gives it, if any.
pub(crate) fn around(
    unit: Box<dyn Containment>,
    config: &Config,
    sandboxed: bool,
) -> Box<dyn Containment> {
    let bounds = bounds_for(config, unit.as_ref(), sandboxed);
    if bounds.is_empty() {
        return unit;
    }
    Box::new(ProcessBounds { unit, bounds })
}

impl Containment for ProcessBounds {
    fn inner(&self) -> Option<&dyn Containment> {
        Some(&*self.unit)
    }
    fn inner_mut(&mut self) -> Option<&mut dyn Containment> {
        Some(&mut *self.unit)
    }
    fn pre_spawn(&mut self, launch: &mut Launch) {
        self.unit.pre_spawn(launch);
        launch.rlimits(self.bounds);
    }
    fn data_max(&self) -> Option<u64> {
        self.bounds.data
    }
}
