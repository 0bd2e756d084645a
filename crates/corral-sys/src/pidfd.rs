//! Process file descriptors (`pidfd_open`, Linux 5.3+): readable once the process exits.
//!
//! A pidfd names one process for as long as it is open, so unlike a pid it cannot come
//! to mean an unrelated process that was given the same number.

use std::io;
use std::os::fd::OwnedFd;

use rustix::process::{Pid, PidfdFlags, pidfd_open};

/// Open a pidfd for the child `pid`. Fails with `ENOSYS` on kernels older than 5.3.
pub fn open(pid: u32) -> io::Result<OwnedFd> {
    let pid = i32::try_from(pid)
        .ok()
        .and_then(Pid::from_raw)
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "not a process id"))?;
    Ok(pidfd_open(pid, PidfdFlags::empty())?)
}
