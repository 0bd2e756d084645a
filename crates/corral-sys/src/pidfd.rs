//! Process file descriptors (`pidfd_open`, Linux 5.3+): readable once the process exits.
//!
//! A pidfd names one process for as long as it is open, so unlike a pid it cannot come
//! to mean an unrelated process that was given the same number.

use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::time::Instant;

use rustix::process::{Pid, PidfdFlags, pidfd_open};

/// Open a pidfd for the child `pid`. Fails with `ENOSYS` on kernels older than 5.3.
pub fn open(pid: u32) -> io::Result<OwnedFd> {
    let pid = i32::try_from(pid)
        .ok()
        .and_then(Pid::from_raw)
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "not a process id"))?;
    Ok(pidfd_open(pid, PidfdFlags::empty())?)
}

/// Wait until every process `fds` names has exited, at most until `until`; whether all
/// have. A pidfd is readable once its process has exited (reaped or not), so the wait
/// ends at the last exit, not at a poll's next tick.
pub fn wait_exited<F: AsFd>(fds: &[F], until: Instant) -> bool {
    use rustix::event::{PollFd, PollFlags, Timespec, poll};
    let mut waiting: Vec<&F> = fds.iter().collect();
    while !waiting.is_empty() {
        let left = until.saturating_duration_since(Instant::now());
        let timeout = Timespec {
            tv_sec: left.as_secs() as _,
            tv_nsec: left.subsec_nanos() as _,
        };
        let mut polled: Vec<PollFd<'_>> = waiting
            .iter()
            .map(|fd| PollFd::new(*fd, PollFlags::IN))
            .collect();
        match poll(&mut polled, Some(&timeout)) {
            Ok(_) | Err(rustix::io::Errno::INTR) => {}
            Err(_) => return false,
        }
        let exited: Vec<bool> = polled.iter().map(|p| !p.revents().is_empty()).collect();
        drop(polled);
        let mut exited = exited.into_iter();
        waiting.retain(|_| !exited.next().unwrap_or(false));
        if !waiting.is_empty() && Instant::now() >= until {
            return false;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_wait_ends_when_the_process_exits_and_not_before() {
        let mut child = std::process::Command::new("sleep")
            .arg("0.2")
            .spawn()
            .unwrap();
        let fd = open(child.id()).unwrap();
        let soon = Instant::now() + Duration::from_millis(20);
        assert!(!wait_exited(&[&fd], soon), "still running");
        assert!(wait_exited(
            &[&fd],
            Instant::now() + Duration::from_secs(10)
        ));
        child.wait().unwrap();
        assert!(wait_exited(&[&fd], Instant::now()), "reaped: still exited");
    }
}
