//! The store: held changes as directories `held/RUN/STEP/N/` in corral's state directory.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use super::disk;
use super::error::{HeldError, Result};
use super::{BASE, HELD, META};
use crate::clock::now_ms;

/// What a call changed in a held path.
#[derive(Debug, Clone, Copy)]
pub struct NewHeld<'a> {
    /// The workspace root, canonical.
    pub workspace: &'a Path,
    /// The file, relative to the workspace: plain names only (no `..`, not absolute).
    pub path: &'a Path,
    /// The person's version when the call started; `None` when there was no file.
    pub base: Option<&'a [u8]>,
    /// The box's version and its permission bits; `None` when the call removed the file.
    /// Only the permission bits (`0o777`) are kept: never set-ID or sticky.
    pub held: Option<(&'a [u8], u32)>,
    /// Which host program runs it, e.g. `Claude Code (hooks, permissions)`.
    pub runs: &'a str,
}

/// One held change, as the store keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Held {
    /// `RUN-STEP-N`: what `corral review show|apply|drop` take.
    pub id: String,
    /// The run whose call made it.
    pub run: String,
    /// The call's step number in the run.
    pub step: i64,
    /// Which of the step's held changes (from 1).
    pub n: u32,
    /// The workspace root (bytes that are not UTF-8 escaped in JSON).
    #[serde(serialize_with = "escaped")]
    pub workspace: PathBuf,
    /// The file, relative to the workspace.
    #[serde(serialize_with = "escaped")]
    pub path: PathBuf,
    /// Which host program runs it.
    pub runs: String,
    /// The SHA-256 of the person's version at the call's start; `None`: there was no file.
    pub base_sha256: Option<String>,
    /// The SHA-256 of the box's version; `None`: the call removed the file.
    pub held_sha256: Option<String>,
    /// The held version's permission bits; `None`: the call removed the file.
    pub mode: Option<u32>,
    /// When it was held (the latest time, for a change held again), in ms since the epoch.
    pub made_ms: i64,
    /// The held version's size in bytes (0 when removed).
    pub bytes: u64,
}

fn escaped<S: serde::Serializer>(p: &Path, s: S) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_str(&crate::os_text::escape_path(p))
}

/// `meta.json`: a [`Held`] without what its directory says (run, step, n), and its paths
/// kept byte for byte.
#[derive(Debug, Serialize, Deserialize)]
struct Meta {
    workspace: StoredPath,
    path: StoredPath,
    runs: String,
    base_sha256: Option<String>,
    held_sha256: Option<String>,
    mode: Option<u32>,
    made_ms: i64,
    bytes: u64,
}

/// A path in `meta.json`: as text when it is UTF-8, else as its bytes.
#[derive(Debug, Serialize, Deserialize)]
#[serde(untagged)]
enum StoredPath {
    Text(String),
    Bytes { bytes: Vec<u8> },
}

impl StoredPath {
    fn of(p: &Path) -> Self {
        match p.to_str() {
            Some(s) => StoredPath::Text(s.to_string()),
            None => StoredPath::Bytes {
                bytes: p.as_os_str().as_bytes().to_vec(),
            },
        }
    }

    fn path(&self) -> PathBuf {
        match self {
            StoredPath::Text(s) => PathBuf::from(s),
            StoredPath::Bytes { bytes } => PathBuf::from(OsStr::from_bytes(bytes)),
        }
    }
}

/// The held changes in one state directory.
#[derive(Debug, Clone)]
pub struct HeldStore {
    /// `<state dir>/held`.
    dir: PathBuf,
}

/// One hold at a time in this process: the same run, step and path held twice at once (a
/// handle's sweep beside its call's end) is still one entry.
static HOLDING: Mutex<()> = Mutex::new(());

/// How large a `meta.json` may be.
const META_MAX: u64 = 1 << 20;

impl HeldStore {
    /// The store in corral's state directory `state_dir` (the directory of the trace).
    pub fn in_state_dir(state_dir: &Path) -> HeldStore {
        HeldStore {
            dir: state_dir.join("held"),
        }
    }

    /// The store beside the trace database at `db`.
    pub fn beside_trace(db: &Path) -> HeldStore {
        Self::in_state_dir(db.parent().unwrap_or(Path::new(".")))
    }

