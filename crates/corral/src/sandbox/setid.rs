//! Set-ID files are not left for the host.
//!
//! A set-user-ID file runs with its owner's rights for whoever starts it: in a root box,
//! `cp /bin/bash tool && chmod 4755 tool` needs no capability (the file is the box's own),
//! and every other user of the machine then gets a root shell from `./tool -p`. The box's
//! seccomp filter refuses every mode with `S_ISUID` or `S_ISGID` (`corral_sys::sandbox`,
//! `set_id_rules`), so where the filter holds, no call makes one and nothing here runs.
//! Where the box has none (a kernel without seccomp filters, an architecture corral builds
//! none for), the call's set-ID files are found after it, their bits cleared, and the
//! result names them in one `sandbox:` line. The steps, in [`Since::clear_after`]:
//!
//! 1. The workspace is walked by descriptor, as undo's walk is (`undo::walk`): each
//!    directory opened in its parent's descriptor `O_NOFOLLOW | O_DIRECTORY`, each entry
//!    `lstat`ed there, at most [`LIMIT`] entries (the undo record's budget).
//! 2. A regular file with either bit whose status changed at or after the call's start
//!    (its ctime, less a second for the coarse clock filesystems stamp with) is the
//!    call's: the person's own set-ID files are older, and keep their bits.
//! 3. Each is opened `O_PATH | O_NOFOLLOW` in its directory's descriptor, taken only if
//!    `fstat` finds the file the listing found (same device and inode) still set-ID, and
//!    changed through that descriptor (`/proc/self/fd/N`, which names the open file
//!    itself, so a path swapped in meanwhile is never reached).

use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rustix::fs::{AtFlags, FileType, Mode, OFlags, Stat};

use super::{Layer, Level, SandboxConfig, SandboxMode};
use crate::outcome::Outcome;

/// At most this many entries are looked at after a call: the undo record's budget.
const LIMIT: usize = crate::config::DEFAULT_UNDO_BUDGET.files;

/// The set-user-ID and set-group-ID bits.
const SET_ID: u32 = 0o6000;

/// How a directory is opened in its parent's descriptor: never through a link.
const DIR_FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::DIRECTORY)
    .union(OFlags::NOFOLLOW)
    .union(OFlags::CLOEXEC);

/// When a call started, as a file's ctime counts it, less a second: the kernel stamps
/// files with a clock that lags the one read here by up to a tick.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Since(Duration);

/// A set-ID file the call left, and what became of it.
#[derive(Debug)]
struct Found {
    path: PathBuf,
    mode: u32,
    cleared: Result<(), rustix::io::Errno>,
}

impl Since {
    pub(crate) fn now() -> Since {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        Since(now.saturating_sub(Duration::from_secs(1)))
    }

    /// After a `workspace-write` call whose box could not refuse set-ID modes, clear the
    /// set-ID bits of the files it left in `workspace`, and say so on `outcome`.
    pub(crate) fn clear_after(
        self,
        outcome: &mut Outcome,
        config: &SandboxConfig,
        workspace: &Path,
    ) {
        if config.mode != SandboxMode::WorkspaceWrite || refused(outcome) {
            return;
        }
        let (found, complete) = self.clear_in(workspace);
        if let Some(line) = line(&found, complete) {
            outcome.observation = outcome
                .observation
                .replacen('\n', &format!("\n{line}\n"), 1);
        }
    }

    /// Steps 1 to 3 in `root`; with whether the walk saw every entry.
    fn clear_in(self, root: &Path) -> (Vec<Found>, bool) {
        let Ok(fd) = rustix::fs::open(root, DIR_FLAGS, Mode::empty()) else {
            return (Vec::new(), true);
        };
        let mut sweep = Sweep {
            since: self,
            found: Vec::new(),
            seen: 0,
        };
        let complete = sweep.dir(&fd, Path::new(""));
        (sweep.found, complete)
    }

    /// Whether the file's status changed since the call started.
    fn by_the_call(self, st: &Stat) -> bool {
        let ctime = Duration::new(st.st_ctime.max(0) as u64, st.st_ctime_nsec as u32);
        ctime >= self.0
    }
}

/// One sweep's walk: what it found, and how many entries it looked at.
struct Sweep {
    since: Since,
    found: Vec<Found>,
    seen: usize,
}

impl Sweep {
    /// The directory open as `fd` (at `rel`) and every one below it, each open only while
    /// its own part is walked; `false` once past [`LIMIT`].
    fn dir(&mut self, fd: &OwnedFd, rel: &Path) -> bool {
        for (name, st) in entries(fd) {
            self.seen += 1;
            if self.seen > LIMIT {
                return false;
            }
            let path = rel.join(std::ffi::OsStr::from_bytes(&name));
            match FileType::from_raw_mode(st.st_mode) {
                FileType::Directory => {
                    let child = rustix::fs::openat(fd, &name[..], DIR_FLAGS, Mode::empty());
                    if let Ok(child) = child
                        && !self.dir(&child, &path)
                    {
                        return false;
                    }
                }
                FileType::RegularFile
                    if st.st_mode & SET_ID != 0 && self.since.by_the_call(&st) =>
                {
                    self.found.push(Found {
                        path,
                        mode: st.st_mode & 0o7777,
                        cleared: clear(fd, &name, &st),
                    });
                }
                _ => {}
            }
        }
        true
    }
}

/// Whether the box's seccomp filter refused set-ID modes (see `layers::seccomp`).
fn refused(outcome: &Outcome) -> bool {
    outcome.sandbox.as_ref().is_some_and(|report| {
        report
            .layers
            .iter()
            .any(|l| l.layer == Layer::Seccomp && l.level == Level::Full)
    })
}

