//! Process groups: every command corral starts leads a group of its own, so one signal
//! reaches the command and whatever it started that stayed in the group.

use std::io;

use rustix::process::{Pid, Signal, kill_process_group, test_kill_process_group};

/// Send `signal` to every process in group `pgid`.
///
/// Returns `Ok(false)` when the group is already empty (nothing was signalled), which is
/// the normal state after a command and all of its children have exited.
pub fn signal(pgid: u32, signal: Signal) -> io::Result<bool> {
    let pid = to_pid(pgid)?;
    match kill_process_group(pid, signal) {
        Ok(()) => Ok(true),
        Err(rustix::io::Errno::SRCH) => Ok(false),
        Err(e) => Err(e.into()),
    }
}

/// Whether any process is still a member of group `pgid`.
///
/// One syscall (`kill(-pgid, 0)`), cheap enough to ask after every command.
pub fn is_alive(pgid: u32) -> bool {
    match to_pid(pgid) {
        Ok(pid) => match test_kill_process_group(pid) {
            Ok(()) => true,
            // EPERM means a member exists that we may not signal; it is still alive.
            Err(rustix::io::Errno::PERM) => true,
            Err(_) => false,
        },
        Err(_) => false,
    }
}

/// The pids of the live processes whose process group is `pgid`, read from `/proc`.
///
/// Zombies are left out: they have already exited and only wait to be reaped, which on
/// some hosts (a container whose init does not reap) never happens. This walks the
/// process table, so it is for the rare path after [`is_alive`] said yes.
pub fn members(pgid: u32) -> Vec<u32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for entry in dir.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        if stat_live_pgrp(pid) == Some(pgid) {
            found.push(pid);
        }
    }
    found.sort_unstable();
    found
}

/// The process group of `pid` (field 5 of `/proc/PID/stat`), unless it is a zombie or dead.
fn stat_live_pgrp(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may itself contain spaces or
    // parentheses, so fields are counted from the last ')'.
    let mut fields = stat[stat.rfind(')')? + 1..].split_whitespace();
    if matches!(fields.next()?, "Z" | "X" | "x") {
        return None;
    }
    fields.nth(1)?.parse().ok()
}

fn to_pid(raw: u32) -> io::Result<Pid> {
    i32::try_from(raw)
        .ok()
        .and_then(Pid::from_raw)
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "not a process id"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_group_is_alive_and_lists_its_leader() {
        use std::os::unix::process::CommandExt;
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .process_group(0)
            .spawn()
            .unwrap();
        let pgid = child.id();
        assert!(is_alive(pgid));
        assert!(members(pgid).contains(&pgid));
        assert!(signal(pgid, Signal::KILL).unwrap());
        child.wait().unwrap();
        assert!(!is_alive(pgid));
    }

    #[test]
    fn an_unused_group_is_empty() {
        // Process ids are at most 2^22 on Linux; this one cannot lead a group.
        let unused = (1 << 22) + 7;
        assert!(!is_alive(unused));
        assert!(!signal(unused, Signal::TERM).unwrap());
        assert!(members(unused).is_empty());
    }
}
