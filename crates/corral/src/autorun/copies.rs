//! A call's per-call copies of the held paths, and what it changed in them.
//!
//! Before a sandboxed call in `workspace-write`, each held path that exists is read
//! (through the resolver, nothing followed) into its **base**, and copied into a directory
//! of the call's own that the box sees; the box gets each copy bound over its path (see
//! `corral_sys::sandbox::Spec::overlays`), so it reads and writes the copy while the host
//! keeps the person's file for the whole call. A directory gets a directory copy, so
//! renames inside it work; a file gets a file copy, so an in-place write works and a
//! rename over it fails with `EBUSY`.
//!
//! After the call ([`Copies::settle`]):
//! - each copy that differs from its base is a held change, file by file;
//! - where the box had no copy (no mount namespace here, or a path too large to copy),
//!   the host's file itself is compared with the base, and a change is held and the
//!   base put back;
//! - a held path that did not exist at the start and does now (a new `.mcp.json`, a
//!   `.husky/` made during the call) is held with no base and removed from the
//!   workspace.
//!
//! Every read and write of the workspace goes through `beneath` (the resolver), as the
//! file tools' and undo's do: a path a command swapped for a symbolic link is never
//! followed.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use super::ClassPath;
use crate::beneath::{Replace, Roots};

/// The most files a held directory may have for the box to get a copy of it; a larger
/// one is compared after the call instead.
const MAX_FILES: usize = 256;
/// The most bytes a held path's files may hold together for a copy.
const MAX_BYTES: u64 = 4 << 20;
/// How deep a held directory is read.
const MAX_DEPTH: usize = 8;

/// One file of a held path: relative to the workspace, its bytes and permission bits.
#[derive(Debug, Clone, PartialEq, Eq)]
struct File {
    rel: PathBuf,
    bytes: Vec<u8>,
    mode: u32,
}

/// A held path as it was when the call started.
#[derive(Debug)]
struct Base {
    class: ClassPath,
    files: Vec<File>,
    /// Its copy, as the host names it (`None`: too large, compared on the host).
    copy: Option<PathBuf>,
}

