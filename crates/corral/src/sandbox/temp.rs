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
