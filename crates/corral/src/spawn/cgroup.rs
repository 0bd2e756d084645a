//! The strongest unit corral builds: one cgroup v2 group per call.
//!
//! A process cannot leave a cgroup by forking, `setsid`, double-forking or re-parenting;
//! only a write to a `cgroup.procs` file moves it, which takes write access to the
//! hierarchy. So the group holds the whole tree a command grows, and `cgroup.kill`
//! (Linux 5.14+) ends all of it with one write, including processes forking meanwhile.
//!
//! Layout. The unified hierarchy is found in `/proc/self/mountinfo` (`/sys/fs/cgroup` on
//! pure-v2 hosts, `/sys/fs/cgroup/unified` in a hybrid layout), corral's own group in
//! `/proc/self/cgroup`. Once per process corral makes `corral-<pidns>-<pid>-<start>` (see
//! `owner_name`) under its own group (a group without processes, so controllers may be
//! enabled below it), and one group per call below that. Each child is born in the call's
//! group (`clone3` with `CLONE_INTO_CGROUP`, see [`super::launch`]); where the kernel
//! cannot do that, or a wrapper needs a forked child, it moves itself in between fork and
//! exec through a `cgroup.procs` descriptor opened before the spawn, and a child that
//! cannot be moved is not started. The call's group is removed when the unit is dropped. Groups left
//! by a corral process that died are removed by the next one that starts: before its first
//! call, or beside it where the run's opening is housekept (see `housekeeping`).
//!
//! Forks are bounded by `pids.max` ([`Config::pids_max`](crate::Config::pids_max)):
//! through the v2 `pids` controller when it can be enabled below corral's group, otherwise
//! through a matching group in the v1 `pids` hierarchy, which the child joins by writing
//! to its `tasks` (see [`corral_sys::cgroup::open_tasks`]). The unit's
//! name says which: `cgroup-v2+pids`, `cgroup-v2+pids-v1`, or `cgroup-v2` with no bound.
//!
//! Each pipeline still leads a process group of its own (job-control semantics: a
//! command's `kill 0` stays in its pipeline), but the unit never signals by group: it
//! signals the pids the cgroup lists, and kills with `cgroup.kill`.
//!
//! What it cannot reach: a process with write access to the hierarchy (root, or a
//! delegated user) can move itself to another group. The PID namespace around the unit
//! (see [`super::pid_namespace`]) is the layer that still ends it.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use corral_sys::Signal;
use corral_sys::cgroup;

use super::containment::Containment;
use super::group::ProcessGroup;
use super::launch::Launch;
use super::limits::Limits;
use super::unit_kind::{Base, PidsBound, UnitKind};

/// How the host lets corral use a controller (`pids`, `memory`) for a call's group.
#[derive(Debug)]
enum Controller {
    /// None corral can use.
    None,
    /// The v2 controller is enabled below corral's parent group.
    V2,
    /// A v1 hierarchy of it; corral's parent group there, below which each call gets a
    /// twin of its v2 group that its processes join.
    V1(PathBuf),
}

/// What the host allows, probed once per process.
#[derive(Debug)]
pub(crate) struct Host {
    /// `corral-<pidns>-<pid>-<start>` in the unified hierarchy: every call's group goes below it.
    parent: PathBuf,
    pids: Controller,
    memory: Controller,
    /// The groups corral's parent groups were made in, where dead corrals' groups are
    /// swept (see [`sweep_once`]).
    bases: Vec<PathBuf>,
}

static HOST: OnceLock<Option<Host>> = OnceLock::new();

/// Whether the housekeeping is making this process's groups ahead (see [`warm`]), and so
/// sweeps what dead corrals left once it has: a call does not wait for the sweep.
static WARMING: AtomicBool = AtomicBool::new(false);

