//! A PID namespace around a call's unit: the layer that ends what left every other one.
//!
//! The unit inside (a cgroup, or process groups with the subreaper) still does the daily
//! work: it signals, reports members, bounds forks. The namespace adds what neither can
//! promise: when the unit is dropped, or sent SIGKILL, the namespace's init is killed and
//! the kernel kills every process in the namespace, including one that moved itself into
//! another cgroup, session or group. A command in it sees only its own call's processes,
//! in a `/proc` of its own, and cannot signal anything outside by pid.
//!
//! What a command notices: its pids are small, and pid 1 is `corral-init`; the parent of
//! every stage reads as 0 (corral is outside), so `kill $PPID` in a stage becomes `kill
//! 0` and signals its own process group; `ps` lists only the call's processes. Mounts it
//! makes (as root) stay in the call's mount namespace; the host's mounts still reach it.
//!
//! A namespace is made when the call starts, never ahead: one made earlier would show the
//! mounts of that moment on a host whose mounts do not propagate.

use std::sync::{Mutex, OnceLock};

use corral_sys::Signal;
use corral_sys::pidns::{self, PidNamespace};

use super::containment::Containment;
use super::launch::{Launch, Proc};

/// A unit whose processes all live in one PID namespace of their own.
#[derive(Debug)]
pub(crate) struct Namespaced {
    /// Declared first, so dropping the unit ends the namespace before the unit inside
    /// cleans up.
    ns: PidNamespace,
    inner: Box<dyn Containment>,
    name: &'static str,
}

impl Namespaced {
    /// Put `inner` in a PID namespace of its own where this host allows one (root, Linux
    /// 5.9+, a `cat` to run as its init); otherwise return it as it is, its name saying so.
    pub(crate) fn wrap(inner: Box<dyn Containment>) -> Box<dyn Containment> {
        if !available() {
            return inner;
        }
        match PidNamespace::new() {
            Ok(ns) => Box::new(Self {
                ns,
                name: named(inner.name()),
                inner,
            }),
            Err(_) => inner,
        }
    }

    /// Orphans in the namespace that have not exited.
    fn live_orphans(&self) -> Vec<u32> {
        let mut orphans = self.ns.orphans();
        orphans.retain(|pid| corral_sys::reaper::process(*pid).is_some_and(|p| !p.zombie));
        orphans
    }
}

impl Containment for Namespaced {
    fn name(&self) -> &'static str {
        self.name
    }
    fn next_pipeline(&mut self) {
        self.inner.next_pipeline();
    }
    fn next_leads_session(&mut self) {
        self.inner.next_leads_session();
    }
    fn pre_spawn(&mut self, launch: &mut Launch) {
        self.inner.pre_spawn(launch);
        launch.enter_mounts(self.ns.init());
    }
    fn spawn(&mut self, launch: Launch) -> std::io::Result<Proc> {
        let _inside = self.ns.enter()?;
        self.inner.spawn(launch)
    }
    fn post_spawn(&mut self, pid: u32) {
        self.inner.post_spawn(pid);
    }
    fn signal(&self, signal: Signal) -> std::io::Result<bool> {
        let mut any = self.inner.signal(signal)?;
        // Orphans that left the unit inside (a daemon out of its process group) are
        // still the init's: they get the same signal.
        any |= self.ns.signal_orphans(signal);
        // SIGKILL is the last word: it reaches whatever left the unit and is not an
        // orphan, too.
        if signal == Signal::KILL {
            self.ns.kill();
        }
        Ok(any)
    }
    fn is_empty(&self) -> bool {
        self.inner.is_empty() && self.live_orphans().is_empty()
    }
    fn members(&self) -> Vec<u32> {
        let mut members = self.inner.members();
        for pid in self.live_orphans() {
            if !members.contains(&pid) {
                members.push(pid);
            }
        }
        members
    }
}

/// Whether this process may make PID namespaces, probed once.
fn available() -> bool {
    static AVAILABLE: OnceLock<bool> = OnceLock::new();
    *AVAILABLE.get_or_init(|| pidns::probe().is_ok())
}

/// `inner` with `+pid-ns`, made once per layer name.
fn named(inner: &'static str) -> &'static str {
    static NAMES: Mutex<Vec<(&'static str, &'static str)>> = Mutex::new(Vec::new());
    let mut names = NAMES.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, name)) = names.iter().find(|(known, _)| *known == inner) {
        return name;
    }
    let name: &'static str = Box::leak(format!("{inner}+pid-ns").into_boxed_str());
    names.push((inner, name));
    name
}
