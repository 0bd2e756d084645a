//! Reads and writes made through descriptors of the roots they may reach: the file tools', and undo's.
//!
//! A path is checked (confined to the workspace, kept off the protected paths, allowed by
//! the policy) as a canonical path, then used. Opening it again by name would lose a race
//! to a command running beside the call: swap a checked directory for a symlink to
//! `~/.ssh` between the check and the open, and the tool reads the key or writes
//! `authorized_keys`. So every use goes through a descriptor of the root the path is in
//! (the workspace, or a writable root), with `openat2` and
//! `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS` on the checked path
//! relative to it: the kernel opens that path, or nothing, never one a symlink leads
//! to (a symlink where a directory was checked fails the call with `ELOOP`). A file is
//! read through the descriptor it was opened as; it is written to a temporary created
//! `O_EXCL` in the parent's descriptor and renamed within it (`RENAME_NOREPLACE` for a
//! file that must not exist yet), so a hard link never carries a write elsewhere.
//! `openat2` is Linux 5.6.

use std::ffi::OsStr;
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

use rustix::fs::{AtFlags, FileType, Mode, OFlags, RenameFlags, ResolveFlags};

/// How `openat2` resolves every path here.
const RESOLVE: ResolveFlags = ResolveFlags::BENEATH
    .union(ResolveFlags::NO_SYMLINKS)
    .union(ResolveFlags::NO_MAGICLINKS);

/// How many times an open that the kernel asks to retry (`EAGAIN`: a rename raced the
/// lookup) is tried.
const TRIES: usize = 16;

/// The roots a call's files are in, each open as a directory.
#[derive(Debug)]
pub(crate) struct Roots {
    roots: Vec<(PathBuf, OwnedFd)>,
}

/// Whether a write may replace a file that is there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Replace {
    /// Replace it, or create it.
    Any,
    /// Create it; fail if something is there by then (an added or moved-to file).
    Never,
}

impl Roots {
    /// Open each of `roots` (canonical directories; those that do not exist are left out).
    pub(crate) fn open(roots: impl IntoIterator<Item = PathBuf>) -> io::Result<Self> {
        let mut opened = Vec::new();
        for root in roots {
            match rustix::fs::open(
                &root,
                OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
                Mode::empty(),
            ) {
                Ok(fd) => opened.push((root, fd)),
                Err(rustix::io::Errno::NOENT) => {}
                Err(e) => return Err(e.into()),
            }
        }
        Ok(Self { roots: opened })
    }