/// The cgroup host, probed on first use; `None` when corral cannot make and join groups.
/// The groups dead corrals left are swept by then too, unless the housekeeping does it.
pub(crate) fn host() -> Option<&'static Host> {
    let host = HOST.get_or_init(probe).as_ref();
    if !WARMING.load(Ordering::Acquire) {
        host.inspect(|h| sweep_once(h));
    }
    host
}

/// Sweep the groups dead corrals left beside this process's parent groups, once per
/// process. What they held was theirs: no call of this process needs them gone first.
fn sweep_once(host: &Host) {
    static SWEPT: std::sync::Once = std::sync::Once::new();
    SWEPT.call_once(|| host.bases.iter().for_each(|base| sweep_stale(base)));
}

fn probe() -> Option<Host> {
    let mounts = cgroup::Mounts::read()?;
    let mount = mounts.v2()?;
    let base = cgroup::dir_of(&mount, &cgroup::own_path_v2()?)?;
    let parent = base.join(owner_name());
    cgroup::create(&parent).ok()?;
    // Without cgroup.kill (before Linux 5.14) a group could not be ended in one step; and
    // moving a process in takes write access to the common ancestor's cgroup.procs.
    let usable = parent.join("cgroup.kill").exists()
        && cgroup::open_procs(&base).is_ok()
        && cgroup::open_procs(&parent).is_ok();
    if !usable {
        let _ = cgroup::remove(&parent);
        return None;
    }
    let mut bases = vec![base.clone()];
    let mut controller = |name: &str, file: &str| {
        if enable_v2(name, &base, &parent, &mount) {
            Controller::V2
        } else {
            probe_v1(&mounts, name, file, &mut bases).map_or(Controller::None, Controller::V1)
        }
    };
    let pids = controller("pids", "pids.max");
    let memory = controller("memory", "memory.limit_in_bytes");
    Some(Host {
        parent,
        pids,
        memory,
        bases,
    })
}

/// Enable the v2 `controller` for the groups below `parent`, if the host lets us.
fn enable_v2(controller: &str, base: &Path, parent: &Path, mount: &cgroup::Mount) -> bool {
    let has = |dir: &Path, file: &str| {
        cgroup::controllers(dir, file)
            .iter()
            .any(|c| c == controller)
    };
    if !has(parent, "cgroup.controllers") && has(base, "cgroup.controllers") {
        // Only possible where `base` holds no processes of its own. Never at the root of
        // the hierarchy: that would change every group on the host.
        if mount.point != base {
            let _ = cgroup::write(base, "cgroup.subtree_control", &format!("+{controller}"));
        }
    }
    has(parent, "cgroup.controllers")
        && (has(parent, "cgroup.subtree_control")
            || cgroup::write(parent, "cgroup.subtree_control", &format!("+{controller}")).is_ok())
}

/// Whether calls' memory is bounded through a v1 `memory` hierarchy (whose OOM killer
/// ends the largest process of a group, not all of it).
pub(crate) fn memory_in_v1() -> bool {
    matches!(
        HOST.get(),
        Some(Some(Host {
            memory: Controller::V1(_),
            ..
        }))
    )
}

/// How many times the kernel's OOM killer acted in group `dir` (`oom_kill` of v2's
/// `memory.events`, or of v1's `memory.oom_control`); 0 where neither says.
fn oom_kills(dir: &Path) -> u64 {
    std::fs::read_to_string(dir.join("memory.events"))
        .or_else(|_| std::fs::read_to_string(dir.join("memory.oom_control")))
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("oom_kill "))
                .and_then(|n| n.trim().parse().ok())
        })
        .unwrap_or(0)
}

/// corral's parent group in the v1 hierarchy of `controller`, made, if there is one it
/// may use (its groups have `file`); the group it is made in joins `bases`.
fn probe_v1(
    mounts: &cgroup::Mounts,
    controller: &str,
    file: &str,
    bases: &mut Vec<PathBuf>,
) -> Option<PathBuf> {
    let mount = mounts.v1(controller)?;
    let base = cgroup::dir_of(&mount, &cgroup::own_path_v1(controller)?)?;
    bases.push(base.clone());
    let parent = base.join(owner_name());
    cgroup::create(&parent).ok()?;
    if parent.join(file).exists() && cgroup::open_tasks(&parent).is_ok() {
        Some(parent)
    } else {
        let _ = cgroup::remove(&parent);
        None
    }
}

