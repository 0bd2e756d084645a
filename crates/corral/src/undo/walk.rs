//! One walk of the workspace: every file the rules keep (and every file an earlier record
//! held, whatever the rules say now), its content stored unless `lstat` shows it is the
//! file recorded before. An unchanged workspace costs a directory read per directory and
//! an `lstat` per file, and no file is opened.
//!
//! # By descriptor
//!
//! A command running beside the walk (a handle) can swap a workspace directory `d` for a
//! symlink to `~/.ssh` (`renameat2(RENAME_EXCHANGE)`) at any moment. A walk that lists or
//! opens `root/d/…` by name would then record the key as `d/id_ed25519`, and an undo
//! would write it into the workspace. So nothing here is looked up by name from `/`:
//!
//! 1. Each directory is opened in its parent's descriptor, `O_NOFOLLOW | O_DIRECTORY`
//!    (a link in its place is not entered), and listed from that descriptor; each entry is
//!    `lstat`ed in it (`fstatat(AT_SYMLINK_NOFOLLOW)`).
//! 2. A file whose content must be read is opened once the walk is over and the budget is
//!    known to hold (an over-budget workspace reads and stores nothing), through
//!    [`open_beneath`] from the root's descriptor (`RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS`:
//!    a link anywhere on the path fails the open), `O_NOFOLLOW | O_NONBLOCK`, and read only
//!    if `fstat` says it is the regular file the listing found (same device and inode): a
//!    FIFO or a device put in its place is never read, a file moved in from elsewhere in
//!    the workspace is not taken for it.
//! 3. A file that fails that comparison, or is gone or a link by then, changed while it
//!    was recorded: it is recorded as [`CHANGING_HASH`], with no content, so an undo that
//!    would need its content refuses (`restore`) instead of writing a guess.
//!
//! The walk also leaves out every path the box hides ([`Sets::hidden_by`]: the read
//! denies, such as `~/.ssh` with `--workspace ~`, and corral's own files), so the undo
//! store never holds a copy of one.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsStr;
use std::io::Read;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, FileType, Mode, OFlags, Stat};

use super::changes::ChangeFlag;
use super::kind::{self, CHANGING_HASH, DIR_HASH, Kind};
use super::rules::Rules;
use super::store::Blobs;
use super::tree::{Entry, Tree};
use crate::beneath::open_beneath;
use crate::sandbox::sets::Sets;

/// How much a record may hold; past either bound the workspace is not recorded.
pub(crate) type Budget = crate::config::UndoBudget;

/// What a walk records besides the workspace's files, and how much.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Options {
    pub budget: Budget,
    /// The repository's `HEAD`, refs and reflogs (where calls may write `.git`).
    pub git_refs: bool,
}

/// The default budget: 50,000 files, 200 MB.
pub(crate) const BUDGET: Budget = crate::config::DEFAULT_UNDO_BUDGET;

/// What a walk found.
#[derive(Debug)]
pub(crate) struct Walked {
    pub tree: Tree,
    /// Files it could not read, left out of the record.
    pub unreadable: Vec<Vec<u8>>,
    /// Files whose content it read (and stored when new).
    pub read: usize,
}

/// Why a walk recorded nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum NotRecorded {
    /// More files or bytes than the budget.
    OverBudget { files: usize, bytes: u64 },
    /// The store could not be written, or the root not read.
    Failed(String),
}

/// Where a walk is: the workspace, open, and what it may not record.
#[derive(Clone, Copy)]
pub(crate) struct Scope<'a> {
    pub root: &'a Path,
    /// What the box hides: never recorded.
    pub sets: &'a Sets,
}

struct Walk<'a> {
    root: &'a Path,
    /// The root, open: every directory and file is reached from it by descriptor.
    root_fd: OwnedFd,
    sets: &'a Sets,
    rules: &'a mut Rules,
    /// Record the repository's refs and reflogs too.
    git_refs: bool,
    flag: Option<&'a mut ChangeFlag>,
    before: &'a Tree,
    blobs: &'a Blobs,
    budget: Budget,
    bytes: u64,
    /// Files found whose content must be read, with what `lstat` said of them.
    found: Vec<(Vec<u8>, Entry, Identity)>,
    out: Walked,
}

