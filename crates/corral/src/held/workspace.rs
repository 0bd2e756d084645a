//! Applying a held change to its workspace, through a descriptor of the workspace: the
//! path is the model's choice, and nothing here follows a symlink in it (`beneath.rs`, the
//! resolver undo's restorer writes through).

use std::io;
use std::path::Path;

use rustix::fs::{FileType, Mode, OFlags};
use serde::Serialize;

use super::error::{HeldError, Result};
use super::store::{Held, HeldStore, check_path, sha256};
use super::{BASE, HELD, disk};
use crate::beneath::{Replace, Roots, open_beneath};

/// How much of a version is read to show it in a conflict (the whole file is read to
/// compare it only when the base or the held version is as large).
pub(super) const SHOW_MAX: u64 = 1 << 20;

/// One version of a held file, as a conflict carries it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Version {
    /// No file.
    Absent,
    /// A regular file's bytes.
    File(Vec<u8>),
    /// A regular file larger than this many bytes, not read.
    Large {
        /// What it holds more than.
        more_than: u64,
    },
    /// Something other than a regular file, in words: a symlink and its target, a
    /// directory, a device.
    Other(String),
}

/// Why an apply was refused: the file is no longer the version the call started from.
#[derive(Debug, Clone, Serialize)]
pub struct Conflict {
    /// The held change.
    pub entry: Held,
    /// The person's version when the call started.
    pub base: Version,
    /// What is there now.
    pub current: Version,
    /// The call's version, which was not applied.
    pub held: Version,
}

/// What an apply did.
#[derive(Debug, Clone, Serialize)]
pub struct Applied {
    /// The change, now gone from the store.
    pub entry: Held,
    /// What became of the file.
    pub how: AppliedAs,
}

/// What became of the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum AppliedAs {
    /// It holds the held version now, with its mode.
    Written,
    /// It was removed, as the call had.
    Removed,
    /// It was the held version already (applied by hand): nothing was written.
    AlreadySo,
}

impl HeldStore {
    /// Apply the held change `id` to its workspace and forget it. The steps:
    ///
    /// 1. Read the held version from the store, checked against its hash.
    /// 2. Read what is at the path now, through a descriptor of the workspace.
    /// 3. The held version already: nothing to write.
    /// 4. Not the person's version the call started from: refused with a [`Conflict`]
    ///    carrying the three versions; nothing changes.
    /// 5. Write it (a temporary beside the file, renamed over it) or remove it, through
    ///    the workspace's descriptor, and set its mode (permission bits only).
    /// 6. Forget the entry.
    pub fn apply(&self, id: &str) -> Result<Applied> {
        let entry = self.get(id)?;
        check_path(&entry.path)?;
        let held = self.held_version(&entry)?;
        let opening = format!(
            "opening the workspace {} (is it still there?)",
            crate::person::path(&entry.workspace)
        );
        let roots =
            Roots::open([entry.workspace.clone()]).map_err(HeldError::io(opening.as_str()))?;
        // A workspace that is gone leaves no root: said so, not taken for a symlink.
        roots
            .dir(&entry.workspace)
            .map_err(HeldError::io(opening.as_str()))?;
        let full = entry.workspace.join(&entry.path);
        let limit = SHOW_MAX.max(entry.bytes).max(self.base_size(&entry));
        let current = current(&roots, &full, limit).map_err(|e| through(&entry, e))?;
        let now = hash_of(&current);
        let how = if now == entry.held_sha256 {
            AppliedAs::AlreadySo
        } else if now != entry.base_sha256 {
            let base = self.version(&entry, BASE)?;
            let held = held.map_or(Version::Absent, Version::File);
            return Err(HeldError::Conflict(Box::new(Conflict {
                entry,
                base,
                current,
                held,
            })));
        } else {
            write(&roots, &entry, &full, held.as_deref()).map_err(|e| through(&entry, e))?
        };
        self.remove(&entry.run, entry.step, entry.n)?;
        Ok(Applied { entry, how })
    }

    /// The held version's bytes (`None`: the call removed the file), checked against its
    /// hash.
    fn held_version(&self, entry: &Held) -> Result<Option<Vec<u8>>> {
        let path = self.entry_dir(entry).join(HELD);
        let bytes = disk::read(&path, u64::MAX)
            .map_err(HeldError::io(format!(
                "reading the held change {}",
                entry.id
            )))?
            .unwrap_or(None);
        if bytes.as_deref().map(sha256) != entry.held_sha256 {
            return Err(HeldError::Damaged {
                id: entry.id.clone(),
                what: "its held version does not match its hash".into(),
            });
        }
        Ok(bytes)
    }

