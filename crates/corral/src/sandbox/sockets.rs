//! The host's Unix sockets a box must not reach by path.
//!
//! A box may open Unix sockets (a Python `multiprocessing` pool, `asyncio`, a test
//! server on a socket in the workspace), where the host's are out of its reach. Most of
//! them live in `/tmp` and the user's runtime directory, which a box covers with
//! directories of its own (see [`corral_sys::box_dirs`]). The rest are looked for: every
//! socket file under `/run` (a container engine's, the system bus, snapd, systemd's own),
//! and a list of known places elsewhere (LXD's, Docker Desktop's, the agent
//! `SSH_AUTH_SOCK` names, the session bus `DBUS_SESSION_BUS_ADDRESS` names). Each is
//! hidden as a read deny is, so `connect(2)` meets no socket there. Each call looks
//! again where a directory the last look read changed since ([`Scan::current`]): a
//! container engine started after the run opened is hidden from the next call.

use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// Socket files outside `/run`, `/tmp` and the runtime directory that hand out a root
/// shell or a person's keys; `~/` is the home.
const KNOWN: &[&str] = &[
    "/var/lib/lxd/unix.socket",
    "/var/snap/lxd/common/lxd/unix.socket",
    "~/.docker/run/docker.sock",
    "~/.docker/desktop/docker.sock",
    "~/.colima/default/docker.sock",
    "~/.rd/docker.sock",
    "~/.local/share/containers/podman/machine/podman.sock",
];

/// How deep below `/run`, and how many entries at most, a look goes.
const DEPTH: usize = 6;
const ENTRIES: usize = 20_000;

/// The socket files a run's boxes must not reach, kept up to date: looked for again when
/// a directory the last look read (or one a known place is in) changed.
#[derive(Debug, Default)]
pub(crate) struct Scan {
    /// Below these the box has directories of its own: not looked in.
    skip: Vec<PathBuf>,
    /// Each directory the last look read, with its modification time then (a file made
    /// or removed in it changes it).
    seen: Vec<(PathBuf, Option<SystemTime>)>,
    found: Vec<PathBuf>,
}

impl Scan {
    /// Look now, leaving out what lies below `skip`.
    pub(crate) fn new(skip: Vec<PathBuf>) -> Scan {
        let mut scan = Scan {
            skip,
            ..Scan::default()
        };
        scan.look();
        scan
    }

    /// The socket files to hide, looked for again where anything changed since.
    pub(crate) fn current(&mut self) -> &[PathBuf] {
        if self.seen.iter().any(|(dir, then)| modified(dir) != *then) {
            self.look();
        }
        &self.found
    }

    fn look(&mut self) {
        let mut seen = Vec::new();
        self.found = to_hide(&self.skip, &mut seen);
        seen.sort();
        seen.dedup();
        self.seen = seen
            .into_iter()
            .map(|dir| {
                let then = modified(&dir);
                (dir, then)
            })
            .collect();
    }
}

fn modified(dir: &Path) -> Option<SystemTime> {
    std::fs::symlink_metadata(dir)
        .and_then(|m| m.modified())
        .ok()
}

/// The socket files to hide from a run's boxes: those under `/run` (but below `skip`,
/// which the box covers anyway), the known places (`~/` is `$HOME`), and the agents the
/// environment names. Every directory read, and the one each known place is in, goes to
/// `seen`.
fn to_hide(skip: &[PathBuf], seen: &mut Vec<PathBuf>) -> Vec<PathBuf> {
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from);
    let mut found = Vec::new();
    let mut budget = ENTRIES;
    let mut walk = Walk {
        skip,
        budget: &mut budget,
        found: &mut found,
        seen,
    };
    walk.dir(Path::new("/run"), DEPTH);
    // Where `/var/run` is a directory of its own, not the usual link to `/run`.
    if std::fs::symlink_metadata("/var/run").is_ok_and(|m| m.is_dir()) {
        walk.dir(Path::new("/var/run"), DEPTH);
    }
    let mut named: Vec<PathBuf> = KNOWN
        .iter()
        .filter_map(|known| match known.strip_prefix("~/") {
            Some(rest) => home.as_ref().map(|h| h.join(rest)),
            None => Some(PathBuf::from(known)),
        })
        .collect();
    named.extend(std::env::var_os("SSH_AUTH_SOCK").map(PathBuf::from));
    named.extend(
        std::env::var("DBUS_SESSION_BUS_ADDRESS")
            .ok()
            .as_deref()
            .and_then(session_bus_path),
    );
    named.retain(|p| p.is_absolute() && !skip.iter().any(|s| p.starts_with(s)));
    seen.extend(
        named
            .iter()
            .filter_map(|p| p.parent().map(Path::to_path_buf)),
    );
    found.extend(named);
    let mut sockets: Vec<PathBuf> = found
        .into_iter()
        .filter(|p| std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_socket()))
        .collect();
    sockets.sort();
    sockets.dedup();
    sockets
}

