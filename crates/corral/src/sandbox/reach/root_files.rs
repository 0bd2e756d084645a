//! Root's files outside the home: what only root may read, hidden from a root box by
//! their mode.
//!
//! A box with no capabilities still runs as root and owns root's files, so a file only
//! root may read (a TLS key under `/etc/ssl/private`, an SSH host key, a service's
//! credentials under `/var/lib`) is one a root box reads. The rule is the file's own
//! mode, not a list of names: at the run's open a walk of [`ROOTS`] finds
//!
//! 1. each directory others may not enter (no `o+x`): hidden whole, one mount, and the
//!    walk goes no deeper there (thousands of files inside still cost one mount);
//! 2. each file others may not read (no `o+r`): hidden, one mount each;
//! 3. neither the workspace nor what lies below it: the box keeps those (`super::sets`
//!    leaves out the writable roots, which it learns later).
//!
//! The walk stays outside the system's program directories (`/usr`, `/bin`, `/lib`…),
//! which hold no root-only secrets a build may not read, by taking only [`ROOTS`]. It is
//! bounded twice: a directory with more than [`PER_DIR`] paths to hide is hidden whole
//! instead, and past [`MOST`] mounts or [`MOST_VISITED`] entries the walk stops. Each is
//! reported. An ordinary user cannot read those files anyway, so the walk runs only when
//! corral runs as root.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// Where root's files are looked for: configuration, services' state, sites, add-on
/// software. Not `/root` (covered as a home, `super::home::other_home`) nor `/home`
/// (other users' homes are read denies, `super::reach::outside_the_home`).
pub(crate) const ROOTS: &[&str] = &["/etc", "/var/lib", "/srv", "/opt"];

/// More paths to hide than this in one directory: the directory is hidden instead.
pub(crate) const PER_DIR: usize = 32;

/// The most mounts the walk asks for: each adds to every call's namespace copy.
pub(crate) const MOST: usize = 256;

/// The most entries the walk looks at.
pub(crate) const MOST_VISITED: usize = 100_000;

/// What the walk found (see the module docs).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Found {
    /// The paths to hide, canonical, sorted.
    pub paths: Vec<PathBuf>,
    /// Directories hidden whole because they held more than [`PER_DIR`] paths to hide.
    pub collapsed: Vec<PathBuf>,
    /// Whether the walk stopped at a bound ([`MOST`], [`MOST_VISITED`]) before the end.
    pub stopped: bool,
}

/// The walk, when corral runs as root; nothing otherwise.
pub(crate) fn found(workspace: &Path) -> Found {
    if !rustix::process::geteuid().is_root() {
        return Found::default();
    }
    walk(ROOTS.iter().map(Path::new), workspace)
}

/// The walk of `roots`, skipping `skip` (the workspace).
pub(crate) fn walk<'a>(roots: impl Iterator<Item = &'a Path>, skip: &Path) -> Found {
    let mut walk = Walk {
        skip,
        found: Found::default(),
        visited: 0,
    };
    for root in roots {
        // A root that is a link (or holds the workspace) is walked as it is found.
        let Ok(root) = root.canonicalize() else {
            continue;
        };
        if skip.starts_with(&root) && skip != root {
            // The workspace lies below: walk, skipping it.
        } else if root.starts_with(skip) && !skip.as_os_str().is_empty() {
            continue;
        }
        let Ok(meta) = std::fs::symlink_metadata(&root) else {
            continue;
        };
        if !meta.is_dir() {
            continue;
        }
        let mut below = Vec::new();
        walk.dir(&root, &mut below);
        walk.found.paths.extend(below);
    }
    walk.found.paths.sort();
    walk.found.paths.dedup();
    walk.found
}

struct Walk<'a> {
    skip: &'a Path,
    found: Found,
    visited: usize,
}

impl Walk<'_> {
    /// Whether a bound is reached.
    fn full(&self) -> bool {
        self.visited >= MOST_VISITED || self.found.paths.len() >= MOST
    }

    /// Walk `dir` (entered: others may enter it), adding what to hide in it to `out`.
    fn dir(&mut self, dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        let mut here = Vec::new();
        for entry in entries.flatten() {
            if self.full() {
                self.found.stopped = true;
                break;
            }
            self.visited += 1;
            let path = entry.path();
            if path == self.skip {
                continue;
            }
            let Ok(meta) = entry.metadata() else {
                continue;
            };
            let mode = meta.mode();
            if meta.is_dir() {
                if self.skip.starts_with(&path) {
                    // Holds the workspace: walked, never hidden whole.
                    self.dir(&path, &mut here);
                } else if mode & 0o001 == 0 {
                    here.push(path);
                } else {
                    self.dir(&path, &mut here);
                }
            } else if meta.is_file() && mode & 0o004 == 0 {
                here.push(path);
            }
        }
        if here.len() > PER_DIR && !self.skip.starts_with(dir) && !is_root(dir) {
            self.found.collapsed.push(dir.to_path_buf());
            out.push(dir.to_path_buf());
        } else {
            out.extend(here);
        }
    }
}

/// Whether `dir` is one of [`ROOTS`] (never hidden whole: the host needs them).
fn is_root(dir: &Path) -> bool {
    ROOTS.iter().any(|r| Path::new(r) == dir)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn mode(path: &Path, mode: u32) {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    #[test]
    fn files_others_cannot_read_and_directories_they_cannot_enter_are_found() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("ssl/private")).unwrap();
        std::fs::write(root.join("ssl/private/host.key"), "KEY").unwrap();
        mode(&root.join("ssl/private"), 0o700);
        std::fs::write(root.join("ssl/cert.pem"), "CERT").unwrap();
        std::fs::write(root.join("shadow"), "S").unwrap();
        mode(&root.join("shadow"), 0o600);
        std::fs::create_dir_all(root.join("ws")).unwrap();
        std::fs::write(root.join("ws/own"), "W").unwrap();
        mode(&root.join("ws/own"), 0o600);
        let found = walk(std::iter::once(root.as_path()), &root.join("ws"));
        assert_eq!(
            found.paths,
            [root.join("shadow"), root.join("ssl/private")],
            "{found:?}"
        );
        assert!(found.collapsed.is_empty() && !found.stopped);
    }

    #[test]
    fn a_directory_with_more_than_the_bound_is_hidden_whole() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().canonicalize().unwrap();
        let many = root.join("many");
        std::fs::create_dir_all(&many).unwrap();
        for n in 0..=PER_DIR {
            let f = many.join(format!("k{n}"));
            std::fs::write(&f, "K").unwrap();
            mode(&f, 0o600);
        }
        std::fs::write(many.join("open"), "O").unwrap();
        let found = walk(std::iter::once(root.as_path()), Path::new("/nowhere"));
        assert_eq!(found.paths, std::slice::from_ref(&many));
        assert_eq!(found.collapsed, [many]);
    }
}