/// A file as the listing's `lstat` found it: what must be opened to read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Identity {
    dev: u64,
    ino: u64,
    kind: FileType,
}

impl Identity {
    fn of(st: &Stat) -> Identity {
        Identity {
            dev: st.st_dev,
            ino: st.st_ino,
            kind: FileType::from_raw_mode(st.st_mode),
        }
    }
}

/// Walk `root` under `rules`, reusing what `before` recorded of files `lstat` shows
/// unchanged, and watching each directory it enters with `flag`.
pub(crate) fn walk(
    scope: Scope<'_>,
    rules: &mut Rules,
    flag: Option<&mut ChangeFlag>,
    before: &Tree,
    blobs: &Blobs,
    options: Options,
) -> Result<Walked, NotRecorded> {
    let mut w = Walk::new(scope, rules, flag, before, blobs, options, Tree::new())?;
    w.git_refs = options.git_refs;
    let root = scope.root.to_path_buf();
    w.enter(&root, true)?;
    w.finish(before.keys())
}

/// Walk again only `dirs` (each with its subtree when `true`, else only the files
/// directly in it), keeping every other entry of `before` as it is: what the change
/// flag saw is all that can have changed.
pub(crate) fn rewalk(
    scope: Scope<'_>,
    rules: &mut Rules,
    flag: Option<&mut ChangeFlag>,
    before: &Tree,
    blobs: &Blobs,
    options: Options,
    dirs: &BTreeMap<PathBuf, bool>,
) -> Result<Walked, NotRecorded> {
    let root = scope.root;
    // A directory inside one walked whole is walked with it.
    let dirs: Vec<(&PathBuf, bool)> = dirs
        .iter()
        .filter(|(dir, _)| {
            !dirs
                .iter()
                .any(|(other, deep)| *deep && other != *dir && dir.starts_with(other))
        })
        .map(|(dir, deep)| (dir, *deep))
        .collect();
    let mut kept = before.clone();
    let mut dropped = Vec::new();
    // A directory of git's refs or reflogs whose files only changed: only the files the
    // flag named (10,000 branches in one directory, one moved: one file looked at).
    let git = root.join(".git");
    let (refs, logs) = (git.join("refs"), git.join("logs"));
    let named: BTreeMap<&Path, BTreeSet<Vec<u8>>> = dirs
        .iter()
        .filter(|(dir, deep)| {
            !deep && options.git_refs && (dir.starts_with(&refs) || dir.starts_with(&logs))
        })
        .filter_map(|(dir, _)| Some((dir.as_path(), flag.as_deref()?.names(dir)?.clone())))
        .collect();
    for (dir, deep) in &dirs {
        let prefix = relative(root, dir);
        let mut from = prefix.clone();
        if !from.is_empty() {
            from.push(b'/');
        }
        if let Some(names) = named.get(dir.as_path()) {
            for name in names {
                let mut key = from.clone();
                key.extend_from_slice(name);
                if kept.remove(&key).is_some() {
                    dropped.push(key);
                }
            }
            continue;
        }
        let inside: Vec<Vec<u8>> = kept
            .range(from.clone()..)
            .take_while(|(k, _)| k.starts_with(&from))
            .filter(|(k, _)| *deep || !k[from.len()..].contains(&b'/'))
            .map(|(k, _)| k.clone())
            .collect();
        for key in inside {
            kept.remove(&key);
            dropped.push(key);
        }
        // The directory itself, where it was recorded as empty: walked again, it is
        // recorded again if it still is.
        if !prefix.is_empty() && kept.remove(&prefix).is_some() {
            dropped.push(prefix);
        }
    }
    let mut w = Walk::new(scope, rules, flag, before, blobs, options, kept)?;
    w.git_refs = options.git_refs;
    w.bytes = w.out.tree.values().map(|e| e.size).sum();
    for (dir, deep) in dirs {
        if let Some(names) = named.get(dir.as_path()) {
            w.git_files_named(dir, names)?;
        } else if dir.starts_with(&git) {
            w.enter_git(&git, dir, deep)?;
        } else {
            w.enter(dir, deep)?;
        }
    }
    w.finish(dropped.iter())
}

