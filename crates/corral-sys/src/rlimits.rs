//! Per-process bounds for a call that has no cgroup to bound it: `RLIMIT_NPROC` for its
//! forks and `RLIMIT_DATA` for its memory, set in the child between its birth and its
//! exec, soft and hard alike, so nothing it starts can raise them.
//!
//! **Forks.** The kernel counts, against `RLIMIT_NPROC`, every process and thread of the
//! child's real uid (in its user namespace), not the call's alone: the bound is the uid's
//! count when the call starts ([`uid_tasks`], read at each call) plus the call's share.
//! Root, and a process holding `CAP_SYS_RESOURCE` or `CAP_SYS_ADMIN`, is not held by it.
//!
//! **Memory.** `RLIMIT_DATA` (Linux 4.7+) counts a process's private writable mappings
//! and its heap: what it allocates and touches, each process on its own. Address space
//! reserved without write access (V8's, the JVM's and Go's reservations) is not counted,
//! so those runtimes start; `RLIMIT_AS` would count it, and is never used. Shared memory
//! and files (in `/tmp` or anywhere) are not counted.

use std::io;
use std::os::unix::process::CommandExt;
use std::process::Command;

/// The bounds to set; `None` leaves one as it is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Rlimits {
    /// `RLIMIT_NPROC`: the most processes and threads of the child's real uid.
    pub nproc: Option<u64>,
    /// `RLIMIT_DATA`: the most private writable memory of each process, in bytes.
    pub data: Option<u64>,
}

impl Rlimits {
    /// Whether it sets nothing.
    pub fn is_empty(&self) -> bool {
        self.nproc.is_none() && self.data.is_none()
    }

    /// Set them in the calling process: between fork and exec, raw system calls on
    /// integers and a structure on the stack only.
    pub fn apply(&self) -> io::Result<()> {
        for (resource, max) in [
            (libc::RLIMIT_NPROC, self.nproc),
            (libc::RLIMIT_DATA, self.data),
        ] {
            let Some(max) = max else { continue };
            let limit = libc::rlimit64 {
                rlim_cur: max,
                rlim_max: max,
            };
            // SAFETY: prlimit64(2) on this process with a structure on this frame.
            if unsafe { libc::prlimit64(0, resource, &limit, std::ptr::null_mut()) } != 0 {
                return Err(io::Error::last_os_error());
            }
        }
        Ok(())
    }

    /// [`Self::apply`] in the child `cmd` forks, before its exec.
    pub fn apply_before_exec(self, cmd: &mut Command) {
        if self.is_empty() {
            return;
        }
        // SAFETY: the hook runs in the forked child before exec and makes raw system
        // calls on a copy of `self` and a structure on its stack; it does not allocate,
        // lock or log.
        unsafe {
            cmd.pre_exec(move || self.apply());
        }
    }
}

/// How many processes and threads the real uid `uid` has now, as `/proc` shows them
/// (the count `RLIMIT_NPROC` is held against, in this user namespace).
pub fn uid_tasks(uid: u32) -> u64 {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return 0;
    };
    let mut total = 0u64;
    for entry in entries.flatten() {
        let name = entry.file_name();
        if !name.as_encoded_bytes().iter().all(u8::is_ascii_digit) {
            continue;
        }
        let Ok(status) = std::fs::read_to_string(entry.path().join("status")) else {
            continue;
        };
        let field = |key: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(key))
                .and_then(|rest| rest.split_whitespace().next())
                .and_then(|v| v.parse::<u64>().ok())
        };
        if field("Uid:") == Some(u64::from(uid)) {
            total += field("Threads:").unwrap_or(1);
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_counted_with_its_threads() {
        let uid = rustix::process::getuid().as_raw();
        let (stop, rx) = std::sync::mpsc::channel::<()>();
        let held = std::thread::spawn(move || {
            let _ = rx.recv();
        });
        assert!(uid_tasks(uid) >= 2);
        drop(stop);
        held.join().unwrap();
    }

    #[test]
    fn a_child_cannot_touch_more_than_its_data_bound() {
        let mut cmd = Command::new("python3");
        cmd.args(["-c", "b = bytearray(512 << 20); print('allocated')"]);
        Rlimits {
            nproc: None,
            data: Some(128 << 20),
        }
        .apply_before_exec(&mut cmd);
        let Ok(out) = cmd.output() else {
            return eprintln!("skipped: no python3");
        };
        assert!(!out.status.success());
        assert!(!String::from_utf8_lossy(&out.stdout).contains("allocated"));
    }
}
