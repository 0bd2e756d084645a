//! The fallback unit where no cgroup can be made: process groups, corral as child
//! subreaper, and a walk of `/proc`.

use std::collections::HashSet;
use std::sync::OnceLock;

use corral_sys::Signal;

use super::containment::Containment;
use super::group::{ProcessGroup, registry};
use super::launch::Launch;
use super::unit_kind::{Base, UnitKind};

/// Make corral a child subreaper, once per process; whether it is one.
fn subreaper() -> bool {
    static DONE: OnceLock<bool> = OnceLock::new();
    *DONE.get_or_init(|| corral_sys::reaper::become_subreaper().is_ok())
}

/// The fallback when no cgroup can be made: process groups, corral as child subreaper,
/// and a walk of `/proc`.
///
/// Each pipeline leads a process group, as in [`ProcessGroup`]. corral (the whole
/// process, for good) becomes a child subreaper, so a process whose parent exits is
/// re-parented to corral instead of init; and each direct child gets
/// `PR_SET_PDEATHSIG(SIGKILL)`, so it dies if corral does.
///
/// The unit's members, from one `/proc` snapshot, are the live processes that
///
/// - are in one of its process groups or were spawned by it;
/// - or are corral's children that corral did not spawn (orphans re-parented to it) and
///   that started a session of their own (`setsid`), are in no other unit's process group
///   nor in a cgroup unit, and started after this unit's first process: this is how a
///   double-fork daemon is found. (Requiring a session of its own is what tells an orphan
///   from a child another call is spawning this instant, which is still in corral's
///   session.)
/// - or descend, by parent links, from any of the above.
///
/// Orphans of this unit that have exited are reaped by `members` (corral is their parent
/// now; nobody else will).
///
/// What it cannot reach, or may get wrong:
///
/// - An orphan that left the unit's process group with `setpgid` but not `setsid`, once
///   its parent in the tree has exited (it is found while that parent lives).
/// - A process that leaves the unit's group *and* keeps a living parent outside the unit's
///   tree, e.g. a `setsid` child whose parent is then adopted by an unrelated process; and
///   anything re-parented to a subreaper nearer than corral (a command that makes itself a
///   subreaper keeps its orphans, which are still found as its descendants while it lives).
/// - With two calls running at once, a `setsid` orphan started while both ran is claimed by
///   both; so is a `setsid` child the host program spawned itself, or its orphan. Each walk may miss a process that forks between the read and the signal, so
///   SIGKILL is sent in rounds until a walk finds nothing.
/// - Pids are signalled one by one: a pid reused between the walk and the signal would be
///   hit. The window is a few microseconds.
/// - PR_SET_PDEATHSIG fires when the *thread* that spawned the child exits, not the
///   process: fine for a foreground call, whose spawning thread waits in the call; a child
///   spawned from a thread that ends before it does is killed with that thread.
/// - Becoming a subreaper is a process-wide change: the host program's own orphans
///   re-parent to it too, and corral reaps only the ones it claims.
#[derive(Debug)]
pub(crate) struct Subreaped {
    groups: ProcessGroup,
    /// The processes corral started, in order.
    spawned: Vec<u32>,
    /// The start time (clock ticks since boot) of the unit's first process.
    since: Option<u64>,
    subreaper: bool,
}

/// How many times SIGKILL is swept over the members before giving up on a respawner.
const KILL_ROUNDS: usize = 50;

impl Subreaped {
    /// A unit whose processes run `nice` steps nicer than corral.
    pub(crate) fn new(nice: u8) -> Self {
        Self {
            groups: ProcessGroup::niced(nice),
            spawned: Vec::new(),
            since: None,
            subreaper: subreaper(),
        }
    }

