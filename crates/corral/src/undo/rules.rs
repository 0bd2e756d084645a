//! Which paths a record leaves out: the workspace's ignore rules, frozen as the run first
//! reads them, so a `.gitignore` a call plants cannot empty the next record.
//!
//! A git workspace (one with `.git` at its root) leaves out what git would: each
//! directory's `.gitignore` and `.git/info/exclude`, read with the `ignore` crate's
//! matcher, never by running git (its configuration can run programs). Anything else
//! leaves out [`DEFAULT_IGNORED`] too. The user's global excludes file is not read: it is
//! named in git's configuration, which corral does not read.
//!
//! corral's own files are always left out, whatever a `.gitignore` says: a trace kept in
//! the workspace (its database, its captures, the undo store itself) is not the
//! workspace's content, an undo must never put it back, and a record of the undo store
//! would record its own blobs again at every call.

use std::collections::HashMap;
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};

use ignore::gitignore::{Gitignore, GitignoreBuilder};

use super::walk::read_small;

/// Directories a workspace without `.git` leaves out, wherever they are: build output and
/// installed dependencies, which a build makes again.
pub const DEFAULT_IGNORED: &[&str] = &[
    "target",
    "node_modules",
    ".venv",
    "__pycache__",
    "dist",
    "build",
];

/// The rules of one run: each directory's matcher, read the first time the directory is
/// walked and kept for the rest of the run.
#[derive(Debug)]
pub(crate) struct Rules {
    root: PathBuf,
    /// `.git/info/exclude`, below every `.gitignore` in precedence.
    exclude: Option<Gitignore>,
    defaults: Option<Gitignore>,
    dirs: HashMap<PathBuf, Option<Gitignore>>,
    /// corral's own files and directories (absolute, canonical), left out first.
    own: Vec<PathBuf>,
    /// The root, open: each ignore file is read beneath it.
    root_fd: Option<std::os::fd::OwnedFd>,
}

impl Rules {
    pub(crate) fn new(root: &Path) -> Rules {
        // Read by descriptor beneath the root (no link followed, no FIFO waited on).
        let root_fd = rustix::fs::open(
            root,
            rustix::fs::OFlags::PATH | rustix::fs::OFlags::DIRECTORY | rustix::fs::OFlags::CLOEXEC,
            rustix::fs::Mode::empty(),
        )
        .ok();
        let git = root_fd.as_ref().is_some_and(|fd| {
            rustix::fs::statat(fd, ".git", rustix::fs::AtFlags::SYMLINK_NOFOLLOW).is_ok()
        });
        let exclude = root_fd
            .as_ref()
            .filter(|_| git)
            .and_then(|fd| read_small(fd.as_fd(), ".git/info/exclude"))
            .and_then(|text| matcher(root, &root.join(".git/info/exclude"), &text));
        let defaults = (!git).then(|| {
            let mut b = GitignoreBuilder::new(root);
            for name in DEFAULT_IGNORED {
                let _ = b.add_line(None, &format!("{name}/"));
            }
            b.build().ok()
        });
        Rules {
            root: root.to_path_buf(),
            exclude,
            defaults: defaults.flatten(),
            dirs: HashMap::new(),
            own: Vec::new(),
            root_fd,
        }
    }

    /// Leave out `own` (corral's files: the trace, its captures, the undo store), before
    /// any rule is asked.
    pub(crate) fn leave_out(&mut self, own: &[PathBuf]) {
        self.own = own.to_vec();
    }

    /// Read `dir`'s `.gitignore` beneath the root (no link on its path followed) unless
    /// it was read already this run.
    pub(crate) fn enter(&mut self, dir: &Path) {
        let Ok(rel) = dir.strip_prefix(&self.root) else {
            return;
        };
        let file = rel.join(".gitignore");
        let root = self.root_fd.as_ref().map(|fd| fd.as_fd());
        let text = root.and_then(|fd| read_small(fd, &file));
        self.enter_with(dir, || text);
    }

    /// Take `dir`'s `.gitignore` (what `read` gives: the walk reads it from the
    /// directory's descriptor) unless it was read already this run.
    pub(crate) fn enter_with(&mut self, dir: &Path, read: impl FnOnce() -> Option<Vec<u8>>) {
        if !self.dirs.contains_key(dir) {
            let found = read().and_then(|text| matcher(dir, &dir.join(".gitignore"), &text));
            self.dirs.insert(dir.to_path_buf(), found);
        }
    }

    /// Whether `path` (absolute, under the root) is left out. The deepest rule that
    /// speaks decides, as in git; a directory left out is not entered.
    pub(crate) fn ignored(&self, path: &Path, is_dir: bool) -> bool {
        if self.own.iter().any(|own| own == path) {
            return true;
        }
        let mut dir = path.parent();
        while let Some(d) = dir {
            if let Some(Some(m)) = self.dirs.get(d) {
                let found = m.matched(path, is_dir);
                if !found.is_none() {
                    return found.is_ignore();
                }
            }
            if d == self.root {
                break;
            }
            dir = d.parent();
        }
        [&self.exclude, &self.defaults]
            .into_iter()
            .flatten()
            .any(|m| m.matched(path, is_dir).is_ignore())
    }
}

/// The matcher of the ignore file `file` in `dir`, whose bytes are `text`.
fn matcher(dir: &Path, file: &Path, text: &[u8]) -> Option<Gitignore> {
    let mut b = GitignoreBuilder::new(dir);
    let text = String::from_utf8_lossy(text);
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    for line in text.lines() {
        let _ = b.add_line(Some(file.to_path_buf()), line);
    }
    b.build().ok().filter(|m| !m.is_empty())
}
