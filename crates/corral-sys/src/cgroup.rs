//! Control groups: find the hierarchies, make and remove groups, move a child into one
//! before it runs its first instruction, and end everything in a group at once.
//!
//! Both versions are handled where the kernel offers them: the unified (v2) hierarchy,
//! which can kill a whole group with one write (`cgroup.kill`, Linux 5.14+), and a v1
//! controller hierarchy (e.g. `pids`) on hosts that still bind controllers to v1.
//!
//! Writing `0` to a group's `cgroup.procs` moves the writing process, in both versions;
//! [`join_before_exec`] uses that in the forked child, on a descriptor opened before the
//! fork, so the child is inside the group before it can fork, `setsid` or exec.
//!
//! That write takes the kernel's process-wide `cgroup_threadgroup_rwsem` for writing,
//! which waits for an RCU grace period whenever no migration happened in the last one:
//! 5–16 ms on a 2-core host with `HZ=250`, paid by every call that comes after a pause (a
//! command-line call always, an agent's call seconds after the last). In a v1 hierarchy
//! the same move can be asked of the v1 `tasks` file instead ([`open_tasks`]): `0`
//! there moves only the writing thread, which the kernel does without that lock, and a
//! child that has not yet exec'd is a single thread, so the whole process moves (about
//! 40 µs). The v2 hierarchy has no such file for a plain group; there children are born
//! in place instead (see [`crate::spawn`]).

use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rustix::fs::{Mode, OFlags};

/// Where a cgroup hierarchy is mounted, and the root of what that mount shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mount {
    /// The mount point, e.g. `/sys/fs/cgroup` or `/sys/fs/cgroup/unified`.
    pub point: PathBuf,
    /// The group the mount shows as its root (`/` unless a subtree was bind-mounted).
    pub root: String,
}

/// The mount of the unified (v2) hierarchy, from `/proc/self/mountinfo`.
pub fn mount_v2() -> Option<Mount> {
    Mounts::read()?.v2()
}

/// The mount of the v1 hierarchy that carries `controller` (e.g. `"pids"`).
pub fn mount_v1(controller: &str) -> Option<Mount> {
    Mounts::read()?.v1(controller)
}

/// This process's mount table, read once for several questions: the kernel renders
/// `/proc/self/mountinfo` anew on every read, which costs more than the questions.
#[derive(Debug, Clone)]
pub struct Mounts {
    info: String,
}

impl Mounts {
    /// Read `/proc/self/mountinfo`.
    pub fn read() -> Option<Self> {
        std::fs::read_to_string("/proc/self/mountinfo")
            .ok()
            .map(|info| Self { info })
    }

    /// The mount of the unified (v2) hierarchy.
    pub fn v2(&self) -> Option<Mount> {
        self.find(|fstype, _| fstype == "cgroup2")
    }

    /// The mount of the v1 hierarchy that carries `controller` (e.g. `"pids"`).
    pub fn v1(&self, controller: &str) -> Option<Mount> {
        self.find(|fstype, opts| fstype == "cgroup" && opts.split(',').any(|o| o == controller))
    }

    fn find(&self, matches: impl Fn(&str, &str) -> bool) -> Option<Mount> {
        self.info
            .lines()
            .find_map(|line| parse_mountinfo_line(line, &matches))
    }
}

/// One line of mountinfo: `ID PARENT MAJ:MIN ROOT POINT OPTS [OPTIONAL...] - TYPE SRC SUPER`.
fn parse_mountinfo_line(line: &str, matches: &impl Fn(&str, &str) -> bool) -> Option<Mount> {
    let (head, tail) = line.split_once(" - ")?;
    let head: Vec<&str> = head.split(' ').collect();
    let tail: Vec<&str> = tail.split(' ').collect();
    let (fstype, super_opts) = (*tail.first()?, *tail.get(2)?);
    if !matches(fstype, super_opts) {
        return None;
    }
    Some(Mount {
        point: PathBuf::from(unescape(head.get(4)?)),
        root: unescape(head.get(3)?),
    })
}