/// `path` relative to `root`, as bytes; empty for the root itself.
fn relative(root: &Path, path: &Path) -> Vec<u8> {
    let (path, root) = (path.as_os_str().as_bytes(), root.as_os_str().as_bytes());
    match path.strip_prefix(root) {
        Some([]) => Vec::new(),
        Some([b'/', rest @ ..]) => rest.to_vec(),
        _ => path.to_vec(),
    }
}

/// How a directory is opened in its parent's descriptor: never through a link.
const DIR_FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::DIRECTORY)
    .union(OFlags::NOFOLLOW)
    .union(OFlags::CLOEXEC);

impl<'a> Walk<'a> {
    fn new(
        scope: Scope<'a>,
        rules: &'a mut Rules,
        flag: Option<&'a mut ChangeFlag>,
        before: &'a Tree,
        blobs: &'a Blobs,
        options: Options,
        tree: Tree,
    ) -> Result<Walk<'a>, NotRecorded> {
        let root_fd = rustix::fs::open(
            scope.root,
            OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| NotRecorded::Failed(format!("opening the workspace: {e}")))?;
        Ok(Walk {
            root: scope.root,
            root_fd,
            sets: scope.sets,
            rules,
            git_refs: false,
            flag,
            before,
            blobs,
            budget: options.budget,
            bytes: 0,
            found: Vec::new(),
            out: Walked {
                tree,
                unreadable: Vec::new(),
                read: 0,
            },
        })
    }

    /// Whether the box hides `path`: then it is neither entered nor recorded.
    fn hidden(&self, path: &Path) -> bool {
        self.sets.hidden_by(path).is_some()
    }

    /// Read what was found, then keep recorded each of `earlier` (paths an earlier record
    /// held) that the walk did not find and that is still a file: a path stays recorded
    /// even where the rules now leave it out (a `.gitignore` planted since), but not where
    /// the box hides it.
    fn finish<'k>(
        mut self,
        earlier: impl Iterator<Item = &'k Vec<u8>>,
    ) -> Result<Walked, NotRecorded> {
        // Only now, with the budget known to hold, is any file read.
        self.fill_found()?;
        for rel in earlier {
            if self.out.tree.contains_key(rel) {
                continue;
            }
            let path = self.root.join(OsStr::from_bytes(rel));
            if self.hidden(&path) {
                continue;
            }
            let rel_path = Path::new(OsStr::from_bytes(rel));
            let (Some(parent), Some(name)) = (rel_path.parent(), rel_path.file_name()) else {
                continue;
            };
            // The parent by descriptor, no link on the way: one swapped in is not looked
            // through.
            let Ok(dir) = open_beneath(&self.root_fd, parent, OFlags::PATH | OFlags::DIRECTORY)
            else {
                continue;
            };
            if let Ok(st) = rustix::fs::statat(&dir, name, AtFlags::SYMLINK_NOFOLLOW)
                && matches!(
                    FileType::from_raw_mode(st.st_mode),
                    FileType::RegularFile | FileType::Symlink
                )
            {
                self.file(rel.clone(), &st)?;
            }
        }
        self.fill_found()?;
        Ok(self.out)
    }

    fn fill_found(&mut self) -> Result<(), NotRecorded> {
        for (rel, entry, identity) in std::mem::take(&mut self.found) {
            self.fill(rel, entry, identity)?;
        }
        Ok(())
    }

    /// Open `dir` (absolute, under the root) beneath the root and walk it.
    fn enter(&mut self, dir: &Path, deep: bool) -> Result<(), NotRecorded> {
        let rel = relative(self.root, dir);
        match open_beneath(
            &self.root_fd,
            Path::new(OsStr::from_bytes(&rel)),
            OFlags::RDONLY | OFlags::DIRECTORY,
        ) {
            Ok(fd) => self.dir(fd, dir, deep),
            Err(e) if dir == self.root => {
                Err(NotRecorded::Failed(format!("reading the workspace: {e}")))
            }
            // Gone since it changed (its files were dropped with it), or a link now: its
            // parent, whose entry changed too, records it as a link.
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::NotFound
                        | std::io::ErrorKind::NotADirectory
                        | std::io::ErrorKind::PermissionDenied
                ) =>
            {
                Ok(())
            }
            Err(_) => {
                self.out.unreadable.push(rel);
                Ok(())
            }
        }
    }

    /// Walk again what changed in the repository's `.git` (at `git`): `dir` is `.git`
    /// itself (its own files, `HEAD`, `index` …; with `deep`, a directory in it was made
    /// or removed, and `refs/` and `logs/` are walked whole too) or a directory under
    /// `refs/` or `logs/` (its files; with `deep`, its subtree). Only where the record
    /// holds git's data (`git_refs`); anything else under `.git` holds nothing recorded.
    fn enter_git(&mut self, git: &Path, dir: &Path, deep: bool) -> Result<(), NotRecorded> {
        if !self.git_refs {
            return Ok(());
        }
        if dir == git {
            let root = self
                .root_fd
                .try_clone()
                .map_err(|e| NotRecorded::Failed(format!("reading the workspace: {e}")))?;
            return if deep {
                self.git_dir(root.as_fd(), git)
            } else {
                match rustix::fs::openat(&root, ".git", DIR_FLAGS, Mode::empty()) {
                    Ok(fd) => self.git_files(fd.as_fd(), git),
                    Err(_) => Ok(()),
                }
            };
        }
        if !(dir.starts_with(git.join("refs")) || dir.starts_with(git.join("logs"))) {
            return Ok(());
        }
        let rel = relative(self.root, dir);
        match open_beneath(
            &self.root_fd,
            Path::new(OsStr::from_bytes(&rel)),
            OFlags::RDONLY | OFlags::DIRECTORY,
        ) {
            Ok(fd) => self.everything(fd, dir, deep),
            // Gone since it changed (its files were dropped with it), or a link now.
            Err(_) => Ok(()),
        }
    }

    /// The files `names` in `dir`, a directory of git's refs or reflogs: each that is
    /// still a regular file is recorded (one gone, or a directory now, is not; a new
    /// directory made its parent's change a deep one).
    fn git_files_named(
        &mut self,
        dir: &Path,
        names: &BTreeSet<Vec<u8>>,
    ) -> Result<(), NotRecorded> {
        let rel = relative(self.root, dir);
        let Ok(fd) = open_beneath(
            &self.root_fd,
            Path::new(OsStr::from_bytes(&rel)),
            OFlags::PATH | OFlags::DIRECTORY,
        ) else {
            return Ok(());
        };
        for name in names {
            let name = OsStr::from_bytes(name);
            let path = dir.join(name);
            if let Ok(st) = rustix::fs::statat(&fd, name, AtFlags::SYMLINK_NOFOLLOW)
                && FileType::from_raw_mode(st.st_mode) == FileType::RegularFile
                && !self.hidden(&path)
            {
                self.file(relative(self.root, &path), &st)?;
            }
        }
        Ok(())
    }

    /// The files in the directory open as `fd` (at `dir`), and with `deep` those in every
    /// directory below it.
    fn dir(&mut self, fd: OwnedFd, dir: &Path, deep: bool) -> Result<(), NotRecorded> {
        let mut listing = match rustix::fs::Dir::new(fd) {
            Ok(listing) => listing,
            Err(_) => {
                self.out.unreadable.push(relative(self.root, dir));
                return Ok(());
            }
        };
        let mut names = Vec::new();
        while let Some(entry) = listing.read() {
            let Ok(entry) = entry else { break };
            let name = entry.file_name().to_bytes();
            if name != b"." && name != b".." {
                names.push((name.to_vec(), entry.file_type()));
            }
        }
        let Ok(at) = listing.fd() else {
            return Ok(());
        };
        let at = at.try_clone_to_owned().map_err(|e| {
            NotRecorded::Failed(format!(
                "reading {}: {e}",
                relative(self.root, dir).escape_ascii()
            ))
        })?;
        drop(listing);
        self.rules
            .enter_with(dir, || read_small(at.as_fd(), ".gitignore"));
        if let Some(flag) = self.flag.as_deref_mut() {
            flag.watch(dir);
        }
        let empty = names.is_empty();
        for (name, listed) in names {
            let name = OsStr::from_bytes(&name);
            let path = dir.join(name);
            if listed == FileType::Directory && !deep {
                continue;
            }
            let Ok(st) = rustix::fs::statat(&at, name, AtFlags::SYMLINK_NOFOLLOW) else {
                continue;
            };
            match FileType::from_raw_mode(st.st_mode) {
                FileType::Directory => {
                    if !deep {
                        continue;
                    }
                    if name == ".git" {
                        if self.git_refs && dir == self.root {
                            self.git_dir(at.as_fd(), &path)?;
                        }
                        continue;
                    }
                    if self.rules.ignored(&path, true) || self.hidden(&path) {
                        continue;
                    }
                    match rustix::fs::openat(&at, name, DIR_FLAGS, Mode::empty()) {
                        Ok(child) => self.dir(child, &path, true)?,
                        // A link or a file in its place since the listing: what the walk
                        // held of it changed while it was recorded.
                        Err(rustix::io::Errno::LOOP | rustix::io::Errno::NOTDIR) => {
                            self.changing_under(&path);
                        }
                        Err(rustix::io::Errno::NOENT) => {}
                        Err(_) => self.out.unreadable.push(relative(self.root, &path)),
                    }
                }
                // A symlink as a link: its target's text, never what it points at.
                FileType::RegularFile | FileType::Symlink
                    if !self.rules.ignored(&path, false) && !self.hidden(&path) =>
                {
                    let rel = relative(self.root, &path);
                    self.file(rel, &st)?;
                }
                _ => {}
            }
        }
        // An empty directory is an entry of its own: a call that removes it is undone.
        if empty
            && dir != self.root
            && let Ok(st) = rustix::fs::fstat(&at)
        {
            let rel = relative(self.root, dir);
            self.file(rel, &st)?;
        }
        Ok(())
    }

    /// Every entry `before` held under `dir` (a directory that became something else
    /// while the walk listed its parent), recorded as changed while it was recorded.
    fn changing_under(&mut self, dir: &Path) {
        let mut from = relative(self.root, dir);
        from.push(b'/');
        let held: Vec<(Vec<u8>, Entry)> = self
            .before
            .range(from.clone()..)
            .take_while(|(k, _)| k.starts_with(&from))
            .map(|(k, e)| (k.clone(), e.clone()))
            .collect();
        for (rel, entry) in held {
            self.out.tree.insert(rel, changing(entry));
        }
    }

    /// The repository's own history, which `git_write` lets a call rewrite: `HEAD`,
    /// `ORIG_HEAD`, `packed-refs`, every ref and every reflog, and the `index` (see
    /// [`Walk::index`]). (Objects are not recorded: git keeps an unreachable one for
    /// weeks, and a ref put back finds it; what prunes them now is asked, see
    /// `destructive.rs`.)
    fn git_dir(&mut self, root: BorrowedFd<'_>, git: &Path) -> Result<(), NotRecorded> {
        let Ok(fd) = rustix::fs::openat(root, ".git", DIR_FLAGS, Mode::empty()) else {
            return Ok(());
        };
        self.git_files(fd.as_fd(), git)?;
        for sub in ["refs", "logs"] {
            if let Ok(dir) = rustix::fs::openat(&fd, sub, DIR_FLAGS, Mode::empty()) {
                self.everything(dir, &git.join(sub), true)?;
            }
        }
        Ok(())
    }

    /// The files of `.git` itself (open as `fd`, at `git`) that the record holds:
    /// `HEAD`, `ORIG_HEAD`, `packed-refs` and the `index`; `.git` is watched.
    fn git_files(&mut self, fd: BorrowedFd<'_>, git: &Path) -> Result<(), NotRecorded> {
        if let Some(flag) = self.flag.as_deref_mut() {
            flag.watch(git);
        }
        for name in ["HEAD", "ORIG_HEAD", "packed-refs"] {
            if let Ok(st) = rustix::fs::statat(fd, name, AtFlags::SYMLINK_NOFOLLOW)
                && FileType::from_raw_mode(st.st_mode) == FileType::RegularFile
            {
                let rel = relative(self.root, &git.join(name));
                self.file(rel, &st)?;
            }
        }
        if let Ok(st) = rustix::fs::statat(fd, "index", AtFlags::SYMLINK_NOFOLLOW)
            && FileType::from_raw_mode(st.st_mode) == FileType::RegularFile
        {
            let rel = relative(self.root, &git.join("index"));
            self.index(fd, rel, &st)?;
        }
        Ok(())
    }

    /// Git's `index`, counted in the budget as any file. `git status` rewrites it at
    /// almost every call (a stat refresh) with the same content: it ends in a checksum of
    /// everything before it, so one whose size and last [`INDEX_TAIL`] bytes are those of
    /// the content recorded before holds that content, and is not read or stored again.
    fn index(&mut self, git: BorrowedFd<'_>, rel: Vec<u8>, st: &Stat) -> Result<(), NotRecorded> {
        self.file(rel.clone(), st)?;
        let Some((found, _, _)) = self.found.last() else {
            return Ok(());
        };
        if *found != rel {
            return Ok(());
        }
        let Some(known) = self.before.get(&rel) else {
            return Ok(());
        };
        let size = u64::try_from(st.st_size).unwrap_or(0);
        if known.size != size || known.hash == CHANGING_HASH || known.hash == DIR_HASH {
            return Ok(());
        }
        let Some(now) = index_tail(git, size) else {
            return Ok(());
        };
        // A zero checksum is `index.skipHash`: it says nothing of the content.
        if now.iter().rev().take(20).all(|b| *b == 0) {
            return Ok(());
        }
        if self.blobs.tail(&known.hash, INDEX_TAIL).ok().as_deref() != Some(&now[..]) {
            return Ok(());
        }
        // The same content is the same entry: the record stays as it was (a stat
        // refresh is no change), and the next record compares the tail again.
        if let Some((rel, _, _)) = self.found.pop() {
            self.out.tree.insert(rel, known.clone());
        }
        Ok(())
    }

    /// Every file in the directory open as `fd` (at `dir`), and with `deep` under it,
    /// whatever the rules say.
    fn everything(&mut self, fd: OwnedFd, dir: &Path, deep: bool) -> Result<(), NotRecorded> {
        if let Some(flag) = self.flag.as_deref_mut() {
            flag.watch(dir);
        }
        let Ok(mut listing) = rustix::fs::Dir::new(fd) else {
            return Ok(());
        };
        let mut names = Vec::new();
        while let Some(Ok(entry)) = listing.read() {
            let name = entry.file_name().to_bytes();
            if name != b"." && name != b".." {
                names.push(name.to_vec());
            }
        }
        let Ok(at) = listing.fd() else {
            return Ok(());
        };
        for name in names {
            let name = OsStr::from_bytes(&name);
            let path = dir.join(name);
            let Ok(st) = rustix::fs::statat(at, name, AtFlags::SYMLINK_NOFOLLOW) else {
                continue;
            };
            match FileType::from_raw_mode(st.st_mode) {
                FileType::Directory if deep => {
                    if let Ok(child) = rustix::fs::openat(at, name, DIR_FLAGS, Mode::empty()) {
                        self.everything(child, &path, true)?;
                    }
                }
                FileType::RegularFile if !self.hidden(&path) => {
                    let rel = relative(self.root, &path);
                    self.file(rel, &st)?;
                }
                _ => {}
            }
        }
        Ok(())
    }

    fn file(&mut self, rel: Vec<u8>, st: &Stat) -> Result<(), NotRecorded> {
        let size = u64::try_from(st.st_size).unwrap_or(0);
        self.bytes += size;
        let files = self.out.tree.len() + self.found.len();
        if files >= self.budget.files || self.bytes > self.budget.bytes {
            return Err(NotRecorded::OverBudget {
                files: files + 1,
                bytes: self.bytes,
            });
        }
        let identity = Identity::of(st);
        let entry = Entry {
            size,
            mtime_ns: st.st_mtime * 1_000_000_000 + st.st_mtime_nsec as i64,
            ctime_ns: st.st_ctime * 1_000_000_000 + st.st_ctime_nsec as i64,
            ino: st.st_ino,
            mode: kind::mode(kind_of(identity.kind), st.st_mode),
            hash: String::new(),
        };
        match self.before.get(&rel) {
            Some(known) if known.same_stat(&entry) && known.hash != CHANGING_HASH => {
                let entry = Entry {
                    hash: known.hash.clone(),
                    ..entry
                };
                self.out.tree.insert(rel, entry);
            }
            _ => self.found.push((rel, entry, identity)),
        }
        Ok(())
    }

    /// Read and store a file whose record could not be reused, through a descriptor
    /// opened beneath the root (see the module docs): a regular file's content, a
    /// symlink's target text (read with `readlinkat` on the link itself, so never through
    /// it). One that is no longer what the listing found is recorded as changing.
    fn fill(&mut self, rel: Vec<u8>, mut entry: Entry, found: Identity) -> Result<(), NotRecorded> {
        let path = Path::new(OsStr::from_bytes(&rel));
        let kind = Kind::of(entry.mode);
        if kind == Kind::Dir {
            entry.hash = DIR_HASH.to_string();
            self.out.tree.insert(rel, entry);
            return Ok(());
        }
        let flags = match kind {
            // `O_PATH | O_NOFOLLOW` opens the link itself, even under NO_SYMLINKS.
            Kind::Link => OFlags::PATH | OFlags::NOFOLLOW,
            _ => OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY,
        };
        let fd = match open_beneath(&self.root_fd, path, flags) {
            Ok(fd) => fd,
            Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
                // Unreadable, or a link on its path since the listing (`ELOOP`): either
                // way nothing was opened; what the walk held is not known now.
                self.out.unreadable.push(rel);
                return Ok(());
            }
            Err(_) => {
                self.out.tree.insert(rel, changing(entry));
                return Ok(());
            }
        };
        let same = rustix::fs::fstat(&fd).is_ok_and(|st| Identity::of(&st) == found);
        if !same {
            self.out.tree.insert(rel, changing(entry));
            return Ok(());
        }
        let stored = match kind {
            Kind::Link => rustix::fs::readlinkat(&fd, "", Vec::new())
                .map_err(std::io::Error::from)
                .and_then(|target| self.blobs.put(std::io::Cursor::new(target.as_bytes()))),
            _ => self.blobs.put(std::fs::File::from(fd)),
        };
        match stored {
            Ok((hash, _)) => entry.hash = hash,
            Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
                self.out.unreadable.push(rel);
                return Ok(());
            }
            Err(e) => {
                return Err(NotRecorded::Failed(format!(
                    "recording {}: {e}",
                    String::from_utf8_lossy(&rel)
                )));
            }
        }
        self.out.read += 1;
        self.out.tree.insert(rel, entry);
        Ok(())
    }
}

