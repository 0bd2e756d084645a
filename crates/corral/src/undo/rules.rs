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
use std::path::{Path, PathBuf};

use ignore::gitignore::{Gitignore, GitignoreBuilder};

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
}

impl Rules {
    pub(crate) fn new(root: &Path) -> Rules {
        let git = root.join(".git").exists();
        let exclude = git
            .then(|| matcher(root, &root.join(".git/info/exclude")))
            .flatten();
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
        }
    }

    /// Leave out `own` (corral's files: the trace, its captures, the undo store), before
    /// any rule is asked.
    pub(crate) fn leave_out(&mut self, own: &[PathBuf]) {
        self.own = own.to_vec();
    }

    /// Read `dir`'s `.gitignore` unless it was read already this run.
    pub(crate) fn enter(&mut self, dir: &Path) {
        if !self.dirs.contains_key(dir) {
            let found = matcher(dir, &dir.join(".gitignore"));
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

fn matcher(dir: &Path, file: &Path) -> Option<Gitignore> {
    if !file.is_file() {
        return None;
    }
    let mut b = GitignoreBuilder::new(dir);
    b.add(file);
    b.build().ok().filter(|m| !m.is_empty())
}
