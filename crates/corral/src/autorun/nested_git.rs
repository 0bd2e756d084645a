//! Nested git repositories a call made or changed: their data is kept (a `git clone` or a
//! `pip install -e git+…` into the workspace still works), but git runs programs its
//! `config` names (`core.fsmonitor`, `core.pager`, filters, aliases) and its `hooks/`,
//! when the person, or an editor opening the folder, runs git there.
//!
//! After a call that may write (as the undo record judges it, `Plan::may_write`), a
//! walk of the workspace's directories (by descriptor, nothing followed, passing over
//! what the ignore rules leave out, as the undo record does: build output and installed
//! dependencies are not where a person runs git) finds every `.git` below its top (a directory, or a `.git` file's `gitdir:` inside the
//! workspace). For each whose `config` changed during the call (its change time, which no
//! command can set, is after the call's start): when it sets a key outside those `git
//! init` and `git clone` write, the whole file is held and a config of those keys alone
//! is left in its place. Every file of its `hooks/` changed during the call, other than
//! the `*.sample` files git's template copies, is held and moved out. The top `.git` is
//! not walked: the box keeps it read-only (see `config::git_dir`).

use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, Mode, OFlags};

use crate::undo::changes::{ChangeFlag, Seen};

/// The most directories a walk reads; a workspace with more is walked that far.
const MAX_DIRS: usize = 200_000;
/// How deep it goes.
const MAX_DEPTH: usize = 48;
/// The most bytes of a nested `config` or hook read.
const MAX_FILE: u64 = 1 << 20;

/// What runs a nested repository's held files.
pub(crate) const RUNS: &str =
    "git: a nested repository's config and hooks, run when git runs in it";

/// A file of a nested repository the call changed: relative to the workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Found {
    pub rel: PathBuf,
    /// For a `config`: the keys git init and clone write, which stay in place.
    pub kept: Option<Vec<u8>>,
}

/// What a run knows of its workspace's directories between calls: an inotify watch on
/// each directory the walk entered and on each nested git directory and its `hooks/`
/// (the undo record's change flag, `undo::changes`), so a call after which nothing
/// changed costs a read of the queue, and one that changed a few directories a walk of
/// those only. The first call walks the whole workspace.
#[derive(Debug, Default)]
pub(crate) struct Watch {
    flag: Option<ChangeFlag>,
}

/// The files of nested repositories in `workspace` that a call which started at
/// `since` (seconds, nanoseconds since the epoch) made or changed and that must be held.
/// The number of directories walked is second.
pub(crate) fn changed(
    watch: &mut Watch,
    workspace: &Path,
    since: (i64, i64),
) -> (Vec<Found>, usize) {
    let mut walk = Walk {
        workspace,
        since,
        rules: crate::undo::rules::Rules::new(workspace),
        out: Vec::new(),
        walked: 0,
        flag: ChangeFlag::new(),
    };
    let seen = match watch.flag.take() {
        Some(mut flag) => {
            let seen = flag.changed();
            walk.flag = flag;
            seen
        }
        None => Seen::Everything,
    };
    match seen {
        Seen::Nothing => {}
        Seen::Everything => {
            walk.flag = ChangeFlag::new();
            walk.from(Path::new(""), true);
        }
        Seen::Dirs(dirs) => {
            for (dir, deep) in dirs {
                let Ok(rel) = dir.strip_prefix(workspace) else {
                    continue;
                };
                let rel = rel.to_path_buf();
                // A change in a nested git directory or its hooks: look at that one.
                let git = rel
                    .ancestors()
                    .find(|a| a.file_name().is_some_and(|n| n == ".git"))
                    .map(Path::to_path_buf);
                match git {
                    Some(git) => walk.git_dir(&git),
                    None => walk.from(&rel, deep),
                }
            }
        }
    }
    watch.flag = Some(walk.flag);
    let mut out = walk.out;
    out.sort_by(|a, b| a.rel.cmp(&b.rel));
    out.dedup_by(|a, b| a.rel == b.rel);
    (out, walk.walked)
}

/// One look at the workspace for nested repositories.
struct Walk<'a> {
    workspace: &'a Path,
    since: (i64, i64),
    rules: crate::undo::rules::Rules,
    out: Vec<Found>,
    walked: usize,
    flag: ChangeFlag,
}

