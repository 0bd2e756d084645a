//! Where the tests keep what a boxed command runs: a helper binary's copy, a venv with the
//! MCP clients. Not in the checkout, which may lie in a home (the box hides homes when the
//! tests give corral a `HOME` of their own) or under `/tmp` (the box has a `/tmp` of its
//! own), but under a scratch root that the box shows and that only the uid running the
//! tests can write: `/var/tmp/corral-tests-UID` (`CORRAL_TEST_SCRATCH` names another base
//! than `/var/tmp`), mode 0755 so that root's tests can run a copy as the unprivileged
//! user.
//!
//! `/var/tmp` is open to every local user, so nothing found there is taken on its name: a
//! copy is used only when it and every directory up to the scratch root are owned by this
//! uid or by root and writable by neither group nor others ([`trusted`]). Another user who
//! made the scratch root's name first gets a fresh root beside it, never a say. The root
//! pass never runs what an ordinary user's pass made (its root is its own); an ordinary
//! user may run what root made, which no one else could have changed.

use std::hash::{Hash, Hasher};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The uid whose copies are trusted besides this process's own.
const ROOT: u32 = 0;

fn uid() -> u32 {
    rustix::process::geteuid().as_raw()
}

fn base() -> PathBuf {
    std::env::var_os("CORRAL_TEST_SCRATCH")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/var/tmp"))
}

/// This uid's scratch root, made on first use.
pub fn scratch_root() -> &'static Path {
    static ROOT_DIR: OnceLock<PathBuf> = OnceLock::new();
    ROOT_DIR.get_or_init(|| root_in(&base(), uid()))
}

/// `base/corral-tests-UID` when it is this uid's own (made now, or made earlier and still
/// held only by it); otherwise a fresh directory beside it.
pub fn root_in(base: &Path, uid: u32) -> PathBuf {
    let named = base.join(format!("corral-tests-{uid}"));
    if made_dir(&named) || owned_dir(&named, uid) {
        return named;
    }
    eprintln!(
        "note: {} is not held by uid {uid} alone; the tests' helpers go to a fresh directory",
        named.display()
    );
    loop {
        let fresh = base.join(format!("corral-tests-{uid}-{:016x}", random()));
        if made_dir(&fresh) {
            return fresh;
        }
    }
}

/// Made `dir` just now, 0755 whatever the umask.
fn made_dir(dir: &Path) -> bool {
    if std::fs::DirBuilder::new().mode(0o755).create(dir).is_err() {
        return false;
    }
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755))
        .expect("setting the mode of a directory the tests made");
    true
}

/// `dir` is a directory (not a link to one) that `uid` owns and no one else may write.
fn owned_dir(dir: &Path, uid: u32) -> bool {
    std::fs::symlink_metadata(dir)
        .is_ok_and(|m| m.is_dir() && m.uid() == uid && m.mode() & 0o022 == 0)
}

/// `path` and every directory above it up to `root` (both included) are neither links nor
/// writable by group or others, and each is owned by this uid or by root. `path` must lie
/// under `root`.
pub fn trusted(path: &Path, root: &Path) -> bool {
    if !path.starts_with(root) {
        return false;
    }
    let me = uid();
    let mut at = Some(path);
    while let Some(p) = at {
        let Ok(meta) = std::fs::symlink_metadata(p) else {
            return false;
        };
        let owner_ok = meta.uid() == me || meta.uid() == ROOT;
        if meta.file_type().is_symlink() || !owner_ok || meta.mode() & 0o022 != 0 {
            return false;
        }
        if p == root {
            return true;
        }
        at = p.parent();
    }
    false
}

/// A program's copy under the scratch root, where every boxed call sees it: made on first
/// use and named by the build it copies, so that a rebuilt file gets a copy of its own.
/// A copy found at that name that is not [`trusted`] is never run; a fresh one is made
/// beside it.
pub fn runnable_copy(path: &Path) -> PathBuf {
    runnable_copy_in(scratch_root(), path)
}

/// [`runnable_copy`] under a given scratch root.
pub fn runnable_copy_in(root: &Path, path: &Path) -> PathBuf {
    let meta = std::fs::metadata(path).expect("the test helper was built");
    let name = path.file_name().expect("a program has a name");
    let mut build = std::collections::hash_map::DefaultHasher::new();
    (path, meta.len(), meta.mtime(), meta.mtime_nsec()).hash(&mut build);
    let named = root.join("bin").join(format!("{:016x}", build.finish()));
    let copy = named.join(name);
    if trusted(&copy, root) {
        return copy;
    }
    let dir = if copy.exists() || named.exists() && !trusted(&named, root) {
        // Something this uid did not make is there: leave it, and run none of it.
        fresh_dir(&named)
    } else {
        make_dirs(root, &named);
        named
    };
    let copy = dir.join(name);
    // Copied beside, then renamed into place: a concurrent test sees no copy or the whole.
    let partial = dir.join(format!(".{}.{:016x}", std::process::id(), random()));
    std::fs::copy(path, &partial).expect("copying a test helper to the scratch root");
    std::fs::set_permissions(&partial, std::fs::Permissions::from_mode(0o755))
        .expect("making the helper's copy runnable");
    std::fs::rename(&partial, &copy).expect("putting the helper's copy in place");
    assert!(trusted(&copy, root), "the copy at {copy:?} is this uid's");
    copy
}

/// A directory beside `dir` that no one else has made.
fn fresh_dir(dir: &Path) -> PathBuf {
    loop {
        let fresh = dir.with_file_name(format!(
            "{}-{:016x}",
            dir.file_name().unwrap_or_default().to_string_lossy(),
            random()
        ));
        if made_dir(&fresh) {
            return fresh;
        }
    }
}