/// Probe the host, make one call's group ahead and keep it for the first call to take
/// (see [`Pooled`]): a group holds no process, so nothing waits between calls. What dead
/// corrals left is swept later, by [`sweep_after_warm`].
pub(crate) fn warm(limits: Limits) {
    WARMING.store(true, Ordering::Release);
    if let Some(host) = HOST.get_or_init(probe).as_ref() {
        // Dropped empty, it goes to the pool.
        drop(CgroupUnit::new(host, "made-ahead", limits));
    }
}

/// Sweep what dead corrals left, after [`warm`] and whatever else the housekeeping makes
/// for the first call.
pub(crate) fn sweep_after_warm() {
    if let Some(Some(host)) = HOST.get() {
        sweep_once(host);
    }
}

/// Whether process `pid` is in a call's group of this corral process (so it belongs to a
/// cgroup unit, whoever its parent is now).
pub(crate) fn in_a_unit(pid: u32) -> bool {
    // Not probed yet: no cgroup unit exists, and asking must not create the groups.
    let Some(Some(host)) = HOST.get() else {
        return false;
    };
    let Some(parent) = host.parent.file_name().and_then(|n| n.to_str()) else {
        return false;
    };
    std::fs::read_to_string(format!("/proc/{pid}/cgroup")).is_ok_and(|s| {
        s.lines()
            .filter_map(|l| l.strip_prefix("0::"))
            .any(|path| path.split('/').any(|part| part == parent))
    })
}

/// `corral-<pidns>-<pid>-<start>`: this process, named so that a later corral can tell,
/// without trusting a pid alone, whether the owner of a group is still alive. A pid means
/// something only in its PID namespace (`pidns`, the inode of `/proc/self/ns/pid`): two
/// corrals in different containers can share a cgroup hierarchy and the same pids.
fn owner_name() -> String {
    let pid = std::process::id();
    let start = corral_sys::reaper::process(pid).map_or(0, |p| p.start);
    format!("corral-{}-{pid}-{start}", own_pid_namespace())
}

/// The inode of this process's PID namespace; 0 if `/proc` cannot say.
fn own_pid_namespace() -> u64 {
    corral_sys::pidns::namespace_of(std::process::id()).unwrap_or(0)
}

/// End what corral processes that no longer exist left under `base`: a corral that died
/// (killed, crashed) could not end its calls and handles, so the next one does. Only
/// owners in this PID namespace are judged: one is gone when no process has its pid, or
/// the process that has it started at another time (the pid was reused). Groups of
/// another namespace are left alone; groups of an older name are removed only if empty.
fn sweep_stale(base: &Path) {
    let here = own_pid_namespace();
    let Ok(entries) = std::fs::read_dir(base) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix("corral-")) else {
            continue;
        };
        let parts: Vec<&str> = rest.split('-').collect();
        let (pid, start) = match parts.as_slice() {
            [ns, pid, start] => {
                if ns.parse::<u64>().ok() != Some(here) {
                    continue;
                }
                (pid.parse::<u32>().ok(), start.parse::<u64>().ok())
            }
            [pid, ..] => (pid.parse::<u32>().ok(), None),
            [] => continue,
        };
        let Some(pid) = pid else { continue };
        if pid == std::process::id() {
            continue;
        }
        let owner = corral_sys::reaper::process(pid);
        let dead = match (owner, start) {
            (None, Some(_)) => true,
            (Some(p), Some(start)) => p.start != start,
            _ => false,
        };
        let dir = entry.path();
        if dead && cgroup::populated(&dir) {
            let _ = cgroup::kill(&dir);
            let until = Instant::now() + REMOVE_WAIT;
            while cgroup::populated(&dir) && Instant::now() < until {
                std::thread::sleep(Duration::from_millis(2));
            }
        }
        if dead || owner.is_none() {
            remove_tree(&dir);
        }
    }
}