    /// The root `path` is in, and the path relative to it.
    fn locate<'a>(&self, path: &'a Path) -> io::Result<(&OwnedFd, &'a Path)> {
        self.roots
            .iter()
            .filter_map(|(root, fd)| Some((fd, path.strip_prefix(root).ok()?)))
            .max_by_key(|(_, rel)| std::cmp::Reverse(rel.components().count()))
            .ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::PermissionDenied,
                    format!("{} is outside the roots file tools reach", path.display()),
                )
            })
    }

    /// The whole file at `path`; `None` when there is none.
    pub(crate) fn read(&self, path: &Path) -> io::Result<Option<Vec<u8>>> {
        self.read_at_most(path, u64::MAX)
    }

    /// The whole file at `path` if it holds at most `limit` bytes (`FileTooLarge` if it
    /// holds more, however it grows while read); `None` when there is none.
    pub(crate) fn read_at_most(&self, path: &Path, limit: u64) -> io::Result<Option<Vec<u8>>> {
        Ok(self.read_with_mode(path, limit)?.map(|(bytes, _)| bytes))
    }

    /// What [`read_at_most`](Self::read_at_most) reads, with the file's permission bits.
    pub(crate) fn read_with_mode(
        &self,
        path: &Path,
        limit: u64,
    ) -> io::Result<Option<(Vec<u8>, u32)>> {
        let (root, rel) = self.locate(path)?;
        let fd = match open_beneath(
            root,
            rel,
            OFlags::RDONLY | OFlags::NOCTTY | OFlags::NONBLOCK,
        ) {
            Ok(fd) => fd,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        let st = rustix::fs::fstat(&fd)?;
        if rustix::fs::FileType::from_raw_mode(st.st_mode) != rustix::fs::FileType::RegularFile {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "not a regular file (a directory, a device or a pipe)",
            ));
        }
        let too_large = || {
            io::Error::new(
                io::ErrorKind::FileTooLarge,
                format!("{} bytes, more than {limit}", st.st_size),
            )
        };
        let size = u64::try_from(st.st_size).unwrap_or(0);
        if size > limit {
            return Err(too_large());
        }
        let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
        std::fs::File::from(fd)
            .take(limit.saturating_add(1))
            .read_to_end(&mut bytes)?;
        if bytes.len() as u64 > limit {
            return Err(too_large());
        }
        Ok(Some((bytes, st.st_mode & 0o777)))
    }

    /// Set the permission bits of the regular file at `path` (nothing is followed).
    pub(crate) fn chmod(&self, path: &Path, mode: u32) -> io::Result<()> {
        let (root, rel) = self.locate(path)?;
        let fd = open_beneath(
            root,
            rel,
            OFlags::RDONLY | OFlags::NOCTTY | OFlags::NONBLOCK,
        )?;
        rustix::fs::fchmod(&fd, Mode::from_raw_mode(mode & 0o777))?;
        Ok(())
    }

    /// The directory at `path`, open for listing.
    pub(crate) fn dir(&self, path: &Path) -> io::Result<OwnedFd> {
        let (root, rel) = self.locate(path)?;
        open_beneath(root, rel, OFlags::RDONLY | OFlags::DIRECTORY)
    }

    /// Whether something is at `path` (a symlink counts; nothing is followed).
    pub(crate) fn exists(&self, path: &Path) -> io::Result<bool> {
        let (dir, name) = self.parent(path, false)?;
        let Some(dir) = dir else { return Ok(false) };
        match rustix::fs::statat(&dir, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(_) => Ok(true),
            Err(rustix::io::Errno::NOENT) => Ok(false),
            Err(e) => Err(e.into()),
        }
    }

    /// Write `bytes` as the whole file at `path`: to a temporary file beside it, renamed
    /// over it (keeping an existing file's permissions), creating missing directories.
    pub(crate) fn write(&self, path: &Path, bytes: &[u8], replace: Replace) -> io::Result<()> {
        let (dir, name) = self.parent(path, true)?;
        let dir = dir.expect("made when asked to create");
        let kept_mode = match rustix::fs::statat(&dir, name, AtFlags::SYMLINK_NOFOLLOW) {
            // A regular file's mode is kept; what replaces a symlink, a pipe or a
            // device is a new file (a symlink's own mode is 0777, for anyone to write).
            Ok(st) if FileType::from_raw_mode(st.st_mode) == FileType::RegularFile => {
                Some(st.st_mode & 0o7777)
            }
            Ok(_) => None,
            Err(rustix::io::Errno::NOENT) => None,
            Err(e) => return Err(e.into()),
        };
        let temp = temp_name(name);
        let file = rustix::fs::openat(
            &dir,
            &temp,
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_raw_mode(0o666),
        )?;
        let written = (|| -> io::Result<()> {
            let mut file = std::fs::File::from(file);
            file.write_all(bytes)?;
            if let Some(mode) = kept_mode {
                rustix::fs::fchmod(&file, Mode::from_raw_mode(mode))?;
            }
            file.sync_all()?;
            match replace {
                Replace::Any => rustix::fs::renameat(&dir, &temp, &dir, name)?,
                Replace::Never => {
                    rustix::fs::renameat_with(&dir, &temp, &dir, name, RenameFlags::NOREPLACE)?;
                }
            }
            Ok(())
        })();
        if written.is_err() {
            let _ = rustix::fs::unlinkat(&dir, &temp, AtFlags::empty());
        }
        written
    }

    /// Remove the file at `path` (not a directory; nothing is followed).
    pub(crate) fn remove(&self, path: &Path) -> io::Result<()> {
        let (dir, name) = self.parent(path, false)?;
        let dir = dir.ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))?;
        rustix::fs::unlinkat(&dir, name, AtFlags::empty())?;
        Ok(())
    }

    /// What is at `path`, not followed: its type, and for a symlink its target's text;
    /// `None` when nothing is.
    pub(crate) fn lstat(&self, path: &Path) -> io::Result<Option<(FileType, Vec<u8>)>> {
        let (dir, name) = self.parent(path, false)?;
        let Some(dir) = dir else { return Ok(None) };
        let st = match rustix::fs::statat(&dir, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => st,
            Err(rustix::io::Errno::NOENT) => return Ok(None),
            Err(e) => return Err(e.into()),
        };
        let kind = FileType::from_raw_mode(st.st_mode);
        let target = match kind {
            FileType::Symlink => rustix::fs::readlinkat(&dir, name, Vec::new())?.into_bytes(),
            _ => Vec::new(),
        };
        Ok(Some((kind, target)))
    }

    /// Whether the directory at `path` holds nothing.
    pub(crate) fn is_empty_dir(&self, path: &Path) -> io::Result<bool> {
        let mut dir = rustix::fs::Dir::read_from(self.dir(path)?)?;
        while let Some(entry) = dir.read() {
            let name = entry?.file_name().to_bytes().to_vec();
            if name != b"." && name != b".." {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Make `path` a symlink to `target` (its text, never resolved), replacing a file or
    /// a link there: made beside it and renamed over it, creating missing directories.
    pub(crate) fn symlink(&self, path: &Path, target: &[u8]) -> io::Result<()> {
        let (dir, name) = self.parent(path, true)?;
        let dir = dir.expect("made when asked to create");
        let temp = temp_name(name);
        rustix::fs::symlinkat(OsStr::from_bytes(target), &dir, &temp)?;
        let renamed = rustix::fs::renameat(&dir, &temp, &dir, name);
        if renamed.is_err() {
            let _ = rustix::fs::unlinkat(&dir, &temp, AtFlags::empty());
        }
        Ok(renamed?)
    }

    /// Make the directory `path` with `mode` (and its missing parents); one there already
    /// is kept.
    pub(crate) fn make_dir(&self, path: &Path, mode: u32) -> io::Result<()> {
        let (dir, name) = self.parent(path, true)?;
        let dir = dir.expect("made when asked to create");
        match rustix::fs::mkdirat(&dir, name, Mode::from_raw_mode(mode)) {
            Ok(()) => Ok(()),
            Err(rustix::io::Errno::EXIST)
                if rustix::fs::statat(&dir, name, AtFlags::SYMLINK_NOFOLLOW)
                    .is_ok_and(|st| FileType::from_raw_mode(st.st_mode) == FileType::Directory) =>
            {
                Ok(())
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Remove the empty directory `path` (nothing is followed).
    pub(crate) fn remove_dir(&self, path: &Path) -> io::Result<()> {
        let (dir, name) = self.parent(path, false)?;
        let dir = dir.ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))?;
        rustix::fs::unlinkat(&dir, name, AtFlags::REMOVEDIR)?;
        Ok(())
    }

    /// The directory `path` is in, open (made, with its missing parents, when `create`;
    /// `None` when it is missing and not made), and the file's name in it.
    fn parent<'a>(&self, path: &'a Path, create: bool) -> io::Result<(Option<OwnedFd>, &'a OsStr)> {
        let (root, rel) = self.locate(path)?;
        let name = rel
            .file_name()
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "the path names no file"))?;
        let parent = rel.parent().unwrap_or(Path::new(""));
        let dir_flags = OFlags::PATH | OFlags::DIRECTORY;
        match open_beneath(root, parent, dir_flags) {
            Ok(dir) => return Ok((Some(dir), name)),
            Err(e) if e.kind() == io::ErrorKind::NotFound && create => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok((None, name)),
            Err(e) => return Err(e),
        }
        // Made one level at a time, each in the descriptor of the one above.
        let mut at = open_beneath(root, Path::new(""), dir_flags)?;
        for part in parent.components() {
            let Component::Normal(part) = part else {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "the path is not in its canonical form",
                ));
            };
            match rustix::fs::mkdirat(&at, part, Mode::from_raw_mode(0o777)) {
                Ok(()) | Err(rustix::io::Errno::EXIST) => {}
                Err(e) => return Err(e.into()),
            }
            at = open_beneath(&at, Path::new(part), dir_flags)?;
        }
        Ok((Some(at), name))
    }
}

