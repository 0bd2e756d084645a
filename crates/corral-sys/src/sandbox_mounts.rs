//! A sandbox's mounts made once for the calls of a run that would make the same ones.
//!
//! A sandboxed stage makes its mounts (every mount private, the protected paths
//! read-only, the read denies, the private `/dev`) in a mount namespace of its own: a
//! dozen mount calls, two tmpfs and a `devpts` made, and all of it torn down again when
//! the stage ends. [`SandboxMounts`] are those mounts made once more, from the host's
//! mounts as the mount template is, in a namespace no process holds; a PID namespace's
//! init copies them instead of the plain template, and the stages of its call then take
//! them as they are while their confinement's [`MountKey`] is the key they were made for.

use std::io;
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::sandbox::{Confinement, MountKey};

/// A sandbox's mounts made once, in a mount namespace no process holds, for the inits of
/// the calls whose confinement has the same [`MountKey`]: each copies it instead of the
/// template, and their sandboxed stages then take their mounts as they are instead of
/// making a namespace and a dozen mounts of their own (`Confinement::use_mounts_in_place`).
///
/// Made like the template (the host's mounts, the host's `/proc` detached last, where a
/// PID namespace's init detaches it), with the confinement's own mounts made in it as a
/// child makes them in its own: every mount private, the protected paths read-only, the
/// read denies, the private `/dev`. It stands for the host's mounts of the moment it was made:
/// after the host's mounts change, an init copies the plain template again.
#[derive(Debug)]
pub struct SandboxMounts {
    ns: OwnedFd,
    key: MountKey,
    /// The template count when it was made.
    made_at: u64,
    id: u64,
}

impl SandboxMounts {
    /// Make them for `confinement`; `None` where it has no [`MountKey`] or templates
    /// cannot be made here.
    pub fn make(confinement: &Confinement) -> io::Result<Option<Self>> {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        let Some(key) = confinement.mount_key() else {
            return Ok(None);
        };
        // The count once the host's mounts have been looked at: a change from here on
        // makes these mounts stale.
        if crate::mount_template::current().is_none() {
            return Ok(None);
        }
        let made_at = crate::mount_template::generation();
        let confinement = confinement.clone();
        let ns = crate::mount_template::made_apart(move || confinement.make_mounts_here())?;
        Ok(Some(Self {
            ns,
            key,
            made_at,
            id: NEXT.fetch_add(1, Ordering::Relaxed),
        }))
    }

    /// What its mounts cover.
    pub fn key(&self) -> &MountKey {
        &self.key
    }

    /// Names these mounts, as `PidNamespace::copied` reports them.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// Whether the host's mounts are as they were when these were made (as far as the
    /// last look at them tells).
    pub fn stands(&self) -> bool {
        self.made_at == crate::mount_template::generation()
    }

    /// The namespace to copy, while [`Self::stands`].
    pub(crate) fn current(&self) -> Option<&OwnedFd> {
        self.stands().then_some(&self.ns)
    }
}