/// How much of the index's end is compared: its checksum (20 bytes of SHA-1, 32 of
/// SHA-256) and what comes before it.
const INDEX_TAIL: usize = 32;

/// The last [`INDEX_TAIL`] bytes of the regular file `index` in the git directory open
/// as `git`, `size` bytes long (`None` if it is no longer that, or shorter).
fn index_tail(git: BorrowedFd<'_>, size: u64) -> Option<Vec<u8>> {
    let fd = rustix::fs::openat(
        git,
        "index",
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .ok()?;
    let st = rustix::fs::fstat(&fd).ok()?;
    if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile
        || u64::try_from(st.st_size).ok()? != size
        || size < INDEX_TAIL as u64
    {
        return None;
    }
    let mut tail = vec![0u8; INDEX_TAIL];
    let read = rustix::io::pread(&fd, &mut tail, size - INDEX_TAIL as u64).ok()?;
    (read == INDEX_TAIL).then_some(tail)
}

/// `entry` recorded as changed while it was recorded: its content unknown, so no undo
/// writes it back, and the next walk reads it again.
fn changing(entry: Entry) -> Entry {
    Entry {
        hash: CHANGING_HASH.to_string(),
        ..entry
    }
}

/// What an `lstat` type is as an entry.
fn kind_of(kind: FileType) -> Kind {
    match kind {
        FileType::Symlink => Kind::Link,
        FileType::Directory => Kind::Dir,
        _ => Kind::File,
    }
}

/// The largest ignore file read.
const SMALL: u64 = 1 << 20;

/// The regular file `rel` beneath `dir` (no link on its path), when it is one and holds
/// at most a megabyte: an ignore file, read by descriptor, never a FIFO or a device in
/// its place.
pub(crate) fn read_small(dir: BorrowedFd<'_>, rel: impl AsRef<Path>) -> Option<Vec<u8>> {
    let fd = open_beneath(
        dir,
        rel.as_ref(),
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY,
    )
    .ok()?;
    let st = rustix::fs::fstat(&fd).ok()?;
    if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
        return None;
    }
    let mut bytes = Vec::new();
    std::fs::File::from(fd)
        .take(SMALL + 1)
        .read_to_end(&mut bytes)
        .ok()?;
    (bytes.len() as u64 <= SMALL).then_some(bytes)
}