/// The entries of the directory open as `fd` (`.` and `..` left out), each `lstat`ed in
/// it; an entry gone since the listing is left out.
fn entries(fd: &OwnedFd) -> Vec<(Vec<u8>, Stat)> {
    let Ok(mut listing) = rustix::fs::Dir::read_from(fd) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    while let Some(Ok(entry)) = listing.read() {
        let name = entry.file_name();
        if matches!(name.to_bytes(), b"." | b"..") {
            continue;
        }
        if let Ok(st) = rustix::fs::statat(fd, name, AtFlags::SYMLINK_NOFOLLOW) {
            out.push((name.to_bytes().to_vec(), st));
        }
    }
    out
}

/// Step 3: clear the set-ID bits of `name` in `dir`, if it is still the file `listed`.
fn clear(dir: &OwnedFd, name: &[u8], listed: &Stat) -> Result<(), rustix::io::Errno> {
    let flags = OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let fd = rustix::fs::openat(dir, name, flags, Mode::empty())?;
    let st = rustix::fs::fstat(&fd)?;
    let same = (st.st_dev, st.st_ino) == (listed.st_dev, listed.st_ino);
    if !same || FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
        // Moved or replaced since the listing: no longer the file it named.
        return Ok(());
    }
    if st.st_mode & SET_ID == 0 {
        return Ok(());
    }
    // fchmod(2) refuses an O_PATH descriptor; its /proc link is the open file itself.
    let by_fd = format!("/proc/self/fd/{}", fd.as_raw_fd());
    rustix::fs::chmod(by_fd.as_str(), Mode::from_raw_mode(st.st_mode & 0o1777))
}

/// The result's line, naming what was cleared and what could not be; `None` when the
/// call left no set-ID file.
fn line(found: &[Found], complete: bool) -> Option<String> {
    if found.is_empty() && complete {
        return None;
    }
    let shown = |f: &Found| format!("{} ({:o})", f.path.display(), f.mode);
    let cleared: Vec<String> = found
        .iter()
        .filter(|f| f.cleared.is_ok())
        .map(shown)
        .collect();
    let kept: Vec<String> = found
        .iter()
        .filter_map(|f| f.cleared.err().map(|e| format!("{}: {e}", shown(f))))
        .collect();
    let mut parts = Vec::new();
    if !cleared.is_empty() {
        parts.push(format!(
            "held back the set-ID bits the call gave {}: they are cleared, as a set-ID file \
             runs with its owner's rights for whoever starts it (this box could not refuse \
             them); a person who meant them sets them again",
            cleared.join(", ")
        ));
    }
    if !kept.is_empty() {
        parts.push(format!(
            "could not clear the set-ID bits the call gave {}; remove them before anyone runs \
             them",
            kept.join(", ")
        ));
    }
    if !complete {
        parts.push(format!(
            "only the workspace's first {LIMIT} entries were checked for set-ID files"
        ));
    }
    Some(format!("sandbox: {}", parts.join("; ")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn mode(path: &Path) -> u32 {
        std::fs::symlink_metadata(path)
            .unwrap()
            .permissions()
            .mode()
            & 0o7777
    }

    fn set_mode(path: &Path, mode: u32) {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    #[test]
    fn the_calls_set_id_files_are_cleared_and_named() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("sub/deeper")).unwrap();
        for name in ["tool", "sub/deeper/group", "plain"] {
            std::fs::write(root.join(name), "x").unwrap();
        }
        set_mode(&root.join("tool"), 0o4755);
        set_mode(&root.join("sub/deeper/group"), 0o2711);
        set_mode(&root.join("plain"), 0o755);
        // A setgid directory is left as it is: only files run.
        set_mode(&root.join("sub"), 0o2755);
        let (found, complete) = Since::now().clear_in(root);
        assert!(complete);
        assert_eq!(mode(&root.join("tool")), 0o755);
        assert_eq!(mode(&root.join("sub/deeper/group")), 0o711);
        assert_eq!(mode(&root.join("plain")), 0o755);
        assert_eq!(mode(&root.join("sub")), 0o2755);
        let line = line(&found, complete).unwrap();
        assert!(
            line.starts_with("sandbox: held back the set-ID bits"),
            "{line}"
        );
        assert!(line.contains("tool (4755)"), "{line}");
        assert!(line.contains("sub/deeper/group (2711)"), "{line}");
        assert!(!line.contains("plain"), "{line}");
    }

    #[test]
    fn the_persons_older_set_id_files_and_links_are_left() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(root.join("theirs"), "x").unwrap();
        set_mode(&root.join("theirs"), 0o4755);
        std::fs::write(outside.path().join("target"), "x").unwrap();
        set_mode(&outside.path().join("target"), 0o4755);
        std::os::unix::fs::symlink(outside.path().join("target"), root.join("link")).unwrap();
        std::os::unix::fs::symlink(outside.path(), root.join("dirlink")).unwrap();
        // The call starts after the person's file was made (past the second's margin).
        let since = Since(Since::now().0 + Duration::from_secs(2));
        let (found, complete) = since.clear_in(root);
        assert!(found.is_empty() && complete, "{found:?}");
        assert_eq!(line(&found, complete), None);
        assert_eq!(mode(&root.join("theirs")), 0o4755);
        // Links are never followed, even for a file the call made.
        let (found, _) = Since::now().clear_in(root);
        assert_eq!(mode(&outside.path().join("target")), 0o4755);
        assert_eq!(found.len(), 1, "{found:?}");
    }
}
