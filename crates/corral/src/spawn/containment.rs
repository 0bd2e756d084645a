//! Containment: the unit a call's processes live in, and the one thing that is signalled
//! to end them all.
//!
//! The seam is the [`Containment`] trait: `prepare` runs on the `Command` before spawn,
//! `adopt` after, and `signal`, `is_empty` and `members` act on the whole unit. The caller
//! never needs to know which unit it holds beyond its name, which every result carries.
//!
//! # Layers, strongest first
//!
//! [`unit_for_call`] probes the host once per process and combines the layers it allows:
//! one of the first two, inside the third where it can be made. It never logs: a weaker
//! layer is never silent because its name is recorded in the outcome and the trace.
//!
//! 1. **A cgroup v2 group per call** (`cgroup-v2+pids`, `cgroup-v2+pids-v1`, `cgroup-v2`;
//!    see [`super::cgroup`]) where corral may create and join groups: as root, or in a
//!    delegated subtree. It reaches every descendant whatever it does with sessions,
//!    groups or parents, kills them all with one write, and bounds forks with `pids.max`.
//! 2. **Process groups + child subreaper** (`process-group+subreaper`, [`Subreaped`]):
//!    where no cgroup can be made (or [`Config::cgroups`](crate::Config::cgroups) is off).
//!    corral becomes a child subreaper, so orphans re-parent to corral rather than init,
//!    and the unit finds its processes by walking `/proc`. Its reach is documented on the
//!    type; it is a sound best effort, not a guarantee.
//! 3. **A PID namespace per call** (`…+pid-ns`, [`super::pid_namespace`]) around either,
//!    where corral may make one (root; [`Config::pid_namespace`](crate::Config::pid_namespace)).
//!    Its init (`corral-init`) only waits; when the call ends the init is killed
//!    and the kernel kills everything in the namespace, however it left its group or
//!    cgroup. Its orphans are the init's, so the unit still finds and counts them. The
//!    command sees only its call's processes and cannot signal the host's.
//!
//! Plain [`ProcessGroup`] (`process-group`) remains the building block both layers use
//! for each pipeline.

use std::collections::HashSet;
use std::sync::{Mutex, OnceLock};

use std::process::{Child, Command};

use corral_sys::Signal;

use crate::config::Config;

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
    /// Configure a command before it is spawned into this unit.
    fn prepare(&mut self, cmd: &mut Command);
    /// Start the prepared command (a unit with a PID namespace starts it inside).
    fn spawn(&mut self, cmd: &mut Command) -> std::io::Result<Child>;
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
    spawned: Vec<u32>,
    /// The next process starts a session (and so a group) itself.
    session_next: bool,
}

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        let mut registry = registry();
        for pid in &self.spawned {
            registry.pids.remove(pid);
        }
        for pgid in &self.groups {
            registry.groups.remove(pgid);
        }
    }
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

    fn next_leads_session(&mut self) {
        self.current = None;
        self.session_next = true;
    }

    fn prepare(&mut self, cmd: &mut Command) {
        use std::os::unix::process::CommandExt;
        if std::mem::take(&mut self.session_next) {
            return;
        }
        // 0 makes the child the leader of a new group; later stages join the leader's,
        // named as the child will see it (a PID namespace numbers it differently).
        let leader = self
            .current
            .map_or(0, |p| corral_sys::reaper::pid_inside(p).unwrap_or(p));
        cmd.process_group(leader as i32);
    }

    fn spawn(&mut self, cmd: &mut Command) -> std::io::Result<Child> {
        cmd.spawn()
    }

    fn adopt(&mut self, pid: u32) {
        registry().pids.insert(pid);
        self.spawned.push(pid);
        if self.current.is_none() {
            self.current = Some(pid);
            self.groups.push(pid);
            registry().groups.insert(pid);
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

/// Pick the unit for one call: the strongest layer the host allows (see the module docs).
/// `label` names the call in the cgroup hierarchy, e.g. `step-3`.
pub(crate) fn unit_for_call(config: &Config, label: &str) -> Box<dyn Containment> {
    let unit: Box<dyn Containment> = if config.cgroups
        && let Some(host) = super::cgroup::host()
        && let Ok(unit) = super::cgroup::CgroupUnit::new(host, label, config.pids_max)
    {
        Box::new(unit)
    } else {
        Box::new(Subreaped::new())
    };
    if config.pid_namespace {
        super::pid_namespace::Namespaced::wrap(unit)
    } else {
        unit
    }
}

/// A boxed unit is a unit, so the caller can hold whichever [`unit_for_call`] chose.
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
    fn prepare(&mut self, cmd: &mut Command) {
        (**self).prepare(cmd);
    }
    fn spawn(&mut self, cmd: &mut Command) -> std::io::Result<Child> {
        (**self).spawn(cmd)
    }
    fn adopt(&mut self, pid: u32) {
        (**self).adopt(pid);
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
}

/// What every unit in this process has started, so that the process-table walk of one
/// [`Subreaped`] unit does not claim another unit's processes as orphans.
#[derive(Debug, Default)]
struct Registry {
    /// Processes a unit spawned itself (corral's direct children).
    pids: HashSet<u32>,
    /// Process groups a unit's pipelines lead.
    groups: HashSet<u32>,
}

fn registry() -> std::sync::MutexGuard<'static, Registry> {
    static REGISTRY: OnceLock<Mutex<Registry>> = OnceLock::new();
    REGISTRY
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner())
}

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
    pub(crate) fn new() -> Self {
        Self {
            groups: ProcessGroup::new(),
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
    fn name(&self) -> &'static str {
        if self.subreaper {
            "process-group+subreaper"
        } else {
            "process-group"
        }
    }

    fn next_pipeline(&mut self) {
        self.groups.next_pipeline();
    }

    fn next_leads_session(&mut self) {
        self.groups.next_leads_session();
    }

    fn prepare(&mut self, cmd: &mut Command) {
        self.groups.prepare(cmd);
        corral_sys::reaper::parent_death_signal_before_exec(cmd, Signal::KILL);
    }

    fn spawn(&mut self, cmd: &mut Command) -> std::io::Result<Child> {
        self.groups.spawn(cmd)
    }

    fn adopt(&mut self, pid: u32) {
        self.groups.adopt(pid);
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
