//! What a corral killed outright (SIGKILL, a crash) left running, ended by the next.
//!
//! A call in a cgroup of corral's is found again by its group's name, and one in a PID
//! namespace ends with it. Elsewhere (an ordinary user's unsandboxed call on a host that
//! delegates no cgroup) a call is held by process groups and corral's subreaping, which
//! end with corral: the kernel kills its direct children (`PR_SET_PDEATHSIG`), and their
//! own children are re-parented to init and run on. So every process group a call leads
//! is written down as it is made, a line in this process's leash file under the store's
//! `owners/` directory (`leash-<pidns>-<pid>-<start>`, named as a cgroup owner is), and
//! the next corral to open a store there ends the groups of an owner that is gone.
//!
//! A group is ended only while it is the one written down: its leader alive with the
//! start time written, or the leader gone and members left that started no earlier than
//! it did (a group's number is not given to another while a member holds it). A process
//! that left its group (`setsid`) is not found this way once corral is gone.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use corral_sys::Signal;

/// Where this process writes its groups down, the file once made, and the groups in it
/// not yet ended.
struct Leash {
    dir: PathBuf,
    file: Option<File>,
    live: Vec<u32>,
}

static LEASH: OnceLock<Mutex<Leash>> = OnceLock::new();

/// Write the groups this process makes under `dir` (the first store opened says where).
pub(crate) fn hold_in(dir: &Path) {
    let _ = LEASH.set(Mutex::new(Leash {
        dir: dir.to_path_buf(),
        file: None,
        live: Vec::new(),
    }));
}

/// The name of this process's leash file.
fn own_name() -> String {
    let pid = std::process::id();
    let start = corral_sys::reaper::process(pid).map_or(0, |p| p.start);
    let ns = corral_sys::pidns::namespace_of(pid).unwrap_or(0);
    format!("leash-{ns}-{pid}-{start}")
}

/// Write down group `pgid`, just made, with its leader's start time. Best effort: a
/// group that cannot be written down is still ended by this corral while it lives.
pub(crate) fn record(pgid: u32) {
    let Some(leash) = LEASH.get() else { return };
    let Some(leader) = corral_sys::reaper::process(pgid) else {
        return;
    };
    let Ok(mut leash) = leash.lock() else { return };
    if leash.file.is_none() {
        let _ = std::fs::create_dir_all(&leash.dir);
        leash.file = OpenOptions::new()
            .append(true)
            .create(true)
            .mode(0o600)
            .open(leash.dir.join(own_name()))
            .ok();
    }
    if let Some(file) = leash.file.as_mut()
        && file
            .write_all(format!("{pgid} {}\n", leader.start).as_bytes())
            .is_ok()
    {
        leash.live.push(pgid);
    }
}

/// Group `pgid` has ended (its unit ended everything in it): it is struck off, and once
/// no group is left the file is emptied, so that it stays small and names only what a
/// sudden end of corral would leave.
pub(crate) fn release(pgid: u32) {
    let Some(leash) = LEASH.get() else { return };
    let Ok(mut leash) = leash.lock() else { return };
    let Some(at) = leash.live.iter().position(|g| *g == pgid) else {
        return;
    };
    leash.live.swap_remove(at);
    let empty = leash.live.is_empty();
    if let Some(file) = leash.file.as_mut() {
        let _ = if empty {
            file.set_len(0)
        } else {
            file.write_all(format!("-{pgid}\n").as_bytes())
        };
    }
}

