//! The host's Unix sockets a box must not reach by path.
//!
//! A box may open Unix sockets (a Python `multiprocessing` pool, `asyncio`, a test
//! server on a socket in the workspace), where the host's are out of its reach. Most of
//! them live in `/tmp` and the user's runtime directory, which a box covers with
//! directories of its own (see [`corral_sys::box_dirs`]). The rest are looked for:
//!
//! 1. every socket the host's network namespace has bound to a path, as the kernel lists
//!    them (`/proc/net/unix`), wherever it lies: `/var/lib/DIR/svc.sock`, a directory
//!    beside the workspace, a home. Landlock before ABI 9 does not confine connecting to a
//!    pathname socket (this kernel line, 6.18, has ABI 7), and a walk of the host's
//!    filesystems for socket files costs seconds (450,000 entries, 7 s, on a small host)
//!    where this list costs a read of one file;
//! 2. every socket file under `/run` (a container engine's, the system bus, snapd,
//!    systemd's own): a listener in another network namespace (a container's) is not in
//!    the host's list, but its socket file is usually here;
//! 3. a list of known places elsewhere (LXD's, Docker Desktop's, the agent
//!    `SSH_AUTH_SOCK` names, the session bus `DBUS_SESSION_BUS_ADDRESS` names), for the
//!    same reason.
//!
//! Each is hidden as a read deny is, so `connect(2)` meets no socket there. Each call
//! looks again where a directory the last look read changed since, or the kernel lists a
//! socket path the last look did not ([`Scan::current`]): a container engine or a service
//! started after the run opened is hidden from the next call.
//!
//! What stays reachable: a socket below the box's own directories and the workspace
//! (`skip`: the box's own work, a test server on a socket there, is what it may reach),
//! a socket bound with a relative path, and one a listener in another network namespace
//! holds outside `/run` and the known places.

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
    /// The socket paths the kernel listed at the last look.
    bound: Vec<PathBuf>,
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
        self.current_with(bound_paths())
    }

    /// [`Self::current`], the kernel listing `bound` now.
    fn current_with(&mut self, bound: Vec<PathBuf>) -> &[PathBuf] {
        if bound != self.bound || self.seen.iter().any(|(dir, then)| modified(dir) != *then) {
            self.look_with(bound);
        }
        &self.found
    }

    fn look(&mut self) {
        self.look_with(bound_paths());
    }

    fn look_with(&mut self, bound: Vec<PathBuf>) {
        let mut seen = Vec::new();
        self.found = to_hide(&self.skip, &bound, &mut seen);
        self.bound = bound;
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

/// The socket files to hide from a run's boxes: those the kernel lists as `bound`, those
/// under `/run`, the known places (`~/` is `$HOME`), and the agents the environment names,
/// but none below `skip`, which the box covers anyway. Every directory read, and the one
/// each known place is in, goes to `seen`.
fn to_hide(skip: &[PathBuf], bound: &[PathBuf], seen: &mut Vec<PathBuf>) -> Vec<PathBuf> {
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
    found.extend(
        bound
            .iter()
            .filter(|p| !skip.iter().any(|s| p.starts_with(s)))
            .cloned(),
    );
    let mut sockets: Vec<PathBuf> = found
        .into_iter()
        .filter(|p| std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_socket()))
        .collect();
    sockets.sort();
    sockets.dedup();
    sockets
}

/// The paths the host's network namespace has Unix sockets bound to, from the kernel's
/// table (`/proc/net/unix`: a listener's, and each connection it accepted, under the same
/// path), sorted and each once. Abstract names (`@…`, which Landlock's scope holds) and
/// relative paths (relative to a directory the table does not say) are left out.
fn bound_paths() -> Vec<PathBuf> {
    let table = std::fs::read("/proc/net/unix").unwrap_or_default();
    let mut paths = paths_in_table(&table);
    paths.sort();
    paths.dedup();
    paths
}

/// The absolute paths in a `/proc/net/unix` table: each line's eighth field and what
/// follows it (a path may hold spaces).
fn paths_in_table(table: &[u8]) -> Vec<PathBuf> {
    use std::os::unix::ffi::OsStrExt;
    table
        .split(|b| *b == b'\n')
        .skip(1)
        .filter_map(|line| {
            let mut rest = line;
            for _ in 0..7 {
                let start = rest.iter().position(|b| *b != b' ')?;
                let end = rest[start..].iter().position(|b| *b == b' ')? + start;
                rest = &rest[end..];
            }
            let path = rest.strip_prefix(b" ")?;
            path.starts_with(b"/")
                .then(|| PathBuf::from(std::ffi::OsStr::from_bytes(path)))
        })
        .collect()
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
    fn the_kernels_table_gives_the_bound_paths_spaces_and_all() {
        let table = b"Num       RefCount Protocol Flags    Type St Inode Path\n\
            0000000000000000: 00000002 00000000 00010000 0001 01 12345 /var/lib/x/svc.sock\n\
            0000000000000000: 00000003 00000000 00000000 0001 03   348\n\
            0000000000000000: 00000002 00000000 00010000 0001 01 12346 @abstract\n\
            0000000000000000: 00000002 00000000 00010000 0001 01 12347 rel.sock\n\
            0000000000000000: 00000002 00000000 00010000 0001 01 12348 /srv/a b.sock\n";
        assert_eq!(
            paths_in_table(table),
            [
                PathBuf::from("/var/lib/x/svc.sock"),
                PathBuf::from("/srv/a b.sock")
            ]
        );
    }

    #[test]
    fn a_listener_anywhere_is_found_by_the_kernels_table() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("deep/er/svc.sock");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let _l = std::os::unix::net::UnixListener::bind(&path).unwrap();
        assert!(bound_paths().contains(&path), "{:?}", bound_paths());
        let mut seen = Vec::new();
        assert!(to_hide(&[], &bound_paths(), &mut seen).contains(&path));
        let skip = [dir.path().to_path_buf()];
        assert!(!to_hide(&skip, &bound_paths(), &mut seen).contains(&path));
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
        let _ = scan.current_with(Vec::new());
        assert_eq!(scan.seen.len(), 1, "nothing changed: no new look");
        std::fs::write(dir.path().join("new"), "x").unwrap();
        let _ = scan.current_with(Vec::new());
        assert!(
            !scan.seen.iter().any(|(d, _)| d == dir.path()),
            "looked again (at /run and the known places)"
        );
    }
}