    /// The directory the store keeps its entries in (`<state dir>/held`).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Keep a change. The same run, step and path held again (a handle's sweep finding the
    /// same file changed again) updates that entry instead of adding one.
    pub fn hold(&self, run: &str, step: i64, new: NewHeld<'_>) -> Result<Held> {
        check_run(run, step)?;
        check_path(new.path)?;
        if !new.workspace.is_absolute() {
            return Err(HeldError::Path {
                path: new.workspace.to_path_buf(),
                why: "the workspace must be an absolute path",
            });
        }
        let _one = HOLDING.lock().unwrap_or_else(|e| e.into_inner());
        let step_dir = self.dir.join(run).join(step.to_string());
        disk::make_dirs(&step_dir).map_err(HeldError::io("making the held change's directory"))?;
        let n = match self.same_change(run, step, new.workspace, new.path)? {
            Some(n) => n,
            None => new_entry(&step_dir)?,
        };
        let entry = step_dir.join(n.to_string());
        let meta = Meta {
            workspace: StoredPath::of(new.workspace),
            path: StoredPath::of(&new.path.components().collect::<PathBuf>()),
            runs: new.runs.to_string(),
            base_sha256: new.base.map(sha256),
            held_sha256: new.held.map(|(bytes, _)| sha256(bytes)),
            mode: new.held.map(|(_, mode)| mode & 0o777),
            made_ms: now_ms(),
            bytes: new.held.map_or(0, |(bytes, _)| bytes.len() as u64),
        };
        let json = serde_json::to_vec_pretty(&meta).expect("a meta serializes");
        let io = HeldError::io("writing a held change");
        disk::put(&entry, BASE, new.base).map_err(&io)?;
        disk::put(&entry, HELD, new.held.map(|(bytes, _)| bytes)).map_err(&io)?;
        disk::put(&entry, META, Some(&json)).map_err(io)?;
        Ok(held_of(run, step, n, meta))
    }

    /// Every held change, oldest first (run ids sort by their start).
    pub fn list(&self) -> Result<Vec<Held>> {
        let io = HeldError::io("listing the held changes");
        let mut all = Vec::new();
        for run in disk::names(&self.dir).map_err(&io)? {
            if check_run(&run, 0).is_err() {
                continue;
            }
            for step in disk::names(&self.dir.join(&run)).map_err(&io)? {
                let Ok(step) = step.parse::<i64>() else {
                    continue;
                };
                all.extend(self.step_entries(&run, step)?);
            }
        }
        all.sort_by(|a, b| (&a.run, a.step, a.n).cmp(&(&b.run, b.step, b.n)));
        Ok(all)
    }

    /// The held change `id`; an unknown one's error names those held.
    pub fn get(&self, id: &str) -> Result<Held> {
        if let Some((run, step, n)) = parse_id(id)
            && let Some(meta) = self.meta(run, step, n)?
        {
            return Ok(held_of(run, step, n, meta));
        }
        Err(HeldError::Unknown {
            id: id.to_string(),
            known: self.list()?.into_iter().map(|h| h.id).collect(),
        })
    }

    /// Forget the held change `id`, leaving the workspace as it is. A damaged one is
    /// forgotten too: that is what its error says to do.
    pub fn drop(&self, id: &str) -> Result<()> {
        match (self.get(id), parse_id(id)) {
            (Ok(held), _) => self.remove(&held.run, held.step, held.n),
            (Err(HeldError::Damaged { .. }), Some((run, step, n))) => self.remove(run, step, n),
            (Err(e), _) => Err(e),
        }
    }

    /// Remove every held change of a run for which `keep` says no (`corral trace prune`:
    /// runs no longer in the trace); how many changes were removed.
    pub fn prune_runs_not_in(&self, keep: &dyn Fn(&str) -> bool) -> Result<usize> {
        let io = HeldError::io("pruning the held changes");
        let mut removed = 0;
        for run in disk::names(&self.dir).map_err(&io)? {
            if check_run(&run, 0).is_err() || keep(&run) {
                continue;
            }
            let run_dir = self.dir.join(&run);
            for step in disk::names(&run_dir).map_err(&io)? {
                removed += disk::names(&run_dir.join(step)).map_err(&io)?.len();
            }
            disk::remove_tree(&run_dir, &[]).map_err(&io)?;
        }
        Ok(removed)
    }

    /// The entry's directory.
    pub(super) fn entry_dir(&self, held: &Held) -> PathBuf {
        self.dir
            .join(&held.run)
            .join(held.step.to_string())
            .join(held.n.to_string())
    }

    /// Remove the entry `run`/`step`/`n`, and its step's and run's directories when left
    /// empty.
    pub(super) fn remove(&self, run: &str, step: i64, n: u32) -> Result<()> {
        let run_dir = self.dir.join(run);
        let step_dir = run_dir.join(step.to_string());
        disk::remove_tree(&step_dir.join(n.to_string()), &[step_dir, run_dir]).map_err(
            HeldError::io(format!("removing the held change {run}-{step}-{n}")),
        )
    }