/// mountinfo writes space, tab, newline and backslash as `\ooo` octal escapes.
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let octal = b
            .get(i + 1..i + 4)
            .filter(|d| d.iter().all(|c| (b'0'..=b'7').contains(c)));
        if let (b'\\', Some(d)) = (b[i], octal) {
            let v = d.iter().fold(0u16, |v, c| v * 8 + u16::from(c - b'0'));
            out.push(v as u8);
            i += 4;
            continue;
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// This process's group in the unified hierarchy (the `0::/path` line of
/// `/proc/self/cgroup`).
pub fn own_path_v2() -> Option<String> {
    own_path(|hierarchy, _| hierarchy == "0")
}

/// This process's group in the v1 hierarchy that carries `controller`.
pub fn own_path_v1(controller: &str) -> Option<String> {
    own_path(|hierarchy, controllers| {
        hierarchy != "0" && controllers.split(',').any(|c| c == controller)
    })
}

fn own_path(matches: impl Fn(&str, &str) -> bool) -> Option<String> {
    let text = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    text.lines().find_map(|line| {
        let mut parts = line.splitn(3, ':');
        let (id, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        matches(id, controllers).then(|| path.to_string())
    })
}

/// The directory of group `path` (as `/proc/self/cgroup` names it) under `mount`, or
/// `None` when the mount does not show that group.
pub fn dir_of(mount: &Mount, path: &str) -> Option<PathBuf> {
    let root = mount.root.trim_end_matches('/');
    let rest = path.strip_prefix(root)?;
    if !(rest.is_empty() || rest.starts_with('/')) {
        return None;
    }
    let rest = rest.trim_start_matches('/');
    Some(if rest.is_empty() {
        mount.point.clone()
    } else {
        mount.point.join(rest)
    })
}

/// Create group directory `dir`; an existing one is fine.
pub fn create(dir: &Path) -> io::Result<()> {
    match rustix::fs::mkdir(dir, Mode::from_raw_mode(0o755)) {
        Ok(()) | Err(rustix::io::Errno::EXIST) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// Remove group directory `dir`. Fails with `EBUSY` while a process (or a child group) is
/// still in it; a group that is already gone is fine.
pub fn remove(dir: &Path) -> io::Result<()> {
    match rustix::fs::rmdir(dir) {
        Ok(()) | Err(rustix::io::Errno::NOENT) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// Open `dir/cgroup.procs` for writing, close-on-exec, for [`join_before_exec`].
pub fn open_procs(dir: &Path) -> io::Result<OwnedFd> {
    Ok(rustix::fs::open(
        dir.join("cgroup.procs"),
        OFlags::WRONLY | OFlags::CLOEXEC,
        Mode::empty(),
    )?)
}

/// Open a v1 group's `dir/tasks` for writing, close-on-exec: writing `0` moves the
/// writing thread only, without the grace period a `cgroup.procs` write can wait for (see
/// the module docs). Give it to a child that is still one thread when it writes (the
/// child of a fork or of [`crate::spawn`], before its exec).
pub fn open_tasks(dir: &Path) -> io::Result<OwnedFd> {
    Ok(rustix::fs::open(
        dir.join("tasks"),
        OFlags::WRONLY | OFlags::CLOEXEC,
        Mode::empty(),
    )?)
}

/// Open group directory `dir` itself (`O_PATH`, close-on-exec): the descriptor
/// [`crate::spawn`] gives `clone3` to have a child born in the group.
pub fn open_dir(dir: &Path) -> io::Result<OwnedFd> {
    Ok(rustix::fs::open(
        dir,
        OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )?)
}

/// Have the child `cmd` spawns move itself into the group whose `cgroup.procs` is `procs`
/// (from [`open_procs`], or a v1 group's `tasks` from [`open_tasks`]) between fork and
/// exec. If the move fails, the spawn fails: a
/// process is never started outside the group it was meant for.
pub fn join_before_exec(cmd: &mut Command, procs: Arc<OwnedFd>) {
    let hook = move || -> io::Result<()> {
        // One write(2) of a constant on a descriptor opened before the fork: no
        // allocation, no lock. io::Error::from_raw_os_error does not allocate either.
        match rustix::io::write(&*procs, b"0") {
            Ok(_) => Ok(()),
            Err(e) => Err(io::Error::from_raw_os_error(e.raw_os_error())),
        }
    };
    // SAFETY: the hook runs in the forked child before exec, where only async-signal-safe
    // work is allowed. It makes one raw write(2) syscall on an already-open descriptor
    // (kept alive by the Arc the closure owns, which is not dropped in the child) with a
    // static buffer, and builds its error without allocating.
    unsafe {
        cmd.pre_exec(hook);
    }
}

/// Write `value` to the control file `dir/file` (e.g. `pids.max`, `cgroup.kill`).
pub fn write(dir: &Path, file: &str, value: &str) -> io::Result<()> {
    std::fs::write(dir.join(file), value)
}

/// End every process in the unified-hierarchy group `dir` and its descendants with
/// SIGKILL, including processes that fork while it happens (`cgroup.kill`, Linux 5.14+).
pub fn kill(dir: &Path) -> io::Result<()> {
    write(dir, "cgroup.kill", "1")
}

/// Whether the unified-hierarchy group `dir` (or a group below it) still has a live
/// process, from `populated` in `cgroup.events`. Exited but unreaped processes do not
/// count. A group that no longer exists is empty.
pub fn populated(dir: &Path) -> bool {
    match crate::kernel_file::read(&dir.join("cgroup.events")) {
        Ok(events) => events
            .lines()
            .any(|l| l.split_once(' ') == Some(("populated", "1"))),
        Err(_) => false,
    }
}

/// Wait until group `dir` holds no live process (or no longer exists), at most until
/// `until`; whether it is empty. A unified-hierarchy group says so in `cgroup.events`,
/// which the kernel marks modified when `populated` changes: watched with inotify, so the
/// wait ends at the change, not at a poll's next tick. A v1 group has no such file: its
/// `cgroup.procs` (this group's and those below) is read until it lists none, at short
/// and growing intervals, since nothing in v1 tells a waiter.
pub fn wait_empty(dir: &Path, until: Instant) -> bool {
    let events = dir.join("cgroup.events");
    if !events.exists() {
        return wait_procs_empty(dir, until);
    }
    use rustix::fs::inotify;
    // Watched before the first read, so a change between the two is not missed.
    let watch = inotify::init(inotify::CreateFlags::CLOEXEC | inotify::CreateFlags::NONBLOCK)
        .ok()
        .filter(|fd| inotify::add_watch(fd, &events, inotify::WatchFlags::MODIFY).is_ok());
    let Some(watch) = watch else {
        return wait_procs_empty(dir, until);
    };
    let mut buf = [std::mem::MaybeUninit::<u8>::uninit(); 1024];
    loop {
        if !populated(dir) {
            return true;
        }
        let now = Instant::now();
        if now >= until {
            return false;
        }
        let left = until - now;
        let timeout = rustix::event::Timespec {
            tv_sec: left.as_secs() as _,
            tv_nsec: left.subsec_nanos() as _,
        };
        let mut fds = [rustix::event::PollFd::new(
            &watch,
            rustix::event::PollFlags::IN,
        )];
        match rustix::event::poll(&mut fds, Some(&timeout)) {
            Ok(_) | Err(rustix::io::Errno::INTR) => {}
            Err(_) => return wait_procs_empty(dir, until),
        }
        // Drained, so the next poll waits for the next change.
        let mut reader = inotify::Reader::new(&watch, &mut buf);
        while reader.next().is_ok() {}
    }
}

/// [`wait_empty`] where no event says so: `cgroup.procs` of `dir` and the groups below it
/// read until none lists a process.
fn wait_procs_empty(dir: &Path, until: Instant) -> bool {
    let mut pause = Duration::from_millis(1);
    loop {
        if !any_procs(dir) {
            return true;
        }
        let now = Instant::now();
        if now >= until {
            return false;
        }
        std::thread::sleep(pause.min(until - now));
        pause = (pause * 2).min(Duration::from_millis(50));
    }
}

/// Whether group `dir` or one below it lists a process (a group gone lists none).
fn any_procs(dir: &Path) -> bool {
    if !procs(dir).is_empty() {
        return true;
    }
    std::fs::read_dir(dir).is_ok_and(|entries| {
        entries
            .flatten()
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .any(|e| any_procs(&e.path()))
    })
}

/// The pids in group `dir` (its own `cgroup.procs`, not its descendants'), without 0s
/// (processes of other PID namespaces).
pub fn procs(dir: &Path) -> Vec<u32> {
    std::fs::read_to_string(dir.join("cgroup.procs"))
        .map(|s| {
            s.lines()
                .filter_map(|l| l.trim().parse().ok())
                .filter(|p| *p != 0)
                .collect()
        })
        .unwrap_or_default()
}

/// CPU time spent in user and in system mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CpuTime {
    /// In user mode.
    pub user: std::time::Duration,
    /// In the kernel on the processes' behalf.
    pub system: std::time::Duration,
}

impl CpuTime {
    /// What was spent between `earlier` and `self`.
    pub fn since(self, earlier: CpuTime) -> CpuTime {
        CpuTime {
            user: self.user.saturating_sub(earlier.user),
            system: self.system.saturating_sub(earlier.system),
        }
    }
}

/// The CPU time every process that ever ran in the unified-hierarchy group `dir` (and the
/// groups below it) has spent, from `user_usec` and `system_usec` in its `cpu.stat`,
/// which the kernel keeps whatever controllers are enabled.
pub fn cpu_stat(dir: &Path) -> Option<CpuTime> {
    let text = std::fs::read_to_string(dir.join("cpu.stat")).ok()?;
    let field = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.trim().parse().ok())
            .map(std::time::Duration::from_micros)
    };
    Some(CpuTime {
        user: field("user_usec")?,
        system: field("system_usec")?,
    })
}

/// The controllers listed in `dir/FILE` (`cgroup.controllers` or
/// `cgroup.subtree_control`).
pub fn controllers(dir: &Path, file: &str) -> Vec<String> {
    std::fs::read_to_string(dir.join(file))
        .map(|s| s.split_whitespace().map(str::to_string).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mountinfo_lines_are_parsed() {
        let v2 = |t: &str, _: &str| t == "cgroup2";
        let line = "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw";
        assert_eq!(
            parse_mountinfo_line(line, &v2),
            Some(Mount {
                point: "/sys/fs/cgroup/unified".into(),
                root: "/".into()
            })
        );
        let pids = |t: &str, o: &str| t == "cgroup" && o.split(',').any(|c| c == "pids");
        let line = "39 31 0:36 / /sys/fs/cgroup/pids rw,relatime shared:5 - cgroup cgroup rw,pids";
        assert_eq!(
            parse_mountinfo_line(line, &pids).map(|m| m.point),
            Some("/sys/fs/cgroup/pids".into())
        );
        assert_eq!(parse_mountinfo_line(line, &v2), None);
        assert_eq!(unescape(r"/a\040b"), "/a b");
    }

    #[test]
    fn group_paths_join_under_the_mount_root() {
        let m = Mount {
            point: "/sys/fs/cgroup".into(),
            root: "/".into(),
        };
        assert_eq!(dir_of(&m, "/"), Some("/sys/fs/cgroup".into()));
        assert_eq!(dir_of(&m, "/a/b"), Some("/sys/fs/cgroup/a/b".into()));
        let sub = Mount {
            point: "/sys/fs/cgroup".into(),
            root: "/docker/x".into(),
        };
        assert_eq!(dir_of(&sub, "/docker/x/y"), Some("/sys/fs/cgroup/y".into()));
        assert_eq!(dir_of(&sub, "/docker/xy"), None);
        assert_eq!(dir_of(&sub, "/other"), None);
    }
}
