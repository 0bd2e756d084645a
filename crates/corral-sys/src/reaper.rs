//! Without cgroups: make corral the reaper of what its commands orphan, tie direct
//! children to corral's life, and read the process table to find the rest.
//!
//! - [`become_subreaper`]: `PR_SET_CHILD_SUBREAPER` on the whole corral process, so a
//!   process whose parent exits is re-parented to corral instead of to init, and stays
//!   findable as corral's child (a double fork no longer hides it).
//! - [`parent_death_signal_before_exec`]: `PR_SET_PDEATHSIG(SIGKILL)` in the child. Kernel
//!   caveat: the signal fires when the *thread* that spawned the child exits, not the
//!   process; a child spawned by a short-lived thread dies with that thread.
//! - [`processes`]: one snapshot of `/proc` (parent, group, session, state, start time).
//! - [`reap`]: collect one exited child without blocking.

use std::io;
use std::os::unix::process::CommandExt;
use std::process::Command;

use rustix::process::{Pid, Signal, WaitOptions};

/// Make this process a child subreaper (Linux 3.4+). Affects the whole process, for good.
pub fn become_subreaper() -> io::Result<()> {
    Ok(rustix::process::set_child_subreaper(Some(
        rustix::process::getpid(),
    ))?)
}

/// Have the child `cmd` spawns receive `signal` when the thread that spawned it exits.
/// If corral is already gone when the child gets there, the spawn fails instead.
pub fn parent_death_signal_before_exec(cmd: &mut Command, signal: Signal) {
    let parent = rustix::process::getpid();
    let hook = move || -> io::Result<()> {
        // Raw prctl(2) and getppid(2) syscalls on values captured before the fork; the
        // error is built from an errno without allocating.
        if let Err(e) = rustix::process::set_parent_process_death_signal(Some(signal)) {
            return Err(io::Error::from_raw_os_error(e.raw_os_error()));
        }
        // The parent may have died between fork and prctl: then no signal will come, and
        // the child has a new parent. (A parent outside the child's PID namespace reads
        // as none; had it died, the namespace's init would have become the parent.)
        if rustix::process::getppid().is_some_and(|now| now != parent) {
            return Err(io::Error::from_raw_os_error(libc::ESRCH));
        }
        Ok(())
    };
    // SAFETY: the hook runs in the forked child before exec. It only makes the prctl(2)
    // and getppid(2) syscalls with values captured before the fork (a pid and a signal
    // number, both Copy), and does not allocate, lock or log.
    unsafe {
        cmd.pre_exec(hook);
    }
}

/// One live process as `/proc/PID/stat` describes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Proc {
    /// Its process id.
    pub pid: u32,
    /// Its parent's.
    pub ppid: u32,
    /// Its process group.
    pub pgrp: u32,
    /// Its session.
    pub session: u32,
    /// Exited, waiting to be reaped (`Z`), or dead (`X`).
    pub zombie: bool,
    /// Start time in clock ticks since boot (field 22).
    pub start: u64,
}

/// Read `/proc/PID/stat`.
pub fn process(pid: u32) -> Option<Proc> {
    let stat = crate::kernel_file::read(format!("/proc/{pid}/stat").as_ref()).ok()?;
    parse_stat(pid, &stat)
}

fn parse_stat(pid: u32, stat: &str) -> Option<Proc> {
    // The command name (field 2) may contain spaces and parentheses: count from the last ')'.
    let fields: Vec<&str> = stat[stat.rfind(')')? + 1..].split_whitespace().collect();
    // fields[0] is field 3 (state); field N is fields[N - 3].
    Some(Proc {
        pid,
        zombie: matches!(*fields.first()?, "Z" | "X" | "x"),
        ppid: fields.get(1)?.parse().ok()?,
        pgrp: fields.get(2)?.parse().ok()?,
        session: fields.get(3)?.parse().ok()?,
        start: fields.get(19)?.parse().ok()?,
    })
}

/// Process `pid` as the processes in its own PID namespace number it (the last `NSpid`
/// of `/proc/PID/status`): `pid` itself unless it lives in a namespace below corral's.
pub fn pid_inside(pid: u32) -> Option<u32> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("NSpid:"))?
        .split_whitespace()
        .last()?
        .parse()
        .ok()
}