/// Remove group `dir` and the groups below it, deepest first. Best effort.
fn remove_tree(dir: &Path) -> bool {
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                remove_tree(&entry.path());
            }
        }
    }
    cgroup::remove(dir).is_ok()
}

/// Groups that could not be removed when their unit was dropped; retried later.
static PENDING: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn retry_pending() {
    let mut pending = PENDING.lock().unwrap_or_else(|e| e.into_inner());
    pending.retain(|dir| !remove_tree(dir));
}

/// A call's group in a v1 hierarchy (`pids`, `memory`), beside its v2 one: its
/// directory, and its `tasks`, which each child writes itself into before its exec.
#[derive(Debug)]
struct Twin {
    dir: PathBuf,
    tasks: Arc<OwnedFd>,
}

impl Twin {
    /// Make `leaf` below `parent` and write `settings` to it.
    fn make(parent: &Path, leaf: &str, settings: &[(&str, &str)]) -> io::Result<Twin> {
        let dir = parent.join(leaf);
        cgroup::create(&dir)?;
        let made = settings
            .iter()
            .try_for_each(|(file, value)| cgroup::write(&dir, file, value))
            // `tasks`, not `cgroup.procs`: the child moves itself while it is one
            // thread, without waiting for an RCU grace period.
            .and_then(|()| cgroup::open_tasks(&dir));
        match made {
            Ok(fd) => Ok(Twin {
                dir,
                tasks: Arc::new(fd),
            }),
            Err(e) => {
                let _ = cgroup::remove(&dir);
                Err(e)
            }
        }
    }
}

/// One call's cgroup (and its v1 `pids` and `memory` twins, where those are the bounds).
#[derive(Debug)]
pub(crate) struct CgroupUnit {
    /// Where its bound on processes is set, if it has one.
    pids: PidsBound,
    dir: PathBuf,
    /// The group's directory, for a child born in it.
    dir_fd: Arc<OwnedFd>,
    procs: Arc<OwnedFd>,
    pids_v1: Option<Twin>,
    memory_v1: Option<Twin>,
    /// The bounds it was made for (the pool's key).
    limits: Limits,
    /// The memory bound written, where it was.
    memory_max: Option<u64>,
    /// The group's `oom_kill` count when the call took it.
    oom_before: u64,
    groups: ProcessGroup,
    /// The processes corral started, in order.
    spawned: Vec<u32>,
    /// `cgroup.kill` was written to the group. Such a group is never reused: the kernel
    /// remembers the kill, and a child later born into the group by `CLONE_INTO_CGROUP`
    /// from outside it is killed at birth.
    killed: AtomicBool,
    /// The group, registered for a signal that must end corral at once.
    held: Option<corral_sys::escalation::Held>,
}

