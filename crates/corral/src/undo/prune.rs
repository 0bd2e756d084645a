//! The undo store does not grow for ever: the records of old runs are given up (their
//! `step_files` rows deleted) past a retention, and every blob that nothing names any
//! more is removed.
//!
//! What names a blob: a `step_files` row that is kept, and the newest tree of each
//! workspace (`undo/trees/`: a later record reuses its hashes for files `lstat` shows
//! unchanged, without reading them). A blob written, or found already stored, since the
//! oldest run still going started is kept too: that run's walk may be naming it in a
//! tree or rows not written yet ([`super::store::Blobs::put`] renews the time of a blob
//! it finds stored).
//!
//! A run prunes as it opens, at most once every [`EVERY`] (a stamp file says when it
//! last did), on its housekeeping thread where it has one; `corral trace prune` prunes
//! at once.

use std::collections::HashSet;
use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use corral_trace::Store;

use crate::clock::now_ms;
use crate::error::{Error, Result};

/// How often a run's opening prunes the undo store.
pub const EVERY: Duration = Duration::from_secs(3600);

/// How much of the undo record is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UndoRetention {
    /// The records of this many newest runs that changed files.
    pub keep_runs: usize,
    /// And of none that started longer ago than this. A run still going, and the newest
    /// run that changed files, are kept whatever the bounds.
    pub keep_for: Duration,
}

/// What a prune removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UndoPruneReport {
    /// Runs whose records were given up.
    pub runs: usize,
    /// Blobs removed.
    pub blobs: usize,
    /// Their bytes.
    pub bytes: u64,
}

/// Prune the undo store in `dir` of the trace `store` now.
pub fn prune(store: &Store, dir: &Path, retention: &UndoRetention) -> Result<UndoPruneReport> {
    let (runs, named, since) = forget(store, retention)?;
    let (blobs, bytes) = sweep(dir, named, since)?;
    Ok(UndoPruneReport { runs, blobs, bytes })
}

/// [`prune`], when the last one was [`EVERY`] ago or more; the store is locked only to
/// read and delete rows, not while the blobs are swept.
pub(crate) fn prune_when_due(
    store: &Mutex<Store>,
    dir: &Path,
    retention: &UndoRetention,
) -> Result<Option<UndoPruneReport>> {
    let stamp = dir.join("pruned");
    let due = match std::fs::metadata(&stamp).and_then(|m| m.modified()) {
        Ok(at) => at.elapsed().is_ok_and(|age| age >= EVERY),
        Err(_) => dir.is_dir(),
    };
    if !due {
        return Ok(None);
    }
    std::fs::write(&stamp, b"").map_err(|e| Error::io("stamping the undo store's prune", e))?;
    let (runs, named, since) = {
        let store = store.lock().unwrap_or_else(|e| e.into_inner());
        forget(&store, retention)?
    };
    let (blobs, bytes) = sweep(dir, named, since)?;
    Ok(Some(UndoPruneReport { runs, blobs, bytes }))
}

/// Delete the rows of the runs past `retention`; what the rest name, and since when a
/// blob may belong to a run still going.
fn forget(
    store: &Store,
    retention: &UndoRetention,
) -> Result<(usize, HashSet<String>, Option<SystemTime>)> {
    let before = now_ms() - i64::try_from(retention.keep_for.as_millis()).unwrap_or(i64::MAX);
    let forgotten = store.prune_step_files(retention.keep_runs, before)?;
    let named = store.step_file_hashes()?;
    let since = store
        .oldest_live_run_ms()?
        .map(|ms| SystemTime::UNIX_EPOCH + Duration::from_millis(u64::try_from(ms).unwrap_or(0)));
    Ok((forgotten.len(), named, since))
}

/// Remove every blob in `dir` that neither `named` nor a workspace's newest tree names,
/// and that is older than `since`; the count and bytes removed.
fn sweep(
    dir: &Path,
    mut named: HashSet<String>,
    since: Option<SystemTime>,
) -> Result<(usize, u64)> {
    let io = |what: &'static str| move |e| Error::io(what, e);
    if let Ok(trees) = std::fs::read_dir(dir.join("trees")) {
        for tree in trees.flatten() {
            named.extend(
                super::tree::load(&tree.path())
                    .into_values()
                    .map(|e| e.hash),
            );
        }
    }
    let Ok(fans) = std::fs::read_dir(dir.join("blobs")) else {
        return Ok((0, 0));
    };
    let (mut count, mut bytes) = (0, 0);
    for fan in fans.flatten() {
        let fan_name = fan.file_name();
        let Some(fan_name) = fan_name.to_str() else {
            continue;
        };
        let Ok(blobs) = std::fs::read_dir(fan.path()) else {
            // A `.put-` temporary at the top, not a directory of blobs.
            continue;
        };
        for blob in blobs.flatten() {
            let name = blob.file_name();
            let hash = format!("{fan_name}{}", name.to_string_lossy());
            if named.contains(&hash) {
                continue;
            }
            let Ok(meta) = blob.metadata() else { continue };
            let young = match (since, meta.modified()) {
                (Some(since), Ok(at)) => at >= since,
                (None, _) => false,
                (_, Err(_)) => true,
            };
            if young {
                continue;
            }
            match std::fs::remove_file(blob.path()) {
                Ok(()) => {
                    count += 1;
                    bytes += meta.len();
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(io("removing a blob no record names")(e)),
            }
        }
    }
    Ok((count, bytes))
}