/// The children of `pid` (of each of its threads), from `/proc/PID/task/TID/children`.
pub fn children(pid: u32) -> Vec<u32> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for task in tasks.flatten() {
        if let Ok(list) = crate::kernel_file::read(&task.path().join("children")) {
            out.extend(
                list.split_whitespace()
                    .filter_map(|p| p.parse::<u32>().ok()),
            );
        }
    }
    out
}

/// The children of process `pid`'s main thread: all its children when it has one
/// thread, read without listing its threads.
pub fn main_thread_children(pid: u32) -> Vec<u32> {
    crate::kernel_file::read(format!("/proc/{pid}/task/{pid}/children").as_ref())
        .map(|list| {
            list.split_whitespace()
                .filter_map(|p| p.parse::<u32>().ok())
                .collect()
        })
        .unwrap_or_default()
}

/// `pid`'s descendants, children first; not `pid` itself.
pub fn descendants(pid: u32) -> Vec<u32> {
    with_descendants(children(pid))
}

/// `first` (a process's children) followed by their descendants.
pub fn with_descendants(first: Vec<u32>) -> Vec<u32> {
    let mut out = first;
    let mut next = 0;
    while next < out.len() {
        let more = children(out[next]);
        out.extend(more);
        next += 1;
    }
    out
}

/// Every process in `/proc` (this PID namespace), zombies included.
pub fn processes() -> Vec<Proc> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(process)
        .collect()
}

/// The CPU time of every child this process has reaped, and their reaped descendants
/// (`getrusage(RUSAGE_CHILDREN)`): what a shell's `time` reads before and after a
/// pipeline. Process-wide: it counts the children every thread reaped.
pub fn children_cpu() -> crate::cgroup::CpuTime {
    // SAFETY: an all-zero `rusage` is a valid value of that plain C struct.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage(2) writes one `rusage` to a pointer to our local.
    let ok = unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) } == 0;
    if !ok {
        return crate::cgroup::CpuTime::default();
    }
    let time = |t: libc::timeval| {
        std::time::Duration::from_secs(u64::try_from(t.tv_sec).unwrap_or(0))
            + std::time::Duration::from_micros(u64::try_from(t.tv_usec).unwrap_or(0))
    };
    crate::cgroup::CpuTime {
        user: time(usage.ru_utime),
        system: time(usage.ru_stime),
    }
}

/// Collect child `pid` if it has exited. Never blocks. `false` only while it is still
/// running: a pid that is no child of this process (any more) counts as collected.
pub fn reap(pid: u32) -> bool {
    let Some(pid) = i32::try_from(pid).ok().and_then(Pid::from_raw) else {
        return true;
    };
    !matches!(
        rustix::process::waitpid(Some(pid), WaitOptions::NOHANG),
        Ok(None)
    )
}

/// Wait for child `pid` to exit and reap it (at once if it has).
pub(crate) fn wait_for(pid: u32) {
    if let Some(pid) = i32::try_from(pid).ok().and_then(Pid::from_raw) {
        while let Err(rustix::io::Errno::INTR) =
            rustix::process::waitpid(Some(pid), WaitOptions::empty())
        {}
    }
}

/// Send `signal` to process `pid`; `false` when it no longer exists.
pub fn signal(pid: u32, signal: Signal) -> bool {
    let Some(pid) = i32::try_from(pid).ok().and_then(Pid::from_raw) else {
        return false;
    };
    rustix::process::kill_process(pid, signal).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_are_parsed() {
        let stat = "42 (a (b) c) S 7 42 40 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 12345 0 0";
        let p = parse_stat(42, stat).unwrap();
        assert_eq!((p.ppid, p.pgrp, p.session, p.start), (7, 42, 40, 12345));
        assert!(!p.zombie);
    }

    #[test]
    fn outside_a_namespace_of_its_own_a_pid_is_itself() {
        let me = std::process::id();
        assert_eq!(pid_inside(me), Some(me));
    }

    #[test]
    fn we_are_in_the_table() {
        let me = std::process::id();
        assert!(processes().iter().any(|p| p.pid == me && !p.zombie));
    }
}
