//! One walk of the workspace: every file the rules keep (and every file an earlier record
//! held, whatever the rules say now), its content stored unless `lstat` shows it is the
//! file recorded before. An unchanged workspace costs a directory read per directory and
//! an `lstat` per file, and no file is opened.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::fs::File;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use super::changes::ChangeFlag;
use super::kind::{self, DIR_HASH, Kind};
use super::rules::Rules;
use super::store::Blobs;
use super::tree::{Entry, Tree};

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

struct Walk<'a> {
    root: &'a Path,
    rules: &'a mut Rules,
    /// Record the repository's refs and reflogs too.
    git_refs: bool,
    flag: Option<&'a mut ChangeFlag>,
    before: &'a Tree,
    blobs: &'a Blobs,
    budget: Budget,
    bytes: u64,
    /// Files found whose content must be read, with what `lstat` said of them.
    found: Vec<(Vec<u8>, Entry)>,
    out: Walked,
}

/// Walk `root` under `rules`, reusing what `before` recorded of files `lstat` shows
/// unchanged, and watching each directory it enters with `flag`.
pub(crate) fn walk(
    root: &Path,
    rules: &mut Rules,
    flag: Option<&mut ChangeFlag>,
    before: &Tree,
    blobs: &Blobs,
    options: Options,
) -> Result<Walked, NotRecorded> {
    let budget = options.budget;
    let mut w = Walk {
        root,
        rules,
        git_refs: options.git_refs,
        flag,
        before,
        blobs,
        budget,
        bytes: 0,
        found: Vec::new(),
        out: Walked {
            tree: Tree::new(),
            unreadable: Vec::new(),
            read: 0,
        },
    };
    w.dir(root, true)?;
    w.finish(before.keys())
}