    /// The unit's live members, spawned stages first (later ones first), then the rest.
    /// Reaps claimed orphans that have exited.
    fn walk(&self) -> Vec<u32> {
        use corral_sys::reaper::{self, Proc};
        let table = reaper::processes();
        let me = std::process::id();
        // As /proc shows them: 0 when corral's group or session began outside its PID
        // namespace, as it does in many containers; the same 0 then marks every process
        // that shares them.
        let (my_group, my_session) = table
            .iter()
            .find(|p| p.pid == me)
            .map_or((0, 0), |p| (p.pgrp, p.session));
        let mut set: HashSet<u32> = HashSet::new();
        {
            let registry = registry();
            let orphan = |p: &Proc| {
                self.subreaper
                    && p.ppid == me
                    && self.since.is_some_and(|since| p.start >= since)
                    && !registry.pids.contains(&p.pid)
                    && p.pgrp != my_group
                    && (self.groups.groups.contains(&p.pgrp)
                        || (p.session != my_session && !registry.groups.contains(&p.pgrp)))
                    && !super::cgroup::in_a_unit(p.pid)
            };
            for p in &table {
                if p.zombie {
                    if orphan(p) {
                        reaper::reap(p.pid);
                    }
                    continue;
                }
                // A spawned pid counts only while it is the process corral started: one
                // that started before this unit's first process is a reused pid.
                let spawned_here = self.spawned.contains(&p.pid)
                    && self.since.is_some_and(|since| p.start >= since);
                if self.groups.groups.contains(&p.pgrp) || spawned_here || orphan(p) {
                    set.insert(p.pid);
                }
            }
        }
        set.remove(&me);
        // Descendants by parent links, to a fixed point.
        loop {
            let before = set.len();
            for p in table.iter().filter(|p| !p.zombie && p.pid != me) {
                if set.contains(&p.ppid) {
                    set.insert(p.pid);
                }
            }
            if set.len() == before {
                break;
            }
        }
        let mut ordered: Vec<u32> = self
            .spawned
            .iter()
            .rev()
            .copied()
            .filter(|p| set.remove(p))
            .collect();
        let mut rest: Vec<u32> = set.into_iter().collect();
        rest.sort_unstable();
        ordered.extend(rest);
        ordered
    }
}

impl Containment for Subreaped {
    fn inner(&self) -> Option<&dyn Containment> {
        None
    }
    fn inner_mut(&mut self) -> Option<&mut dyn Containment> {
        None
    }
    fn kind(&self) -> UnitKind {
        UnitKind::of(Base::ProcessGroups {
            subreaper: self.subreaper,
        })
    }

    fn next_pipeline(&mut self) {
        self.groups.next_pipeline();
    }

    fn next_leads_session(&mut self) {
        self.groups.next_leads_session();
    }

    fn pre_spawn(&mut self, launch: &mut Launch) {
        self.groups.pre_spawn(launch);
        launch.death_signal(Signal::KILL);
    }

    fn post_spawn(&mut self, pid: u32) {
        self.groups.post_spawn(pid);
        self.spawned.push(pid);
        if self.since.is_none() {
            self.since = corral_sys::reaper::process(pid).map(|p| p.start);
        }
    }

    fn signal(&self, signal: Signal) -> std::io::Result<bool> {
        let first = self.walk();
        let rounds = if signal == Signal::KILL {
            KILL_ROUNDS
        } else {
            1
        };
        let mut members = first.clone();
        for round in 1..=rounds {
            for pid in &members {
                corral_sys::reaper::signal(*pid, signal);
            }
            if round == rounds {
                break;
            }
            members = self.walk();
            if members.is_empty() {
                break;
            }
        }
        Ok(!first.is_empty())
    }

    fn is_empty(&self) -> bool {
        self.walk().is_empty()
    }

    fn members(&self) -> Vec<u32> {
        self.walk()
    }
}

impl Drop for Subreaped {
    /// Nothing outlives its unit: what is left is killed, and orphans that exited reaped.
    fn drop(&mut self) {
        if !self.walk().is_empty() {
            let _ = self.signal(Signal::KILL);
            std::thread::sleep(std::time::Duration::from_millis(5));
            self.walk();
        }
    }
}