impl Walk<'_> {
    /// Look at `rel` (relative to the workspace): its entries, and with `deep` every
    /// directory below it, watching each.
    fn from(&mut self, rel: &Path, deep: bool) {
        let workspace = self.workspace;
        let Ok(roots) = crate::beneath::Roots::open([workspace.to_path_buf()]) else {
            return;
        };
        let Ok(start) = roots.dir(&workspace.join(rel)) else {
            return;
        };
        // The ignore rules of the directories above, as the walk from the top reads them.
        for above in rel.ancestors().collect::<Vec<_>>().into_iter().rev() {
            let abs = workspace.join(above);
            if let Ok(fd) = roots.dir(&abs) {
                self.rules
                    .enter_with(&abs, || read_at(&fd, ".gitignore", MAX_FILE));
            }
        }
        let mut pending: Vec<(OwnedFd, PathBuf, usize)> = vec![(start, rel.to_path_buf(), 0)];
        while let Some((dir, rel, depth)) = pending.pop() {
            self.walked += 1;
            if self.walked > MAX_DIRS {
                break;
            }
            let abs = workspace.join(&rel);
            self.flag.watch(&abs);
            self.rules
                .enter_with(&abs, || read_at(&dir, ".gitignore", MAX_FILE));
            let Ok(entries) = rustix::fs::Dir::read_from(&dir) else {
                continue;
            };
            for entry in entries.flatten() {
                let Ok(name) = entry.file_name().to_str() else {
                    continue;
                };
                if name == "." || name == ".." {
                    continue;
                }
                let kind = entry.file_type();
                let is_dir = kind == rustix::fs::FileType::Directory;
                if name == ".git" {
                    if rel.as_os_str().is_empty() {
                        // The top repository: read-only in the box.
                        continue;
                    }
                    if is_dir {
                        self.git_dir(&rel.join(".git"));
                    } else if kind == rustix::fs::FileType::RegularFile
                        && let Some(pointed) = gitdir_of(&dir, &rel, workspace)
                    {
                        self.git_dir(&pointed);
                    }
                    continue;
                }
                if deep
                    && is_dir
                    && depth < MAX_DEPTH
                    && !self.rules.ignored(&abs.join(name), true)
                    && let Ok(sub) = open_dir(&dir, name)
                {
                    pending.push((sub, rel.join(name), depth + 1));
                }
            }
        }
    }

    /// Check the nested git directory at `rel`, and watch it and its hooks.
    fn git_dir(&mut self, rel: &Path) {
        if rel == Path::new(".git") {
            return;
        }
        let Ok(git) = open_beneath_dir(self.workspace, rel) else {
            return;
        };
        let abs = self.workspace.join(rel);
        self.flag.watch(&abs);
        self.flag.watch(&abs.join("hooks"));
        check(&git, rel, self.since, &mut self.out);
    }
}

