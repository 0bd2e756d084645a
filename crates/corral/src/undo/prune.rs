//! The undo store does not grow for ever: the records of old runs are given up (their
//! `step_files` rows deleted) past a retention, and every blob that nothing names any
//! more is removed.
//!
//! What names a blob: a `step_files` row that is kept, the newest tree of each workspace
//! (`undo/trees/`: a later record reuses its hashes for files `lstat` shows unchanged,
//! without reading them), and what a run still going holds in memory: the record a call
//! or a handle started from, whose rows are written after it. That last cannot be read
//! from another process, so blobs are removed only while no other run is going (and the
//! pruning run has made no call yet); the rows of old runs are given up whatever runs.
//! The store's lock ([`super::store::Held`]) keeps a record that starts meanwhile from
//! walking until the prune is done, and a prune from removing what a record is naming.
//!
//! A run prunes as it opens, at most once every [`EVERY`] (a stamp file says when it
//! last did), on its housekeeping thread where it has one, passing over the blobs when
//! a record holds the lock; `corral trace prune` prunes at once, waiting for the lock.

use std::collections::HashSet;
use std::path::Path;
use std::sync::Mutex;
use std::time::Duration;

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
    /// Runs still going, whose records in memory kept every blob (none was removed).
    pub going: usize,
}

/// Prune the undo store in `dir` of the trace `store` now, waiting for a record that
/// holds the store's lock.
pub fn prune(store: &Store, dir: &Path, retention: &UndoRetention) -> Result<UndoPruneReport> {
    let _held = super::store::Held::take(dir, true, true)
        .map_err(|e| Error::io("locking the undo store", e))?;
    let (runs, named, going) = forget(store, retention, None)?;
    let (blobs, bytes) = match going {
        0 => sweep(dir, named)?,
        _ => (0, 0),
    };
    Ok(UndoPruneReport {
        runs,
        blobs,
        bytes,
        going,
    })
}

/// [`prune`] by the run `own` as it opens, when the last one was [`EVERY`] ago or more;
/// the trace is locked only to read and delete rows, not while the blobs are swept, and
/// the blobs are passed over when a record holds the store's lock.
pub(crate) fn prune_when_due(
    store: &Mutex<Store>,
    dir: &Path,
    retention: &UndoRetention,
    own: &str,
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
    let held = super::store::Held::take(dir, true, false)
        .map_err(|e| Error::io("locking the undo store", e))?;
    let (runs, named, going) = {
        let store = store.lock().unwrap_or_else(|e| e.into_inner());
        forget(&store, retention, Some(own))?
    };
    let (blobs, bytes) = match (going, held) {
        (0, Some(_held)) => sweep(dir, named)?,
        _ => (0, 0),
    };
    Ok(Some(UndoPruneReport {
        runs,
        blobs,
        bytes,
        going,
    }))
}

/// Delete the rows of the runs past `retention`; what the rest name, and how many runs
/// that may hold records in memory are still going: every run not ended but `own` (the
/// pruning run), and `own` too once it has made a call.
fn forget(
    store: &Store,
    retention: &UndoRetention,
    own: Option<&str>,
) -> Result<(usize, HashSet<String>, usize)> {
    let before = now_ms() - i64::try_from(retention.keep_for.as_millis()).unwrap_or(i64::MAX);
    let forgotten = store.prune_step_files(retention.keep_runs, before)?;
    let named = store.step_file_hashes()?;
    let mut going = 0;
    for id in store.live_run_ids()? {
        if Some(id.as_str()) != own || !store.steps(Some(&id), 1)?.is_empty() {
            going += 1;
        }
    }
    Ok((forgotten.len(), named, going))
}

/// Remove every blob in `dir` that neither `named` nor a workspace's newest tree names;
/// the count and bytes removed.
fn sweep(dir: &Path, mut named: HashSet<String>) -> Result<(usize, u64)> {
    let io = |what: &'static str| move |e| Error::io(what, e);
    tree_hashes(dir, &mut named);
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
            if let Some(len) = super::store::remove_blob(&blob.path())
                .map_err(io("removing a blob no record names"))?
            {
                count += 1;
                bytes += len;
            }
        }
    }
    Ok((count, bytes))
}

/// Add to `named` what the newest tree of each workspace in the store `dir` names (a
/// later record reuses those hashes without reading the files).
pub(super) fn tree_hashes(dir: &Path, named: &mut HashSet<String>) {
    if let Ok(trees) = std::fs::read_dir(dir.join("trees")) {
        for tree in trees.flatten() {
            named.extend(
                super::tree::load(&tree.path())
                    .into_values()
                    .map(|e| e.hash),
            );
        }
    }
}