/// The whole regular file `name` in the directory `dir` if it holds at most `limit`
/// bytes: opened beneath `dir` without following a link or waiting, so a pipe or a device
/// there is refused, never read (a `.git` pointer, a git directory's `commondir`, a
/// module's `config`: small files corral reads to decide what the box keeps read-only,
/// which a command may have made). `None` when `dir` or the file is missing.
pub(crate) fn read_in(dir: &Path, name: &Path, limit: u64) -> io::Result<Option<Vec<u8>>> {
    let roots = Roots::open([dir.to_path_buf()])?;
    if roots.roots.is_empty() {
        return Ok(None);
    }
    roots.read_at_most(&dir.join(name), limit)
}

/// `openat2(root, rel, flags, RESOLVE)`, tried again on `EAGAIN`. An empty `rel` opens
/// `root` itself.
pub(crate) fn open_beneath(root: impl AsFd, rel: &Path, flags: OFlags) -> io::Result<OwnedFd> {
    let rel = if rel.as_os_str().is_empty() {
        Path::new(".")
    } else {
        rel
    };
    let root = root.as_fd();
    for _ in 0..TRIES {
        match rustix::fs::openat2(root, rel, flags | OFlags::CLOEXEC, Mode::empty(), RESOLVE) {
            Err(rustix::io::Errno::AGAIN) => continue,
            Err(rustix::io::Errno::NOSYS) => {
                return Err(io::Error::new(
                    io::ErrorKind::Unsupported,
                    "the file tools need openat2 (Linux 5.6 or newer)",
                ));
            }
            Err(rustix::io::Errno::LOOP | rustix::io::Errno::XDEV) => {
                return Err(io::Error::new(
                    io::ErrorKind::PermissionDenied,
                    "a part of the path became a symlink or a mount after it was checked; \
                     nothing was opened through it (name the real path, or try again)",
                ));
            }
            other => return other.map_err(Into::into),
        }
    }
    Err(io::Error::new(
        io::ErrorKind::Interrupted,
        "the path kept changing while it was opened: try again",
    ))
}

/// A temporary name beside `name` that no one can guess.
fn temp_name(name: &OsStr) -> std::ffi::OsString {
    use std::hash::{BuildHasher, RandomState};
    let salt = RandomState::new().hash_one(name);
    let mut temp = std::ffi::OsString::from(".");
    temp.push(name);
    temp.push(format!(".corral-{salt:016x}.tmp"));
    temp
}