fn open_dir(dir: &OwnedFd, name: &str) -> rustix::io::Result<OwnedFd> {
    rustix::fs::openat(
        dir,
        name,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
}

fn open_beneath_dir(workspace: &Path, rel: &Path) -> std::io::Result<OwnedFd> {
    let roots = crate::beneath::Roots::open([workspace.to_path_buf()])?;
    roots.dir(&workspace.join(rel))
}

/// The workspace-relative git directory a `.git` file in `rel` names (`gitdir: …`),
/// when it lies inside the workspace.
fn gitdir_of(dir: &OwnedFd, rel: &Path, workspace: &Path) -> Option<PathBuf> {
    let text = read_at(dir, ".git", 4096)?;
    let text = String::from_utf8(text).ok()?;
    let target = text.lines().find_map(|l| l.strip_prefix("gitdir:"))?.trim();
    let target = Path::new(target);
    let joined = if target.is_absolute() {
        target.strip_prefix(workspace).ok()?.to_path_buf()
    } else {
        rel.join(target)
    };
    // Lexically, `..` taken back: a path out of the workspace is not followed.
    let mut normal = PathBuf::new();
    for part in joined.components() {
        match part {
            std::path::Component::ParentDir if !normal.pop() => return None,
            std::path::Component::ParentDir => {}
            std::path::Component::Normal(p) => normal.push(p),
            _ => {}
        }
    }
    (!normal.as_os_str().is_empty()).then_some(normal)
}

/// A regular file `name` in `dir`, at most `limit` bytes, nothing followed.
fn read_at(dir: &OwnedFd, name: &str, limit: u64) -> Option<Vec<u8>> {
    use std::io::Read as _;
    let fd = rustix::fs::openat(
        dir,
        name,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .ok()?;
    let st = rustix::fs::fstat(&fd).ok()?;
    if rustix::fs::FileType::from_raw_mode(st.st_mode) != rustix::fs::FileType::RegularFile {
        return None;
    }
    let mut bytes = Vec::new();
    std::fs::File::from(fd)
        .take(limit)
        .read_to_end(&mut bytes)
        .ok()?;
    Some(bytes)
}

/// Whether what is at `name` in `dir` changed at or after `since`.
fn changed_since(dir: &OwnedFd, name: &str, since: (i64, i64)) -> bool {
    rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)
        .is_ok_and(|st| (st.st_ctime, st.st_ctime_nsec as i64) >= since)
}

/// The held files of the git directory `git` (at `rel`).
fn check(git: &OwnedFd, rel: &Path, since: (i64, i64), out: &mut Vec<Found>) {
    if changed_since(git, "config", since)
        && let Some(text) = read_at(git, "config", MAX_FILE)
    {
        let kept = kept_keys(&String::from_utf8_lossy(&text));
        if kept.as_bytes() != text.as_slice() {
            out.push(Found {
                rel: rel.join("config"),
                kept: Some(kept.into_bytes()),
            });
        }
    }
    let Ok(hooks) = open_dir(git, "hooks") else {
        return;
    };
    let Ok(entries) = rustix::fs::Dir::read_from(&hooks) else {
        return;
    };
    for entry in entries.flatten() {
        let Ok(name) = entry.file_name().to_str() else {
            continue;
        };
        if name == "." || name == ".." || name.ends_with(".sample") {
            continue;
        }
        if changed_since(&hooks, name, since) {
            out.push(Found {
                rel: rel.join("hooks").join(name),
                kept: None,
            });
        }
    }
}

/// The keys `git init` and `git clone` write, which run nothing.
fn kept_key(section: &str, subsection: bool, key: &str) -> bool {
    match (section, subsection) {
        ("core", false) => matches!(
            key,
            "repositoryformatversion"
                | "filemode"
                | "bare"
                | "logallrefupdates"
                | "ignorecase"
                | "precomposeunicode"
        ),
        ("remote", true) => matches!(key, "url" | "fetch"),
        ("branch", true) => matches!(key, "remote" | "merge"),
        _ => false,
    }
}

/// `text`, a git config, with only the keys [`kept_key`] allows: the same text where it
/// sets nothing else. A section left with no key is dropped.
pub(crate) fn kept_keys(text: &str) -> String {
    let mut out = String::new();
    let mut header: Option<&str> = None;
    let mut header_written = false;
    let mut section = String::new();
    let mut subsection = false;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim();
        if trimmed.starts_with('[') {
            let inner = trimmed.trim_start_matches('[');
            let name = inner.split([']', ' ', '"', '.']).next().unwrap_or_default();
            section = name.to_ascii_lowercase();
            subsection =
                inner.contains('"') || inner.split(']').next().unwrap_or_default().contains('.');
            header = Some(line);
            header_written = false;
            continue;
        }
        if trimmed.is_empty() || trimmed.starts_with('#') || trimmed.starts_with(';') {
            continue;
        }
        let key = trimmed
            .split(['=', ' ', '\t'])
            .next()
            .unwrap_or_default()
            .to_ascii_lowercase();
        if !kept_key(&section, subsection, &key) {
            continue;
        }
        if !header_written && let Some(h) = header {
            out.push_str(h);
            header_written = true;
        }
        out.push_str(line);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clone_s_config_keeps_every_key() {
        let clone = "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\
                     \tlogallrefupdates = true\n[remote \"origin\"]\n\turl = https://example.com/x.git\n\
                     \tfetch = +refs/heads/*:refs/remotes/origin/*\n[branch \"main\"]\n\
                     \tremote = origin\n\tmerge = refs/heads/main\n";
        assert_eq!(kept_keys(clone), clone);
    }

    #[test]
    fn a_key_that_runs_a_program_is_left_out() {
        let planted = "[core]\n\trepositoryformatversion = 0\n\tfsmonitor = ./evil.sh\n\
                       [alias]\n\tst = !sh -c evil\n[remote \"o\"]\n\turl = x\n\tuploadpack = evil\n";
        assert_eq!(
            kept_keys(planted),
            "[core]\n\trepositoryformatversion = 0\n[remote \"o\"]\n\turl = x\n"
        );
    }
}