impl CgroupUnit {
    /// Make the group for one call. `label` becomes part of its name (for people reading
    /// the hierarchy); `limits` bound its processes, threads and memory, where the host
    /// can.
    pub(crate) fn new(host: &Host, label: &str, limits: Limits) -> io::Result<Self> {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        retry_pending();
        if let Some(unit) = Pooled::take(limits) {
            return Ok(unit);
        }
        let label: String = label
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .take(64)
            .collect();
        // Groups are reused by later calls, so the label names the call that made it.
        let leaf = format!("{}-{label}", NEXT.fetch_add(1, Ordering::Relaxed));
        let dir = host.parent.join(&leaf);
        cgroup::create(&dir)?;
        let opened = cgroup::open_procs(&dir).and_then(|p| Ok((p, cgroup::open_dir(&dir)?)));
        let (procs, dir_fd) = match opened {
            Ok((procs, dir_fd)) => (Arc::new(procs), Arc::new(dir_fd)),
            Err(e) => {
                let _ = cgroup::remove(&dir);
                return Err(e);
            }
        };
        let mut unit = Self {
            pids: PidsBound::None,
            dir,
            dir_fd,
            procs,
            pids_v1: None,
            memory_v1: None,
            limits,
            memory_max: None,
            oom_before: 0,
            groups: ProcessGroup::niced(limits.nice),
            spawned: Vec::new(),
            killed: AtomicBool::new(false),
            held: None,
        };
        if let Some(bytes) = limits.memory {
            match &host.memory {
                Controller::None => {}
                Controller::V2 => {
                    unit.memory_max = bound_memory(&unit.dir, bytes).then_some(bytes);
                }
                Controller::V1(parent) => {
                    let value = bytes.to_string();
                    if let Ok(twin) =
                        Twin::make(parent, &leaf, &[("memory.limit_in_bytes", &value)])
                    {
                        // No swap either, where swap is accounted.
                        if twin.dir.join("memory.memsw.limit_in_bytes").exists() {
                            let _ = cgroup::write(&twin.dir, "memory.memsw.limit_in_bytes", &value);
                        }
                        unit.memory_v1 = Some(twin);
                        unit.memory_max = Some(bytes);
                    }
                }
            }
        }
        let Some(max) = limits.pids else {
            return Ok(unit);
        };
        let max = max.max(1).to_string();
        match &host.pids {
            Controller::None => {}
            Controller::V2 => {
                if cgroup::write(&unit.dir, "pids.max", &max).is_ok() {
                    unit.pids = PidsBound::V2;
                }
            }
            Controller::V1(parent) => {
                if let Ok(twin) = Twin::make(parent, &leaf, &[("pids.max", &max)]) {
                    unit.pids_v1 = Some(twin);
                    unit.pids = PidsBound::V1;
                }
            }
        }
        Ok(unit)
    }

    /// Where its memory is accounted: its v1 `memory` twin, or its own group.
    fn memory_dir(&self) -> &Path {
        self.memory_v1.as_ref().map_or(&self.dir, |t| &t.dir)
    }

    /// Live pids in the call's group and any group below it.
    fn listed(&self) -> Vec<u32> {
        let mut found = Vec::new();
        collect_procs(&self.dir, &mut found);
        found
    }
}

/// Bound group `dir` at `bytes`: the whole group ends together when it is reached
/// (`memory.oom.group`), and nothing is swapped out to stay under it (`memory.swap.max`,
/// where the host has swap accounting). Whether `memory.max` was written.
fn bound_memory(dir: &Path, bytes: u64) -> bool {
    if cgroup::write(dir, "memory.max", &bytes.to_string()).is_err() {
        return false;
    }
    let _ = cgroup::write(dir, "memory.oom.group", "1");
    if dir.join("memory.swap.max").exists() {
        let _ = cgroup::write(dir, "memory.swap.max", "0");
    }
    true
}

fn collect_procs(dir: &Path, found: &mut Vec<u32>) {
    found.extend(cgroup::procs(dir));
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                collect_procs(&entry.path(), found);
            }
        }
    }
}