/// Walk again only `dirs` (each with its subtree when `true`, else only the files
/// directly in it), keeping every other entry of `before` as it is: what the change
/// flag saw is all that can have changed.
pub(crate) fn rewalk(
    root: &Path,
    rules: &mut Rules,
    flag: Option<&mut ChangeFlag>,
    before: &Tree,
    blobs: &Blobs,
    options: Options,
    dirs: &BTreeMap<PathBuf, bool>,
) -> Result<Walked, NotRecorded> {
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
    for (dir, deep) in &dirs {
        let prefix = relative(root, dir);
        let mut from = prefix.clone();
        if !from.is_empty() {
            from.push(b'/');
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
    let bytes = kept.values().map(|e| e.size).sum();
    let mut w = Walk {
        root,
        rules,
        git_refs: false,
        flag,
        before,
        blobs,
        budget: options.budget,
        bytes,
        found: Vec::new(),
        out: Walked {
            tree: kept,
            unreadable: Vec::new(),
            read: 0,
        },
    };
    for (dir, deep) in dirs {
        w.dir(dir, deep)?;
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

impl Walk<'_> {
    /// Read what was found, then keep recorded each of `earlier` (paths an earlier record
    /// held) that the walk did not find and that is still a file: a path stays recorded
    /// even where the rules now leave it out (a `.gitignore` planted since).
    fn finish<'k>(
        mut self,
        earlier: impl Iterator<Item = &'k Vec<u8>>,
    ) -> Result<Walked, NotRecorded> {
        // Only now, with the budget known to hold, is any file read.
        self.fill_found()?;
        for rel in earlier {
            if !self.out.tree.contains_key(rel) {
                let path = self.root.join(OsStr::from_bytes(rel));
                if let Ok(meta) = std::fs::symlink_metadata(&path)
                    && (meta.is_file() || meta.is_symlink())
                {
                    self.file(rel.clone(), &meta)?;
                }
            }
        }
        self.fill_found()?;
        Ok(self.out)
    }

    /// The files in `dir`, and with `deep` those in every directory below it.
    fn dir(&mut self, dir: &Path, deep: bool) -> Result<(), NotRecorded> {
        let entries = match std::fs::read_dir(dir) {
            Ok(entries) => entries,
            Err(e) if dir == self.root => {
                return Err(NotRecorded::Failed(format!("reading the workspace: {e}")));
            }
            // Gone since it changed: its files were dropped with it.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(_) => {
                self.out.unreadable.push(self.rel(dir));
                return Ok(());
            }
        };
        self.rules.enter(dir);
        if let Some(flag) = self.flag.as_deref_mut() {
            flag.watch(dir);
        }
        let mut empty = true;
        for entry in entries.flatten() {
            empty = false;
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let path = entry.path();
            if kind.is_dir() {
                if !deep {
                    continue;
                }
                if entry.file_name() == ".git" {
                    if self.git_refs && dir == self.root {
                        self.git_refs(&path)?;
                    }
                    continue;
                }
                if self.rules.ignored(&path, true) {
                    continue;
                }
                self.dir(&path, true)?;
            } else if (kind.is_file() || kind.is_symlink()) && !self.rules.ignored(&path, false) {
                // A symlink as a link: its target's text, never what it points at.
                let Ok(meta) = entry.metadata() else { continue };
                let rel = self.rel(&path);
                self.file(rel, &meta)?;
            }
        }
        // An empty directory is an entry of its own: a call that removes it is undone.
        if empty
            && dir != self.root
            && let Ok(meta) = std::fs::symlink_metadata(dir)
        {
            let rel = self.rel(dir);
            self.file(rel, &meta)?;
        }
        Ok(())
    }

    /// The repository's own history, which `git_write` lets a call rewrite: `HEAD`,
    /// `ORIG_HEAD`, `packed-refs`, every ref and every reflog. (Objects are not
    /// recorded: git keeps an unreachable one for weeks, and a ref put back finds it.)
    fn git_refs(&mut self, git: &Path) -> Result<(), NotRecorded> {
        if let Some(flag) = self.flag.as_deref_mut() {
            flag.watch(git);
        }
        for name in ["HEAD", "ORIG_HEAD", "packed-refs"] {
            let path = git.join(name);
            if let Ok(meta) = std::fs::symlink_metadata(&path)
                && meta.is_file()
            {
                let rel = self.rel(&path);
                self.file(rel, &meta)?;
            }
        }
        for sub in ["refs", "logs"] {
            self.everything(&git.join(sub))?;
        }
        Ok(())
    }

    /// Every file under `dir`, whatever the rules say.
    fn everything(&mut self, dir: &Path) -> Result<(), NotRecorded> {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return Ok(());
        };
        if let Some(flag) = self.flag.as_deref_mut() {
            flag.watch(dir);
        }
        for entry in entries.flatten() {
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                self.everything(&entry.path())?;
            } else if kind.is_file()
                && let Ok(meta) = entry.metadata()
            {
                let rel = self.rel(&entry.path());
                self.file(rel, &meta)?;
            }
        }
        Ok(())
    }

    /// `path` relative to the root, as bytes.
    fn rel(&self, path: &Path) -> Vec<u8> {
        relative(self.root, path)
    }

    fn file(&mut self, rel: Vec<u8>, meta: &std::fs::Metadata) -> Result<(), NotRecorded> {
        self.bytes += meta.size();
        let files = self.out.tree.len() + self.found.len();
        if files >= self.budget.files || self.bytes > self.budget.bytes {
            return Err(NotRecorded::OverBudget {
                files: files + 1,
                bytes: self.bytes,
            });
        }
        let entry = Entry {
            size: meta.size(),
            mtime_ns: meta.mtime() * 1_000_000_000 + meta.mtime_nsec(),
            ctime_ns: meta.ctime() * 1_000_000_000 + meta.ctime_nsec(),
            ino: meta.ino(),
            mode: kind::mode(kind_of(meta), meta.mode()),
            hash: String::new(),
        };
        match self.before.get(&rel) {
            Some(known) if known.same_stat(&entry) => {
                let entry = Entry {
                    hash: known.hash.clone(),
                    ..entry
                };
                self.out.tree.insert(rel, entry);
            }
            _ => self.found.push((rel, entry)),
        }
        Ok(())
    }

    fn fill_found(&mut self) -> Result<(), NotRecorded> {
        for (rel, entry) in std::mem::take(&mut self.found) {
            self.fill(rel, entry)?;
        }
        Ok(())
    }

    /// Read and store a file whose record could not be reused: a regular file's content,
    /// a symlink's target text (read with `readlink`, so never through the link).
    fn fill(&mut self, rel: Vec<u8>, mut entry: Entry) -> Result<(), NotRecorded> {
        let path = self.root.join(OsStr::from_bytes(&rel));
        let stored = match Kind::of(entry.mode) {
            Kind::Dir => Ok((DIR_HASH.to_string(), 0)),
            Kind::Link => match std::fs::read_link(&path) {
                Ok(target) => self.blobs.put(target.as_os_str().as_bytes()),
                // No longer a link: the next walk sees what it is now.
                Err(e) if e.kind() == std::io::ErrorKind::InvalidInput => return Ok(()),
                Err(e) => Err(e),
            },
            Kind::File => File::options()
                .read(true)
                .custom_flags(open_flags())
                .open(&path)
                .and_then(|f| {
                    if !f.metadata()?.is_file() {
                        return Err(std::io::Error::other("not a regular file"));
                    }
                    self.blobs.put(f)
                }),
        };
        match stored {
            Ok((hash, _)) => entry.hash = hash,
            Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
                self.out.unreadable.push(rel);
                return Ok(());
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
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

/// What `lstat` says an entry is.
fn kind_of(meta: &std::fs::Metadata) -> Kind {
    if meta.is_symlink() {
        Kind::Link
    } else if meta.is_dir() {
        Kind::Dir
    } else {
        Kind::File
    }
}

/// Open without following a symlink put in the file's place, and without waiting on a
/// FIFO.
fn open_flags() -> i32 {
    (rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::NONBLOCK).bits() as i32
}
