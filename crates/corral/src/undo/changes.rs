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

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use rustix::fs::inotify::{self, CreateFlags, WatchFlags};

/// What makes a directory's watch report a change.
const WATCHED: WatchFlags = WatchFlags::CREATE
    .union(WatchFlags::DELETE)
    .union(WatchFlags::MODIFY)
    .union(WatchFlags::ATTRIB)
    .union(WatchFlags::MOVED_FROM)
    .union(WatchFlags::MOVED_TO)
    .union(WatchFlags::DELETE_SELF)
    .union(WatchFlags::MOVE_SELF)
    // A link swapped in where a directory was is not followed to what it points at.
    .union(WatchFlags::DONT_FOLLOW)
    .union(WatchFlags::ONLYDIR);

/// What the flag saw since it was last read.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Seen {
    Nothing,
    /// Changes in these directories only: with `true`, a directory in it was made,
    /// removed or moved (or it was itself), so its whole subtree is walked again; with
    /// `false`, only the files directly in it.
    Dirs(BTreeMap<PathBuf, bool>),
    /// Anything may have changed: the queue overflowed, or the flag was given up.
    Everything,
}

/// `IN_ISDIR`, `IN_Q_OVERFLOW`, `IN_IGNORED`, `IN_DELETE_SELF` and `IN_MOVE_SELF`.
const IS_DIR: u32 = 0x4000_0000;
const OVERFLOW: u32 = 0x4000;
const IGNORED: u32 = 0x8000;
const SELF: u32 = 0x400 | 0x800;

/// An inotify instance and the directory each of its watches is on, or nothing once it
/// was given up.
#[derive(Debug)]
pub(crate) struct ChangeFlag {
    fd: Option<OwnedFd>,
    dirs: HashMap<i32, PathBuf>,
    /// corral's own files (see `super::rules`): a change to one is no change.
    own: Vec<PathBuf>,
    /// From the last [`ChangeFlag::changed`]: the names each directory's events named,
    /// where every one of its events named an entry in it (see [`ChangeFlag::names`]).
    names: BTreeMap<PathBuf, Option<BTreeSet<Vec<u8>>>>,
}

impl ChangeFlag {
    pub(crate) fn new() -> ChangeFlag {
        ChangeFlag {
            fd: inotify::init(CreateFlags::CLOEXEC | CreateFlags::NONBLOCK).ok(),
            dirs: HashMap::new(),
            own: Vec::new(),
            names: BTreeMap::new(),
        }
    }

    /// Take no change to `own` (corral's own files: a trace in the workspace, written at
    /// every call) for a change of the workspace.
    pub(crate) fn leave_out(&mut self, own: &[PathBuf]) {
        self.own = own.to_vec();
    }

    /// Watch `dir` (a second watch of the same directory is the first one, now named by
    /// this path).
    pub(crate) fn watch(&mut self, dir: &Path) {
        let Some(fd) = &self.fd else { return };
        match inotify::add_watch(fd, dir, WATCHED) {
            Ok(wd) => {
                self.dirs.insert(wd, dir.to_path_buf());
            }
            // Gone, or no longer a directory, since the walk opened it: the watch on its
            // parent saw that, and the next record walks it again.
            Err(rustix::io::Errno::NOENT | rustix::io::Errno::NOTDIR) => {}
            Err(_) => self.fd = None,
        }
    }

    /// Whether anything may have changed since the queue was last drained (always, once
    /// given up): a look at the queue, which it leaves as it is.
    pub(crate) fn maybe_changed(&self) -> bool {
        use rustix::event::{PollFd, PollFlags, Timespec, poll};
        let Some(fd) = &self.fd else { return true };
        let mut fds = [PollFd::new(fd, PollFlags::IN)];
        let now = Timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        !matches!(poll(&mut fds, Some(&now)), Ok(0))
    }

    /// The entries of `dir` that changed, as the last [`ChangeFlag::changed`] saw them,
    /// where it saw `dir` change only in named entries (no event on `dir` itself); `None`
    /// where it cannot tell.
    pub(crate) fn names(&self, dir: &Path) -> Option<&BTreeSet<Vec<u8>>> {
        self.names.get(dir)?.as_ref()
    }

    /// What changed since the last call (everything, once given up); drains the queue.
    pub(crate) fn changed(&mut self) -> Seen {
        self.names.clear();
        let Some(fd) = &self.fd else {
            return Seen::Everything;
        };
        let mut buf = [0u8; 8192];
        let mut dirs = BTreeMap::new();
        let mut names: BTreeMap<PathBuf, Option<BTreeSet<Vec<u8>>>> = BTreeMap::new();
        loop {
            let n = match rustix::io::read(fd, &mut buf) {
                Ok(0) | Err(rustix::io::Errno::AGAIN) => break,
                Ok(n) => n,
                Err(rustix::io::Errno::INTR) => continue,
                Err(_) => {
                    self.fd = None;
                    return Seen::Everything;
                }
            };
            // Each event: wd (i32), mask, cookie, len (u32), then `len` bytes of name.
            let mut at = 0;
            while at + 16 <= n {
                let word =
                    |i: usize| u32::from_ne_bytes(buf[at + i..at + i + 4].try_into().unwrap());
                let (wd, mask, len) = (word(0) as i32, word(4), word(12) as usize);
                // The name, padded with NULs to the next event.
                let name = buf[(at + 16).min(n)..(at + 16 + len).min(n)]
                    .split(|&b| b == 0)
                    .next()
                    .unwrap_or_default();
                at += 16 + len;
                if mask & OVERFLOW != 0 {
                    return Seen::Everything;
                }
                let Some(dir) = self.dirs.get(&wd) else {
                    return Seen::Everything;
                };
                if !name.is_empty()
                    && !self.own.is_empty()
                    && self
                        .own
                        .contains(&dir.join(std::ffi::OsStr::from_bytes(name)))
                {
                    continue;
                }
                let deep = mask & (IS_DIR | IGNORED | SELF) != 0;
                *dirs.entry(dir.clone()).or_insert(false) |= deep;
                let named = names
                    .entry(dir.clone())
                    .or_insert_with(|| Some(BTreeSet::new()));
                match named {
                    Some(set) if !name.is_empty() => {
                        set.insert(name.to_vec());
                    }
                    _ => *named = None,
                }
            }
        }
        self.names = names;
        if dirs.is_empty() {
            Seen::Nothing
        } else {
            Seen::Dirs(dirs)
        }
    }
}