/// The path of a `unix:path=…` bus address (the first such part).
fn session_bus_path(address: &str) -> Option<PathBuf> {
    address.split(';').find_map(|a| {
        let rest = a.strip_prefix("unix:")?;
        rest.split(',')
            .find_map(|kv| kv.strip_prefix("path="))
            .map(PathBuf::from)
    })
}

/// A look for socket files, bounded in depth and in entries read.
struct Walk<'a> {
    skip: &'a [PathBuf],
    budget: &'a mut usize,
    found: &'a mut Vec<PathBuf>,
    seen: &'a mut Vec<PathBuf>,
}

impl Walk<'_> {
    fn dir(&mut self, dir: &Path, depth: usize) {
        if self.skip.iter().any(|s| dir.starts_with(s)) {
            return;
        }
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        self.seen.push(dir.to_path_buf());
        for entry in entries.flatten() {
            if *self.budget == 0 {
                return;
            }
            *self.budget -= 1;
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_socket() {
                self.found.push(entry.path());
            } else if kind.is_dir() && depth > 0 {
                self.dir(&entry.path(), depth - 1);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_bus_address_names_its_path() {
        assert_eq!(
            session_bus_path("unix:path=/run/user/1000/bus,guid=abc"),
            Some(PathBuf::from("/run/user/1000/bus"))
        );
        assert_eq!(
            session_bus_path("unix:abstract=/tmp/dbus-x;unix:path=/a/b"),
            Some(PathBuf::from("/a/b"))
        );
        assert_eq!(session_bus_path("tcp:host=localhost,port=1"), None);
    }

    #[test]
    fn a_socket_under_a_walked_directory_is_found_and_a_skipped_one_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let deep = dir.path().join("a/b");
        std::fs::create_dir_all(&deep).unwrap();
        let _one = std::os::unix::net::UnixListener::bind(deep.join("one.sock")).unwrap();
        let skipped = dir.path().join("skip");
        std::fs::create_dir_all(&skipped).unwrap();
        let _two = std::os::unix::net::UnixListener::bind(skipped.join("two.sock")).unwrap();
        std::fs::write(dir.path().join("plain"), "x").unwrap();
        let (mut found, mut seen, mut budget) = (Vec::new(), Vec::new(), ENTRIES);
        let skip = [skipped];
        Walk {
            skip: &skip,
            budget: &mut budget,
            found: &mut found,
            seen: &mut seen,
        }
        .dir(dir.path(), DEPTH);
        assert_eq!(found, [deep.join("one.sock")]);
        assert!(seen.contains(&deep), "{seen:?}");
    }

    #[test]
    fn a_scan_looks_again_only_where_a_directory_changed() {
        let dir = tempfile::tempdir().unwrap();
        let mut scan = Scan {
            seen: vec![(dir.path().to_path_buf(), modified(dir.path()))],
            ..Scan::default()
        };
        let _ = scan.current();
        assert_eq!(scan.seen.len(), 1, "nothing changed: no new look");
        std::fs::write(dir.path().join("new"), "x").unwrap();
        let _ = scan.current();
        assert!(
            !scan.seen.iter().any(|(d, _)| d == dir.path()),
            "looked again (at /run and the known places)"
        );
    }
}
