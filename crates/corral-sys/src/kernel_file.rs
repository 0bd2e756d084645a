//! Reading the small files the kernel makes up on each read (`/proc`, cgroupfs).
//!
//! `std::fs::read_to_string` first asks a file's size to size its buffer; these files
//! report 0, so that `statx` is a system call spent for nothing, on paths corral reads
//! at every call's end (is the group empty, what did the init adopt). Here: open, read
//! until the end, close. Also the one question corral asks of a descriptor the kernel
//! signals on (a pidfd that its process exited, a mount table that it changed): is it
//! ready now.

use std::io::{self, Read};
use std::os::fd::OwnedFd;
use std::path::Path;

use rustix::event::{PollFd, PollFlags, Timespec, poll};

/// Whether `fd` reports any of `events` now, without waiting; a descriptor that cannot
/// be polled counts as ready, so a caller never trusts what it cannot ask.
pub(crate) fn ready_now(fd: &OwnedFd, events: PollFlags) -> bool {
    let mut fds = [PollFd::new(fd, events)];
    let zero = Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    !matches!(poll(&mut fds, Some(&zero)), Ok(0))
}

/// The whole of a kernel-generated text file.
pub(crate) fn read(path: &Path) -> io::Result<String> {
    let mut file = std::fs::File::open(path)?;
    let mut bytes = Vec::with_capacity(512);
    let mut chunk = [0u8; 512];
    loop {
        match file.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => bytes.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    String::from_utf8(bytes).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}

#[cfg(test)]
mod tests {
    #[test]
    fn reads_a_proc_file_whole() {
        let status = super::read(std::path::Path::new("/proc/self/status")).unwrap();
        assert!(status.starts_with("Name:"), "{status}");
        assert!(status.contains("\nPid:"), "{status}");
        assert_eq!(
            std::fs::read_to_string("/proc/self/cmdline").unwrap(),
            super::read(std::path::Path::new("/proc/self/cmdline")).unwrap()
        );
    }
}