/// End the groups written down in `dir` by corrals that are gone, and remove their
/// files. Returns how many groups were ended.
pub(crate) fn sweep(dir: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    let here = corral_sys::pidns::namespace_of(std::process::id()).unwrap_or(0);
    let mut ended = 0;
    let mut snapshot: Option<Vec<corral_sys::reaper::Proc>> = None;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(owner) = name.to_str().and_then(|n| n.strip_prefix("leash-")) else {
            continue;
        };
        let Some((ns, pid, start)) = parse_owner(owner) else {
            continue;
        };
        if ns != here || pid == std::process::id() {
            continue;
        }
        let alive = corral_sys::reaper::process(pid).is_some_and(|p| p.start == start);
        if alive {
            continue;
        }
        let text = std::fs::read_to_string(entry.path()).unwrap_or_default();
        for (pgid, leader_start) in left_running(&text) {
            let procs = snapshot.get_or_insert_with(corral_sys::reaper::processes);
            if still_the_group(procs, pgid, leader_start)
                && corral_sys::group::signal(pgid, Signal::KILL).unwrap_or(false)
            {
                ended += 1;
            }
        }
        let _ = std::fs::remove_file(entry.path());
    }
    ended
}

/// The groups a leash file names that were not struck off after (`-<pgid>`), in order.
fn left_running(text: &str) -> Vec<(u32, u64)> {
    let mut left: Vec<(u32, u64)> = Vec::new();
    for line in text.lines() {
        if let Some(pgid) = line.strip_prefix('-').and_then(|g| g.parse::<u32>().ok()) {
            left.retain(|(g, _)| *g != pgid);
        } else if let Some(group) = parse_group(line) {
            left.push(group);
        }
    }
    left
}

/// `<pidns>-<pid>-<start>`.
fn parse_owner(owner: &str) -> Option<(u64, u32, u64)> {
    let mut parts = owner.split('-');
    let ns = parts.next()?.parse().ok()?;
    let pid = parts.next()?.parse().ok()?;
    let start = parts.next()?.parse().ok()?;
    parts.next().is_none().then_some((ns, pid, start))
}

/// `<pgid> <leader start>`.
fn parse_group(line: &str) -> Option<(u32, u64)> {
    let (pgid, start) = line.split_once(' ')?;
    Some((pgid.parse().ok()?, start.parse().ok()?))
}

/// Whether group `pgid` is still the one whose leader started at `leader_start`: its
/// leader is that process, or, the leader gone, live members that started no earlier.
fn still_the_group(procs: &[corral_sys::reaper::Proc], pgid: u32, leader_start: u64) -> bool {
    if pgid <= 1 {
        return false;
    }
    match procs.iter().find(|p| p.pid == pgid) {
        Some(leader) => leader.start == leader_start && leader.pgrp == pgid,
        None => procs
            .iter()
            .any(|p| p.pgrp == pgid && !p.zombie && p.start >= leader_start),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn proc(pid: u32, pgrp: u32, start: u64) -> corral_sys::reaper::Proc {
        corral_sys::reaper::Proc {
            pid,
            ppid: 1,
            pgrp,
            session: pgrp,
            zombie: false,
            start,
        }
    }

    #[test]
    fn a_group_is_ended_only_while_it_is_the_one_written_down() {
        // The leader alive as written.
        assert!(still_the_group(&[proc(50, 50, 7)], 50, 7));
        // Its number now another process's: left alone.
        assert!(!still_the_group(&[proc(50, 50, 9)], 50, 7));
        assert!(!still_the_group(&[proc(50, 40, 7)], 50, 7));
        // The leader gone, a member left that started after it.
        assert!(still_the_group(&[proc(51, 50, 8)], 50, 7));
        // Members of no such group, or older than the leader: left alone.
        assert!(!still_the_group(&[proc(51, 49, 8)], 50, 7));
        assert!(!still_the_group(&[proc(51, 50, 6)], 50, 7));
        assert!(!still_the_group(&[proc(1, 1, 0)], 1, 0));
    }

    #[test]
    fn owners_and_groups_are_read_as_written() {
        assert_eq!(
            parse_owner("4026531836-1234-99"),
            Some((4026531836, 1234, 99))
        );
        assert_eq!(parse_owner("1-2"), None);
        assert_eq!(parse_owner("1-2-3-4"), None);
        assert_eq!(parse_group("812 5512"), Some((812, 5512)));
        assert_eq!(parse_group("812"), None);
        assert_eq!(
            left_running("5 1\n6 2\n-5\n5 3\n-6\n7 4\n"),
            [(5, 3), (7, 4)]
        );
    }
}
