//! What corral's process tests share: finding processes from outside by a unique marker
//! in their argv, and waiting for them to be gone.
//!
//! A test judges containment the way an operator would: by what is still running, not by
//! what corral says it did.

#![forbid(unsafe_code)]

use std::time::{Duration, Instant};

pub mod scratch;
pub use scratch::{made_once, runnable_copy, scratch_root};

/// A marker unique to this test run, for finding its processes from outside.
pub fn marker(name: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("corral-test-{name}-{}-{nanos}", std::process::id())
}

/// Pids of live (not zombie) processes whose command line contains `marker`.
pub fn processes_with(marker: &str) -> Vec<u32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for entry in dir.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
            continue;
        };
        if !String::from_utf8_lossy(&cmdline).contains(marker) {
            continue;
        }
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let state = stat
            .rsplit_once(')')
            .and_then(|(_, r)| r.split_whitespace().next())
            .unwrap_or("");
        if state != "Z" && state != "X" {
            found.push(pid);
        }
    }
    found
}

/// Wait up to `limit` for at least `n` processes to carry `marker`.
pub fn wait_for(marker: &str, n: usize, limit: Duration) -> usize {
    let until = Instant::now() + limit;
    loop {
        let now = processes_with(marker).len();
        if now >= n || Instant::now() > until {
            return now;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Wait up to `limit` for no process to carry `marker`; return the survivors.
pub fn survivors_after(marker: &str, limit: Duration) -> Vec<u32> {
    let until = Instant::now() + limit;
    loop {
        let left = processes_with(marker);
        if left.is_empty() || Instant::now() > until {
            return left;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Kill whatever carries `marker`, so a failing test leaves nothing behind.
pub fn cleanup(marker: &str) {
    for pid in processes_with(marker) {
        if let Some(pid) = i32::try_from(pid)
            .ok()
            .and_then(rustix::process::Pid::from_raw)
        {
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
        }
    }
}