impl Containment for CgroupUnit {
    fn inner(&self) -> Option<&dyn Containment> {
        None
    }
    fn inner_mut(&mut self) -> Option<&mut dyn Containment> {
        None
    }
    fn kind(&self) -> UnitKind {
        UnitKind::of(Base::Cgroup {
            pids: self.pids,
            moved: !corral_sys::spawn::into_cgroup_supported(),
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
        // If corral dies, its direct children die with it; what they started stays in the
        // group until the next corral's sweep ends it. (The signal follows the spawning
        // thread, which for every call waits in that call, and for a handle is its
        // watcher.)
        launch.death_signal(Signal::KILL);
        for twin in self.pids_v1.iter().chain(&self.memory_v1) {
            launch.join_cgroup(&twin.tasks);
        }
        launch.born_in_cgroup(&self.dir_fd, &self.procs);
    }

    fn post_spawn(&mut self, pid: u32) {
        self.groups.post_spawn(pid);
        self.spawned.push(pid);
        if self.held.is_none() {
            self.held = corral_sys::escalation::hold_cgroup(self.dir_fd.as_raw_fd());
        }
    }

    fn signal(&self, signal: Signal) -> io::Result<bool> {
        if signal == Signal::KILL {
            let any = cgroup::populated(&self.dir);
            if any {
                self.killed.store(true, Ordering::Relaxed);
                cgroup::kill(&self.dir)?;
            }
            return Ok(any);
        }
        let members = self.listed();
        // The stages corral started, later ones first (they are the ones being fed), then
        // everything else the group holds, whatever session or process group it is in.
        let started = self.spawned.iter().rev().filter(|p| members.contains(p));
        let rest = members.iter().filter(|p| !self.spawned.contains(p));
        for pid in started.chain(rest) {
            corral_sys::reaper::signal(*pid, signal);
        }
        Ok(!members.is_empty())
    }

    fn is_empty(&self) -> bool {
        !cgroup::populated(&self.dir)
    }

    fn members(&self) -> Vec<u32> {
        self.listed()
    }

    fn cpu_time(&self) -> Option<corral_sys::cgroup::CpuTime> {
        cgroup::cpu_stat(&self.dir)
    }

    fn remains(&self) -> super::Remains {
        if !cgroup::populated(&self.dir) {
            return super::Remains::Nothing;
        }
        // Marked as a killed group is, so that the drop never pools it: its emptiness,
        // waited for, stays this unit's.
        self.killed.store(true, Ordering::Relaxed);
        super::Remains::Cgroup(self.dir.clone())
    }

    fn memory_max(&self) -> Option<u64> {
        self.memory_max
    }

    fn memory_exceeded(&self) -> Option<u64> {
        let max = self.memory_max?;
        (oom_kills(self.memory_dir()) > self.oom_before).then_some(max)
    }
}

/// How long a dropped unit waits for killed processes to leave before removing the group.
const REMOVE_WAIT: Duration = Duration::from_secs(1);

/// Empty groups kept for the next call: making and removing a group costs more than the
/// rest of starting a short command, and an empty group carries nothing over.
struct Pooled {
    pids: PidsBound,
    dir: PathBuf,
    dir_fd: Arc<OwnedFd>,
    procs: Arc<OwnedFd>,
    pids_v1: Option<Twin>,
    memory_v1: Option<Twin>,
    limits: Limits,
    memory_max: Option<u64>,
}

/// At most this many empty groups wait for reuse.
const POOL_SIZE: usize = 8;

static POOL: Mutex<Vec<Pooled>> = Mutex::new(Vec::new());

impl Pooled {
    /// An empty group made for the same bound, if one is waiting. A group someone else
    /// removed meanwhile (an administrator, a corral of another version sweeping) is
    /// passed over: joining it would fail every spawn.
    fn take(limits: Limits) -> Option<CgroupUnit> {
        let mut pool = POOL.lock().unwrap_or_else(|e| e.into_inner());
        let p = loop {
            let i = pool.iter().position(|p| p.limits == limits)?;
            let p = pool.swap_remove(i);
            let v1_there = p.pids_v1.iter().chain(&p.memory_v1).all(|t| t.dir.exists());
            if p.dir.exists() && v1_there {
                break p;
            }
        };
        Some(CgroupUnit {
            pids: p.pids,
            oom_before: oom_kills(p.memory_v1.as_ref().map_or(&p.dir, |t| &t.dir)),
            dir: p.dir,
            dir_fd: p.dir_fd,
            procs: p.procs,
            pids_v1: p.pids_v1,
            memory_v1: p.memory_v1,
            limits,
            memory_max: p.memory_max,
            groups: ProcessGroup::niced(limits.nice),
            spawned: Vec::new(),
            killed: AtomicBool::new(false),
            held: None,
        })
    }

    /// Keep `unit`'s empty groups for reuse; `false` when the pool is full.
    fn give(unit: &mut CgroupUnit) -> bool {
        let mut pool = POOL.lock().unwrap_or_else(|e| e.into_inner());
        if pool.len() >= POOL_SIZE {
            return false;
        }
        pool.push(Pooled {
            pids: unit.pids,
            dir: std::mem::take(&mut unit.dir),
            dir_fd: Arc::clone(&unit.dir_fd),
            procs: Arc::clone(&unit.procs),
            pids_v1: unit.pids_v1.take(),
            memory_v1: unit.memory_v1.take(),
            limits: unit.limits,
            memory_max: unit.memory_max,
        });
        true
    }
}

impl Drop for CgroupUnit {
    /// Nothing outlives its unit: whatever is still in the group is killed, then the
    /// empty group is kept for the next call (unless it was ever killed) or removed (or queued for removal if the
    /// kernel is still tearing it down).
    fn drop(&mut self) {
        let mut empty = !cgroup::populated(&self.dir);
        if !empty {
            self.killed.store(true, Ordering::Relaxed);
            let _ = cgroup::kill(&self.dir);
            let until = Instant::now() + REMOVE_WAIT;
            while !empty && Instant::now() < until {
                std::thread::sleep(Duration::from_millis(2));
                empty = !cgroup::populated(&self.dir);
            }
        }
        let reusable = empty && !self.killed.load(Ordering::Relaxed);
        if reusable && Pooled::give(self) {
            return;
        }
        let twins = self.pids_v1.take().into_iter().chain(self.memory_v1.take());
        let dirs = std::iter::once(self.dir.clone()).chain(twins.map(|t| t.dir));
        for dir in dirs {
            if !remove_tree(&dir) {
                PENDING.lock().unwrap_or_else(|e| e.into_inner()).push(dir);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A process that sleeps in a new group `dir` below our own.
    fn sleeper_in(dir: &Path) -> std::process::Child {
        cgroup::create(dir).unwrap();
        let mut cmd = std::process::Command::new("sleep");
        cmd.arg("30");
        cgroup::join_before_exec(&mut cmd, Arc::new(cgroup::open_procs(dir).unwrap()));
        cmd.spawn().unwrap()
    }

    #[test]
    fn the_sweep_ends_dead_owners_here_and_leaves_other_namespaces_alone() {
        let Some(host) = host() else {
            eprintln!("skipped: corral cannot make cgroups here");
            return;
        };
        let base = host
            .parent
            .join(format!("sweep-test-{}", std::process::id()));
        cgroup::create(&base).unwrap();
        let here = own_pid_namespace();
        // An owner in this namespace that cannot exist (pids stop below 2^22).
        let dead = base.join(format!("corral-{here}-{}-1", (1 << 22) + 5));
        // A live corral of another PID namespace whose pid means nothing here.
        let foreign = base.join(format!("corral-{}-{}-1", here + 1, (1 << 22) + 5));
        let (mut in_dead, mut in_foreign) = (sleeper_in(&dead), sleeper_in(&foreign));

        sweep_stale(&base);

        let ended = in_dead.wait().unwrap();
        assert!(!ended.success(), "the dead owner's process was ended");
        assert!(!dead.exists(), "and its group removed");
        assert!(
            in_foreign.try_wait().unwrap().is_none(),
            "the foreign one lives"
        );
        assert!(foreign.exists());

        let _ = cgroup::kill(&foreign);
        in_foreign.wait().unwrap();
        while cgroup::populated(&foreign) {
            std::thread::sleep(Duration::from_millis(2));
        }
        assert!(remove_tree(&base));
    }
}
