//! A call's private temporary directory (its `TMPDIR`): made fresh for each call inside
//! one base directory of the process's (`corral-sandbox-SALT` in the system's temp
//! directory), which a box whose host is read-only keeps as one writable mount, so the
//! run's shared mounts serve every call. Neither name says anything of corral's pid.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::{Error, Result};

/// Make a call's private temporary directory (mode 0700) in the process's base.
pub(crate) fn private_temp() -> Result<PathBuf> {
    use std::hash::{BuildHasher, RandomState};
    use std::os::unix::fs::DirBuilderExt;
    static N: AtomicU64 = AtomicU64::new(0);
    // A name that says nothing of corral's pid: a command reads its `TMPDIR`, and a pid
    // is where a look at corral's own process would start. RandomState is seeded per
    // process from the OS.
    let salt = RandomState::new().hash_one((std::process::id(), N.fetch_add(1, Ordering::Relaxed)));
    let dir = temp_base().join(format!("{salt:016x}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&dir)
        .map_err(|e| Error::io(format!("creating {}", dir.display()), e))?;
    Ok(dir)
}

/// The directory this process's calls make their private temporary directories in
/// (`corral-sandbox-SALT` in the system's temp directory, made with the first): one
/// writable mount for all of them in a box whose host is read-only, so the run's shared
/// mounts serve every call.
pub(crate) fn temp_base() -> PathBuf {
    use std::hash::{BuildHasher, RandomState};
    static BASE: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BASE.get_or_init(|| {
        let salt = RandomState::new().hash_one(std::process::id());
        std::env::temp_dir().join(format!("corral-sandbox-{salt:016x}"))
    })
    .clone()
}

/// A run's hold on this process's temp base: when the last open run lets go, the base
/// is removed if no call's directory is left in it, and the next call makes it anew (a
/// run still open keeps it: its shared mounts hold that very directory).
#[derive(Debug)]
pub(crate) struct TempBaseHold(());

static TEMP_BASE_HOLDS: AtomicU64 = AtomicU64::new(0);

impl TempBaseHold {
    pub(crate) fn take() -> Self {
        TEMP_BASE_HOLDS.fetch_add(1, Ordering::AcqRel);
        Self(())
    }
}

impl Drop for TempBaseHold {
    fn drop(&mut self) {
        if TEMP_BASE_HOLDS.fetch_sub(1, Ordering::AcqRel) == 1 {
            let _ = std::fs::remove_dir(temp_base());
        }
    }
}

/// A run's own directories for its boxes (`run-SALT` in the process's temp base, mode
/// 0700): `tmp`, mounted over `/tmp` in each box, where the calls' private temporary
/// directories are made too, `runtime`, over the user's runtime directory, `home`, over
/// the home (holding the derived copies of the person's configuration, see
/// `super::home::derive_into`), and `other-home`, over root's when it is not the home. Shared by
/// the run's calls, as a host's `/tmp` is by its programs; removed with the run.
#[derive(Debug)]
pub(crate) struct RunDirs {
    root: PathBuf,
    pub tmp: PathBuf,
    pub runtime: PathBuf,
    /// Over the person's home (see `super::home`).
    pub home: PathBuf,
    /// Over root's home when it is not the person's (see `super::home::other_home`).
    pub other_home: PathBuf,
}

impl RunDirs {
    /// Make them.
    pub(crate) fn make() -> Result<RunDirs> {
        use std::hash::{BuildHasher, RandomState};
        use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
        static N: AtomicU64 = AtomicU64::new(0);
        let salt = RandomState::new().hash_one(N.fetch_add(1, Ordering::Relaxed));
        let root = temp_base().join(format!("run-{salt:016x}"));
        let made = |dir: &std::path::Path| {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir)
                .map_err(|e| Error::io(format!("creating {}", dir.display()), e))
        };
        let dirs = RunDirs {
            tmp: root.join("tmp"),
            runtime: root.join("runtime"),
            home: root.join("home"),
            other_home: root.join("other-home"),
            root,
        };
        made(&dirs.tmp)?;
        made(&dirs.runtime)?;
        made(&dirs.home)?;
        made(&dirs.other_home)?;
        // The person's configuration, derived without credentials, in the box's homes.
        super::home::derive_into(&dirs.home, &dirs.other_home);
        // As a host's `/tmp` is: anyone the box runs as may make files there, and remove
        // only their own (the run's directory keeps everyone else out).
        std::fs::set_permissions(&dirs.tmp, std::fs::Permissions::from_mode(0o1777))
            .map_err(|e| Error::io(format!("setting the mode of {}", dirs.tmp.display()), e))?;
        Ok(dirs)
    }

    /// A call's private temporary directory, made in the run's `tmp`: (the host's path, the
    /// path the box sees it at).
    pub(crate) fn private_temp(&self) -> Result<(PathBuf, PathBuf)> {
        use std::hash::{BuildHasher, RandomState};
        use std::os::unix::fs::DirBuilderExt;
        static N: AtomicU64 = AtomicU64::new(0);
        let salt = RandomState::new().hash_one(N.fetch_add(1, Ordering::Relaxed));
        let name = format!("corral-{salt:016x}");
        let host = self.tmp.join(&name);
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&host)
            .map_err(|e| Error::io(format!("creating {}", host.display()), e))?;
        Ok((
            host,
            PathBuf::from(corral_sys::box_dirs::BOX_TMP).join(name),
        ))
    }
}

impl Drop for RunDirs {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}