    /// The N of the entry of `run` and `step` that holds `path` of `workspace`.
    fn same_change(
        &self,
        run: &str,
        step: i64,
        workspace: &Path,
        path: &Path,
    ) -> Result<Option<u32>> {
        Ok(self
            .step_entries(run, step)?
            .into_iter()
            .find(|h| h.workspace == workspace && h.path == path)
            .map(|h| h.n))
    }

    /// The whole entries of one step (those with a `meta.json`).
    fn step_entries(&self, run: &str, step: i64) -> Result<Vec<Held>> {
        let dir = self.dir.join(run).join(step.to_string());
        let mut out = Vec::new();
        for n in disk::names(&dir).map_err(HeldError::io("listing the held changes"))? {
            let Ok(n) = n.parse::<u32>() else { continue };
            // A damaged record is left out: `get` names it, and `drop` removes it.
            match self.meta(run, step, n) {
                Ok(Some(meta)) => out.push(held_of(run, step, n, meta)),
                Ok(None) | Err(HeldError::Damaged { .. }) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(out)
    }

    /// An entry's `meta.json`; `None` when it has none (it is being made, or there is no
    /// such entry).
    fn meta(&self, run: &str, step: i64, n: u32) -> Result<Option<Meta>> {
        let path = self
            .dir
            .join(run)
            .join(step.to_string())
            .join(n.to_string())
            .join(META);
        let id = format!("{run}-{step}-{n}");
        let damaged = |what: String| HeldError::Damaged {
            id: id.clone(),
            what,
        };
        let bytes = match disk::read(&path, META_MAX) {
            Ok(Ok(Some(bytes))) => bytes,
            Ok(Ok(None)) => return Ok(None),
            Ok(Err(size)) => return Err(damaged(format!("its record is {size} bytes"))),
            Err(e) if e.kind() == std::io::ErrorKind::NotADirectory => return Ok(None),
            Err(e) => return Err(HeldError::io(format!("reading the held change {id}"))(e)),
        };
        serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| damaged(format!("its record does not parse: {e}")))
    }
}

/// A new entry's N in `step_dir`: one past the highest there, made at once so that no
/// other hold takes it.
fn new_entry(step_dir: &Path) -> Result<u32> {
    let io = HeldError::io("making a held change");
    let taken = disk::names(step_dir).map_err(&io)?;
    let mut n = taken
        .iter()
        .filter_map(|n| n.parse::<u32>().ok())
        .max()
        .unwrap_or(0)
        + 1;
    while !disk::make_new_dir(&step_dir.join(n.to_string())).map_err(&io)? {
        n += 1;
    }
    Ok(n)
}

fn held_of(run: &str, step: i64, n: u32, meta: Meta) -> Held {
    Held {
        id: format!("{run}-{step}-{n}"),
        run: run.to_string(),
        step,
        n,
        workspace: meta.workspace.path(),
        path: meta.path.path(),
        runs: meta.runs,
        base_sha256: meta.base_sha256,
        held_sha256: meta.held_sha256,
        mode: meta.mode,
        made_ms: meta.made_ms,
        bytes: meta.bytes,
    }
}

/// The SHA-256 the store keeps of a version: the one corral.toml's trust is keyed by.
pub(super) fn sha256(bytes: &[u8]) -> String {
    crate::trust::content_hash(bytes)
}

/// `RUN-STEP-N` as its parts, read from the right (a run id holds `-`); `None` when it is
/// not one.
fn parse_id(id: &str) -> Option<(&str, i64, u32)> {
    let mut parts = id.rsplitn(3, '-');
    let n = parts.next()?.parse().ok()?;
    let step = parts.next()?.parse().ok()?;
    let run = parts.next()?;
    check_run(run, step).ok()?;
    Some((run, step, n))
}

/// A run id names a directory here: letters, digits, `-` and `_` only, so that no ID
/// reaches outside the store.
fn check_run(run: &str, step: i64) -> Result<()> {
    let plain = !run.is_empty()
        && run
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if plain && step >= 0 {
        return Ok(());
    }
    Err(HeldError::Run {
        run: run.to_string(),
        step,
    })
}

/// A held path is relative and plain: names only, no `..`, `.` or root.
pub(super) fn check_path(path: &Path) -> Result<()> {
    let why = if path.as_os_str().is_empty() {
        Some("it names nothing")
    } else if path.is_absolute() {
        Some("it is absolute")
    } else if !path.components().all(|c| matches!(c, Component::Normal(_))) {
        Some("it has a `..` or `.` part")
    } else {
        None
    };
    match why {
        None => Ok(()),
        Some(why) => Err(HeldError::Path {
            path: path.to_path_buf(),
            why,
        }),
    }
}