/// The held paths of one call: their bases and copies (removed when dropped).
#[derive(Debug)]
pub(crate) struct Copies {
    workspace: PathBuf,
    bases: Vec<Base>,
    /// The directory holding the copies, as the host names it.
    dir: Option<PathBuf>,
    /// Whether the box got the copies bound over their paths.
    bound: bool,
    /// When the call started, as file change times count (a little before): what a
    /// nested repository changed since is the call's.
    since: (i64, i64),
    /// What a result said was held, by path and content: a handle's sweeps say a change
    /// once, and again only when it changes.
    said: std::sync::Mutex<Vec<(PathBuf, Option<String>)>>,
    /// The symbolic links on the held paths when the call started (the person's).
    links: Vec<(PathBuf, Vec<u8>)>,
    /// Whether the call may write (`Plan::may_write`): one that cannot has no nested
    /// repository to look for.
    writes: bool,
    /// The reported rows as they were (see `table::Treatment::Reported`).
    reported: Vec<(PathBuf, &'static str, Option<Vec<u8>>)>,
}

impl Drop for Copies {
    fn drop(&mut self) {
        if let Some(dir) = &self.dir {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// One held change a result names.
#[derive(Debug, Clone)]
pub(crate) struct HeldNote {
    pub id: String,
    pub rel: PathBuf,
    pub runs: &'static str,
}

/// What one call changed in the held paths, said in its result.
#[derive(Debug, Default)]
pub(crate) struct Settled {
    /// Each held change, once.
    pub held: Vec<HeldNote>,
    /// What the person applied when asked at the call's end: `path as ID`.
    pub applied: Vec<String>,
    /// What could not be held, and why.
    pub problems: Vec<String>,
    /// What changed and is not held, since its tool asks the person first.
    pub notes: Vec<String>,
}

impl Settled {
    /// The line a result carries, if anything was held.
    pub(crate) fn line(&self) -> Option<String> {
        let mut lines = Vec::new();
        if !self.applied.is_empty() {
            lines.push(format!(
                "applied by the person when asked: {}",
                self.applied.join("; ")
            ));
        }
        if let Some(line) = self.held_line() {
            lines.push(line);
        }
        (!lines.is_empty()).then(|| lines.join("\n"))
    }

    fn held_line(&self) -> Option<String> {
        if self.held.is_empty() && self.problems.is_empty() {
            return (!self.notes.is_empty()).then(|| format!("note: {}", self.notes.join("; ")));
        }
        let mut out = String::from("held for the person: ");
        if !self.held.is_empty() {
            let held: Vec<String> = self
                .held
                .iter()
                .map(|h| format!("{} ({}) as {}", h.rel.display(), h.runs, h.id))
                .collect();
            out.push_str(&held.join("; "));
            out.push_str(
                ". The workspace keeps the person's version: host programs run these files \
                 on their own, so a change waits for a person to review it (`corral review`). \
                 Do not apply it another way",
            );
        }
        if !self.problems.is_empty() {
            if !self.held.is_empty() {
                out.push_str("; ");
            }
            out.push_str(&self.problems.join("; "));
        }
        for note in &self.notes {
            out.push_str("; ");
            out.push_str(note);
        }
        Some(out)
    }
}

impl Copies {
    /// Take the bases of `workspace`'s held paths and copy them into a new directory in
    /// `host_dir` (which the box sees as `box_dir`). The overlays are for the box's
    /// spec: (copy as the box names it, path as the box names it, `workspace_seen` being
    /// the workspace there).
    pub(crate) fn make(
        workspace: &Path,
        host_dir: &Path,
        box_dir: &Path,
        workspace_seen: &Path,
        writes: bool,
    ) -> (Copies, Vec<(PathBuf, PathBuf)>) {
        let mut copies = Copies {
            workspace: workspace.to_path_buf(),
            bases: Vec::new(),
            dir: None,
            bound: false,
            since: since_now(),
            said: std::sync::Mutex::default(),
            links: super::links(workspace),
            writes,
            reported: super::reported(workspace),
        };
        let class = super::existing(workspace);
        let Ok(roots) = Roots::open([workspace.to_path_buf()]) else {
            return (copies, Vec::new());
        };
        static SEQ: AtomicU64 = AtomicU64::new(0);
        // A name a handle of the run cannot guess to plant ahead of it.
        let salt = {
            use std::hash::{BuildHasher, RandomState};
            RandomState::new().hash_one((std::process::id(), SEQ.fetch_add(1, Ordering::Relaxed)))
        };
        let name = format!("corral-held-{salt:016x}");
        let dir = host_dir.join(&name);
        let made = std::fs::create_dir(&dir).is_ok();
        if made {
            copies.dir = Some(dir.clone());
        }
        let mut overlays = Vec::new();
        for (i, class) in class.into_iter().enumerate() {
            let files = read_tree(&roots, workspace, &class);
            let copy = files
                .as_ref()
                .filter(|_| made)
                .and_then(|files| write_copy(&dir.join(i.to_string()), &class, files).ok());
            if copy.is_some() {
                overlays.push((
                    box_dir.join(&name).join(i.to_string()),
                    workspace_seen.join(&class.rel),
                ));
            }
            copies.bases.push(Base {
                class,
                files: files.unwrap_or_default(),
                copy,
            });
        }
        (copies, overlays)
    }

    /// Whether the box got the copies bound over their paths (`bound`: what its
    /// confinement reports).
    pub(crate) fn bound(&mut self, bound: bool) {
        self.bound = bound;
    }

    /// After the call: hold what it changed (see the module's docs) in `store`, under
    /// `run` and `step`.
    pub(crate) fn settle(
        &self,
        store: &crate::held::HeldStore,
        run: &str,
        step: i64,
        watch: &std::sync::Mutex<super::nested_git::Watch>,
    ) -> Settled {
        let mut settled = Settled::default();
        let Ok(roots) = Roots::open([self.workspace.clone()]) else {
            return settled;
        };
        let hold = |settled: &mut Settled,
                    rel: &Path,
                    runs: &'static str,
                    base: Option<&File>,
                    now: Option<&File>| {
            let new = crate::held::NewHeld {
                workspace: &self.workspace,
                path: rel,
                base: base.map(|f| f.bytes.as_slice()),
                held: now.map(|f| (f.bytes.as_slice(), f.mode)),
                runs,
            };
            match store.hold(run, step, new) {
                Ok(held) => {
                    let mut said = self.said.lock().unwrap_or_else(|e| e.into_inner());
                    let this = (rel.to_path_buf(), held.held_sha256.clone());
                    if !said.contains(&this) {
                        said.retain(|(p, _)| p != rel);
                        said.push(this);
                        settled.held.push(HeldNote {
                            id: held.id,
                            rel: rel.to_path_buf(),
                            runs,
                        });
                    }
                }
                Err(e) => settled
                    .problems
                    .push(format!("{} could not be held: {e}", rel.display())),
            }
        };
        for base in &self.bases {
            match (&base.copy, self.bound) {
                (Some(copy), true) => {
                    // A file's copy is read through its directory, as a directory's is.
                    let root = match base.class.dir {
                        true => copy.clone(),
                        false => copy.parent().map(Path::to_path_buf).unwrap_or_default(),
                    };
                    let Ok(copy_roots) = Roots::open([root]) else {
                        continue;
                    };
                    let now = read_copy(&copy_roots, copy, &base.class);
                    for (rel, b, n) in differences(&base.files, &now) {
                        hold(&mut settled, &rel, base.class.runs, b, n);
                    }
                }
                _ => {
                    let class = &base.class;
                    let now = read_tree(&roots, &self.workspace, class).unwrap_or_default();
                    let changed = differences(&base.files, &now);
                    for (rel, b, n) in &changed {
                        hold(&mut settled, rel, class.runs, *b, *n);
                    }
                    // The person's version back.
                    for (rel, b, _) in changed {
                        let path = self.workspace.join(&rel);
                        let back = match b {
                            Some(file) => roots
                                .write(&path, &file.bytes, Replace::Any)
                                .and_then(|()| roots.chmod(&path, file.mode)),
                            None => roots.remove(&path),
                        };
                        if let Err(e) = back {
                            settled
                                .problems
                                .push(format!("{} could not be put back: {e}", rel.display()));
                        }
                    }
                }
            }
        }
        // Held paths that appeared during the call: held, and moved out.
        let known: Vec<&Path> = self.bases.iter().map(|b| b.class.rel.as_path()).collect();
        for class in super::existing(&self.workspace) {
            if known.iter().any(|k| class.rel.starts_with(k)) {
                continue;
            }
            let files = read_tree(&roots, &self.workspace, &class).unwrap_or_default();
            for file in &files {
                hold(&mut settled, &file.rel, class.runs, None, Some(file));
            }
            let removed = remove_tree(&roots, &self.workspace, &class, &files);
            if let Err(e) = removed {
                settled.problems.push(format!(
                    "{} could not be moved out of the workspace: {e}",
                    class.rel.display()
                ));
            }
        }
        if self.writes {
            let mut watch = watch.lock().unwrap_or_else(|e| e.into_inner());
            self.settle_nested(&roots, &mut settled, &hold, &mut watch);
        }
        for ((rel, runs, before), (_, _, now)) in
            self.reported.iter().zip(super::reported(&self.workspace))
        {
            if *before != now {
                settled.notes.push(format!(
                    "{} changed ({runs}); it runs nothing until the person approves it there",
                    rel.display()
                ));
            }
        }
        for (rel, target) in super::links(&self.workspace) {
            if self.links.iter().any(|(p, t)| *p == rel && *t == target) {
                continue;
            }
            let said = match roots.remove(&self.workspace.join(&rel)) {
                Ok(()) => "removed",
                Err(_) => "left, as it could not be removed",
            };
            settled.problems.push(format!(
                "{} is a symbolic link the call made (to {}), {said}: a host program reading \
                 it would follow it",
                rel.display(),
                crate::render::person::value(&String::from_utf8_lossy(&target))
            ));
        }
        settled
    }

    /// Hold what the call planted in nested repositories (see `nested_git`).
    fn settle_nested(
        &self,
        roots: &Roots,
        settled: &mut Settled,
        hold: &Hold<'_>,
        watch: &mut super::nested_git::Watch,
    ) {
        let (found, _) = super::nested_git::changed(watch, &self.workspace, self.since);
        for f in found {
            let path = self.workspace.join(&f.rel);
            let Ok(Some((bytes, mode))) = roots.read_with_mode(&path, MAX_BYTES) else {
                continue;
            };
            let now = File {
                rel: f.rel.clone(),
                bytes,
                mode,
            };
            let kept = f.kept.map(|bytes| File {
                rel: f.rel.clone(),
                bytes,
                mode,
            });
            hold(
                settled,
                &f.rel,
                super::nested_git::RUNS,
                kept.as_ref(),
                Some(&now),
            );
            let left = match &kept {
                Some(kept) => roots.write(&path, &kept.bytes, Replace::Any),
                None => roots.remove(&path),
            };
            if let Err(e) = left {
                settled.problems.push(format!(
                    "{} could not be taken out of the workspace: {e}",
                    f.rel.display()
                ));
            }
        }
    }
}

/// Now, less a margin for the coarse clock file times are stamped with.
fn since_now() -> (i64, i64) {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .saturating_sub(std::time::Duration::from_millis(50));
    (now.as_secs() as i64, i64::from(now.subsec_nanos()))
}

/// Write `files` (of `class`) as its copy at `at`: a file, or a directory tree. The copies
/// lie in the run's own `/tmp`, which a handle of the same run can write while this one
/// starts: every directory and file is made new (`O_EXCL`, nothing followed), so a name it
/// planted fails the copy instead of leading a write elsewhere.
fn write_copy(at: &Path, class: &ClassPath, files: &[File]) -> std::io::Result<PathBuf> {
    use rustix::fs::{Mode, OFlags};
    use std::io::Write as _;
    let dir_flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let put = |dir: &std::os::fd::OwnedFd, name: &Path, file: &File| -> std::io::Result<()> {
        let fd = rustix::fs::openat(
            dir,
            name,
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_raw_mode(0o600),
        )?;
        let mut out = std::fs::File::from(fd);
        out.write_all(&file.bytes)?;
        rustix::fs::fchmod(&out, Mode::from_raw_mode(file.mode))?;
        Ok(())
    };
    let (parent, name) = match (at.parent(), at.file_name()) {
        (Some(parent), Some(name)) => (parent, Path::new(name)),
        _ => return Err(std::io::ErrorKind::InvalidInput.into()),
    };
    let top = rustix::fs::open(parent, dir_flags, Mode::empty())?;
    if !class.dir {
        put(&top, name, &files[0])?;
        return Ok(at.to_path_buf());
    }
    rustix::fs::mkdirat(&top, name, Mode::from_raw_mode(0o700))?;
    let root = rustix::fs::openat(&top, name, dir_flags, Mode::empty())?;
    // Each directory is made here, new, and entered by descriptor: a name planted by
    // another process fails the copy.
    let mut made: Vec<(PathBuf, std::os::fd::OwnedFd)> = Vec::new();
    for file in files {
        let inside = file.rel.strip_prefix(&class.rel).unwrap_or(&file.rel);
        let mut at_dir = PathBuf::new();
        let mut fd: Option<std::os::fd::OwnedFd> = None;
        if let Some(sub) = inside.parent() {
            for part in sub.components() {
                at_dir.push(part);
                if let Some((_, known)) = made.iter().find(|(p, _)| *p == at_dir) {
                    fd = Some(known.try_clone()?);
                    continue;
                }
                let base = fd.as_ref().unwrap_or(&root);
                rustix::fs::mkdirat(base, part.as_os_str(), Mode::from_raw_mode(0o700))?;
                let opened = rustix::fs::openat(base, part.as_os_str(), dir_flags, Mode::empty())?;
                made.push((at_dir.clone(), opened.try_clone()?));
                fd = Some(opened);
            }
        }
        let Some(file_name) = inside.file_name() else {
            continue;
        };
        put(fd.as_ref().unwrap_or(&root), Path::new(file_name), file)?;
    }
    Ok(at.to_path_buf())
}

/// How a held path's files are read: as its base (whole, within a copy's bounds, or not
/// at all) or as what a call left in its copy (what is there, anything else passed over).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reading {
    Base,
    Copy,
}

/// The files of a held path, read through the resolver: `class`'s at `workspace`.
/// `None` when it is too large (or cannot be read) for a copy.
fn read_tree(roots: &Roots, workspace: &Path, class: &ClassPath) -> Option<Vec<File>> {
    read_files(roots, &workspace.join(&class.rel), class, Reading::Base)
}

/// The files of `class`'s copy at `copy` now, named as in the workspace. What the box
/// left there that is not a regular file or a directory is not followed.
fn read_copy(roots: &Roots, copy: &Path, class: &ClassPath) -> Vec<File> {
    read_files(roots, copy, class, Reading::Copy).unwrap_or_default()
}

/// The files at `at` (a file, or a directory when `class` is one), named as `class`'s in
/// the workspace, read as `how` says.
fn read_files(roots: &Roots, at: &Path, class: &ClassPath, how: Reading) -> Option<Vec<File>> {
    let base = how == Reading::Base;
    let limit = if base { MAX_BYTES } else { MAX_BYTES * 4 };
    // One file: `None` where the base cannot be read whole, nothing where a copy's cannot.
    let read = |path: &Path| match roots.read_with_mode(path, limit) {
        Ok(Some(found)) => Some(Some(found)),
        _ if base => None,
        _ => Some(None),
    };
    let mut files = Vec::new();
    if !class.dir {
        if let Some((bytes, mode)) = read(at)? {
            files.push(File {
                rel: class.rel.clone(),
                bytes,
                mode,
            });
        }
        return Some(files);
    }
    let mut bytes = 0;
    let mut pending = vec![(PathBuf::new(), 0)];
    while let Some((dir, depth)) = pending.pop() {
        for name in super::names_in(roots, &at.join(&dir)) {
            let inside = dir.join(&name);
            let path = at.join(&inside);
            match roots.lstat(&path) {
                Ok(Some((rustix::fs::FileType::Directory, _))) if depth < MAX_DEPTH => {
                    pending.push((inside, depth + 1));
                }
                Ok(Some((rustix::fs::FileType::RegularFile, _))) => {
                    let Some((content, mode)) = read(&path)? else {
                        continue;
                    };
                    bytes += content.len() as u64;
                    files.push(File {
                        rel: class.rel.join(inside),
                        bytes: content,
                        mode,
                    });
                    if base && (files.len() > MAX_FILES || bytes > MAX_BYTES) {
                        return None;
                    }
                }
                // A symbolic link, a pipe, a directory too deep: a base with one is not
                // copied (the path is compared on the host instead); a copy's is passed over.
                _ if base => return None,
                _ => {}
            }
        }
    }
    files.sort_by(|a, b| a.rel.cmp(&b.rel));
    Some(files)
}

/// Keep one change: (what the result says, the path, what runs it, base, now).
type Hold<'a> = dyn Fn(&mut Settled, &Path, &'static str, Option<&File>, Option<&File>) + 'a;

type Difference<'a> = (PathBuf, Option<&'a File>, Option<&'a File>);

/// Each file that was added, changed (content or permission bits) or removed between
/// `base` and `now`: (path, base, now).
fn differences<'a>(base: &'a [File], now: &'a [File]) -> Vec<Difference<'a>> {
    let mut out = Vec::new();
    for b in base {
        match now.iter().find(|n| n.rel == b.rel) {
            Some(n) if n == b => {}
            found => out.push((b.rel.clone(), Some(b), found)),
        }
    }
    for n in now {
        if !base.iter().any(|b| b.rel == n.rel) {
            out.push((n.rel.clone(), None, Some(n)));
        }
    }
    out
}

/// Remove a held path that appeared: its files, then its directories deepest first.
fn remove_tree(
    roots: &Roots,
    workspace: &Path,
    class: &ClassPath,
    files: &[File],
) -> std::io::Result<()> {
    if !class.dir {
        return roots.remove(&workspace.join(&class.rel));
    }
    for file in files {
        roots.remove(&workspace.join(&file.rel))?;
    }
    let mut dirs = vec![class.rel.clone()];
    let mut i = 0;
    while i < dirs.len() {
        let dir = dirs[i].clone();
        for name in super::names_in(roots, &workspace.join(&dir)) {
            let rel = dir.join(name);
            if let Ok(Some((rustix::fs::FileType::Directory, _))) =
                roots.lstat(&workspace.join(&rel))
            {
                dirs.push(rel);
            }
        }
        i += 1;
    }
    for dir in dirs.iter().rev() {
        roots.remove_dir(&workspace.join(dir))?;
    }
    Ok(())
}
