//! The change flag: an inotify watch on every directory a walk entered, so a record
//! before a call is skipped when nothing in the recorded part of the workspace changed
//! since the last one (a read of the queue, instead of an `lstat` of every file).
//!
//! The queue is drained before a walk starts: what changes during the walk stays queued
//! and makes the next record walk again. Where inotify is not to be had (no watches
//! left, a filesystem without it) the flag is given up and every record walks: slower,
//! never wrong. What inotify does not see (a write through a shared `mmap`, a change
//! on another machine's mount of the same files) is not seen until something it does
//! see happens.

use std::os::fd::OwnedFd;
use std::path::Path;

use rustix::fs::inotify::{self, CreateFlags, WatchFlags};

/// What makes a directory's watch report a change.
const WATCHED: WatchFlags = WatchFlags::CREATE
    .union(WatchFlags::DELETE)
    .union(WatchFlags::MODIFY)
    .union(WatchFlags::ATTRIB)
    .union(WatchFlags::MOVED_FROM)
    .union(WatchFlags::MOVED_TO)
    .union(WatchFlags::DELETE_SELF)
    .union(WatchFlags::MOVE_SELF);

/// An inotify instance, or nothing once it was given up.
#[derive(Debug)]
pub(crate) struct ChangeFlag {
    fd: Option<OwnedFd>,
}

impl ChangeFlag {
    pub(crate) fn new() -> ChangeFlag {
        ChangeFlag {
            fd: inotify::init(CreateFlags::CLOEXEC | CreateFlags::NONBLOCK).ok(),
        }
    }

    /// Watch `dir` (a second watch of the same directory is the first one).
    pub(crate) fn watch(&mut self, dir: &Path) {
        if let Some(fd) = &self.fd
            && inotify::add_watch(fd, dir, WATCHED).is_err()
        {
            self.fd = None;
        }
    }

    /// Whether anything changed since the last call (always, once given up); drains the
    /// queue.
    pub(crate) fn changed(&mut self) -> bool {
        let Some(fd) = &self.fd else { return true };
        let mut buf = [0u8; 4096];
        let mut any = false;
        loop {
            match rustix::io::read(fd, &mut buf) {
                Ok(0) => return any,
                Ok(_) => any = true,
                Err(rustix::io::Errno::AGAIN) => return any,
                Err(rustix::io::Errno::INTR) => {}
                Err(_) => {
                    self.fd = None;
                    return true;
                }
            }
        }
    }
}