/// `dir` and the directories between it and `root`, each 0755 when made here.
fn make_dirs(root: &Path, dir: &Path) {
    let below = dir.strip_prefix(root).expect("a directory under the root");
    let mut at = root.to_path_buf();
    for part in below {
        at.push(part);
        if !made_dir(&at) {
            assert!(
                owned_dir(&at, uid()),
                "{} is not this uid's own",
                at.display()
            );
        }
    }
}

/// A directory of the tests' own named `name`, made once by `make` and used while
/// `key` (what it was made from: the packages a venv holds, say) stays the same. This
/// uid's copy is taken first; for an ordinary user, root's next, where it is [`trusted`];
/// otherwise it is made again under this uid's root, one maker at a time (a lock file
/// beside it). `make` fills the directory it is given, which exists and is empty, and says
/// whether it could; `None` where it could not (it is made again next time).
pub fn made_once(name: &str, key: &str, make: impl FnOnce(&Path) -> bool) -> Option<PathBuf> {
    let mine = scratch_root().join(name);
    let ready = |dir: &Path, root: &Path| {
        let marker = dir.join(".made-from");
        trusted(&marker, root) && std::fs::read_to_string(&marker).is_ok_and(|k| k == key)
    };
    if ready(&mine, scratch_root()) {
        return Some(mine);
    }
    if uid() != ROOT {
        let roots = root_in_if_exists(&base(), ROOT);
        if let Some(roots) = roots {
            let theirs = roots.join(name);
            if ready(&theirs, &roots) {
                return Some(theirs);
            }
        }
    }
    let lock = std::fs::File::create(scratch_root().join(format!(".{name}.lock")))
        .expect("making the fixture's lock file");
    rustix::fs::flock(&lock, rustix::fs::FlockOperation::LockExclusive)
        .expect("locking the fixture");
    if ready(&mine, scratch_root()) {
        return Some(mine);
    }
    if mine.exists() {
        std::fs::remove_dir_all(&mine).expect("removing a stale fixture");
    }
    make_dirs(scratch_root(), &mine);
    if !make(&mine) {
        return None;
    }
    std::fs::write(mine.join(".made-from"), key).expect("marking the fixture made");
    Some(mine)
}

/// Root's scratch root, where it exists and is root's alone.
fn root_in_if_exists(base: &Path, uid: u32) -> Option<PathBuf> {
    let named = base.join(format!("corral-tests-{uid}"));
    owned_dir(&named, uid).then_some(named)
}

fn random() -> u64 {
    use std::hash::BuildHasher;
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64),
    );
    h.write_u32(std::process::id());
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> tempfile::TempDir {
        tempfile::tempdir().unwrap()
    }

    fn helper(dir: &Path) -> PathBuf {
        let bin = dir.join("helper");
        std::fs::write(&bin, "#!/bin/sh\necho mine\n").unwrap();
        bin
    }

    #[test]
    fn the_root_is_this_uids_and_closed_to_others() {
        let base = base();
        let root = root_in(base.path(), uid());
        assert_eq!(root, base.path().join(format!("corral-tests-{}", uid())));
        let meta = std::fs::metadata(&root).unwrap();
        assert_eq!(meta.mode() & 0o777, 0o755);
        // Found again, not made anew.
        assert_eq!(root_in(base.path(), uid()), root);
    }

    #[test]
    fn a_root_another_made_open_is_not_used() {
        let base = base();
        let squatted = base.path().join(format!("corral-tests-{}", uid()));
        std::fs::create_dir(&squatted).unwrap();
        std::fs::set_permissions(&squatted, std::fs::Permissions::from_mode(0o777)).unwrap();
        let root = root_in(base.path(), uid());
        assert_ne!(root, squatted);
        assert!(trusted(&root, &root));
    }

    #[test]
    fn a_copy_below_a_writable_directory_is_not_run() {
        let base = base();
        let root = root_in(base.path(), uid());
        let bin = helper(base.path());
        let copy = runnable_copy_in(&root, &bin);
        assert!(trusted(&copy, &root));
        // Someone opens the copy's directory and plants their own program at its name.
        let dir = copy.parent().unwrap();
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o777)).unwrap();
        std::fs::write(&copy, "#!/bin/sh\necho planted\n").unwrap();
        let again = runnable_copy_in(&root, &bin);
        assert_ne!(again, copy);
        assert!(trusted(&again, &root));
        assert_eq!(
            std::fs::read_to_string(&again).unwrap(),
            "#!/bin/sh\necho mine\n"
        );
    }

    #[test]
    fn a_copy_another_uid_owns_is_not_run() {
        if uid() != ROOT {
            eprintln!("skipped: only root can give a file to another uid");
            return;
        }
        let base = base();
        let root = root_in(base.path(), uid());
        let bin = helper(base.path());
        let copy = runnable_copy_in(&root, &bin);
        // Planted at the predictable name, owned by `nobody`.
        std::fs::write(&copy, "#!/bin/sh\necho planted\n").unwrap();
        std::os::unix::fs::chown(&copy, Some(65534), Some(65534)).unwrap();
        let again = runnable_copy_in(&root, &bin);
        assert_ne!(again, copy);
        assert_eq!(std::fs::metadata(&again).unwrap().uid(), ROOT);
        assert_eq!(
            std::fs::read_to_string(&again).unwrap(),
            "#!/bin/sh\necho mine\n"
        );
    }

    #[test]
    fn only_paths_under_the_root_are_trusted() {
        let base = base();
        let root = root_in(base.path(), uid());
        assert!(!trusted(base.path(), &root));
        assert!(!trusted(Path::new("/etc/passwd"), &root));
    }
}