    /// One stored version (`base` or `held`) as a conflict shows it.
    pub(super) fn version(&self, entry: &Held, name: &str) -> Result<Version> {
        let path = self.entry_dir(entry).join(name);
        match disk::read(&path, SHOW_MAX).map_err(HeldError::io(format!(
            "reading the held change {}",
            entry.id
        )))? {
            Ok(Some(bytes)) => Ok(Version::File(bytes)),
            Ok(None) => Ok(Version::Absent),
            Err(_) => Ok(Version::Large {
                more_than: SHOW_MAX,
            }),
        }
    }

    /// The stored base's size (0 when there was no file).
    pub(super) fn base_size(&self, entry: &Held) -> u64 {
        match disk::read(&self.entry_dir(entry).join(BASE), 0) {
            Ok(Err(size)) => size,
            _ => 0,
        }
    }
}

/// What is at `full` now: a regular file read whole if at most `limit` bytes, anything
/// else in words; never followed.
fn current(roots: &Roots, full: &Path, limit: u64) -> io::Result<Version> {
    let Some((kind, target)) = roots.lstat(full)? else {
        return Ok(Version::Absent);
    };
    let other = |what: String| Ok(Version::Other(what));
    match kind {
        FileType::RegularFile => match roots.read_at_most(full, limit) {
            Ok(Some(bytes)) => Ok(Version::File(bytes)),
            Ok(None) => Ok(Version::Absent),
            Err(e) if e.kind() == io::ErrorKind::FileTooLarge => {
                Ok(Version::Large { more_than: limit })
            }
            Err(e) if e.kind() == io::ErrorKind::InvalidInput => other("not a regular file".into()),
            Err(e) => Err(e),
        },
        FileType::Symlink => other(format!(
            "a symlink to {}",
            crate::person::escaped_bytes(&target, crate::person::Lines::Escape)
        )),
        FileType::Directory => other("a directory".into()),
        _ => other("a device, a pipe or a socket".into()),
    }
}

/// A version's hash as the store keeps it: `None` for no file. A file too large to read
/// (or not a file) has none that matches anything.
fn hash_of(v: &Version) -> Option<String> {
    match v {
        Version::Absent => None,
        Version::File(bytes) => Some(sha256(bytes)),
        Version::Large { .. } | Version::Other(_) => Some(String::new()),
    }
}

/// Step 5 of [`HeldStore::apply`].
fn write(roots: &Roots, entry: &Held, full: &Path, held: Option<&[u8]>) -> io::Result<AppliedAs> {
    let Some(bytes) = held else {
        return match roots.remove(full) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
            _ => Ok(AppliedAs::Removed),
        };
    };
    roots.write(full, bytes, Replace::Any)?;
    let mode = entry.mode.unwrap_or(0o644) & 0o777;
    let root = roots.dir(&entry.workspace)?;
    let file = open_beneath(
        &root,
        &entry.path,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK,
    )?;
    let st = rustix::fs::fstat(&file)?;
    if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "the file was replaced by something else as it was written",
        ));
    }
    rustix::fs::fchmod(&file, Mode::from_raw_mode(mode))?;
    Ok(AppliedAs::Written)
}

/// A failure of the workspace's descriptor: a symlink or a mount on the way is refused in
/// words of its own.
fn through(entry: &Held, e: io::Error) -> HeldError {
    if e.kind() == io::ErrorKind::PermissionDenied && e.get_ref().is_some() {
        return HeldError::Through {
            id: entry.id.clone(),
            path: entry.path.clone(),
        };
    }
    HeldError::io(format!("applying {}", crate::person::path(&entry.path)))(e)
}

impl Serialize for Version {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(None)?;
        match self {
            Version::Absent => map.serialize_entry("kind", "absent")?,
            Version::File(bytes) => {
                map.serialize_entry("kind", "file")?;
                map.serialize_entry("bytes", &bytes.len())?;
                map.serialize_entry("sha256", &sha256(bytes))?;
                let text = std::str::from_utf8(bytes)
                    .ok()
                    .filter(|t| !t.contains('\0'))
                    .map(|t| crate::person::escaped(t, crate::person::Lines::Keep));
                map.serialize_entry("text", &text)?;
            }
            Version::Large { more_than } => {
                map.serialize_entry("kind", "large")?;
                map.serialize_entry("more_than", more_than)?;
            }
            Version::Other(what) => {
                map.serialize_entry("kind", "other")?;
                map.serialize_entry("what", what)?;
            }
        }
        map.end()
    }
}
