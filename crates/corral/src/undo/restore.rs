//! Undo: the rows of one step, or of a run, turned into what puts the files back, checked
//! against the workspace as it is now, then applied.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use corral_trace::{StepFile, Store};
use sha2::{Digest, Sha256};

use super::kind::{CHANGING_HASH, DIR_HASH, Kind};
use super::store::{Blobs, hex};
use crate::beneath::{Replace, Roots, open_beneath};
use crate::error::{Error, Result};
use crate::sandbox::sets::{Reach, ReadOnlyRule, Sets};

/// What to undo.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UndoTarget {
    /// The newest step that changed files in a run of this workspace.
    Last {
        /// The workspace, canonical.
        workspace: PathBuf,
    },
    /// One step, by its global id.
    Step(i64),
    /// Every step of a run.
    Run(String),
    /// The newest step of a run that changed files and is not undone already.
    LastOfRun(String),
}

/// What an undo would do, and what stops it.
#[derive(Debug, Clone, Default)]
pub struct UndoPlan {
    /// The workspace it acts in.
    pub workspace: PathBuf,
    /// The steps it undoes (global ids), oldest first.
    pub steps: Vec<i64>,
    /// Files put back as they were (modified or deleted), relative to the workspace.
    pub restore: Vec<PathBuf>,
    /// Files removed (the steps created them).
    pub remove: Vec<PathBuf>,
    /// Files that are no longer as the steps left them: a person or a later call changed
    /// them since. Any of these refuses the undo.
    pub conflicts: Vec<PathBuf>,
    /// What each path becomes: its blob and mode, or nothing.
    want: BTreeMap<PathBuf, Option<(String, u32)>>,
}

impl UndoPlan {
    /// Whether there is nothing to do.
    pub fn is_empty(&self) -> bool {
        self.restore.is_empty() && self.remove.is_empty()
    }
}

/// How many of a workspace's newest changing steps `UndoTarget::Last` looks through for
/// one not undone yet.
const LAST_LOOKS: usize = 1000;

/// Work out the undo of `target` from the trace `store`, with its undo store in `dir`.
/// `Last` is the newest step of the workspace that is not undone already.
pub fn plan(store: &Store, dir: &Path, target: &UndoTarget) -> Result<UndoPlan> {
    let _ = dir;
    match target {
        UndoTarget::Last { workspace } => {
            let ws = crate::os_text::escape_path(workspace).into_owned();
            for id in store.changing_steps(&ws, LAST_LOOKS)? {
                let plan = plan_steps(store, &[id])?;
                if !plan.is_empty() || !plan.conflicts.is_empty() {
                    return Ok(plan);
                }
            }
            Err(Error::invalid(format!(
                "no call recorded in {} changed a file that is not back as it was: nothing to undo",
                workspace.display()
            )))
        }
        UndoTarget::LastOfRun(run) => {
            let ids = store.run_files(run)?.into_iter().map(|(id, _)| id).rev();
            for id in ids.take(LAST_LOOKS) {
                let plan = plan_steps(store, &[id])?;
                if !plan.is_empty() || !plan.conflicts.is_empty() {
                    return Ok(plan);
                }
            }
            Err(Error::invalid(format!(
                "no call of run {run} changed a file that is not back as it was: nothing to undo"
            )))
        }
        UndoTarget::Step(id) => plan_steps(store, &[*id]),
        UndoTarget::Run(run) => {
            let ids: Vec<i64> = store
                .run_files(run)?
                .into_iter()
                .map(|(id, _)| id)
                .collect();
            if ids.is_empty() {
                return Err(Error::invalid(format!(
                    "run {run} changed no recorded file: nothing to undo"
                )));
            }
            plan_steps(store, &ids)
        }
    }
}

fn plan_steps(store: &Store, step_ids: &[i64]) -> Result<UndoPlan> {
    let first = step_ids[0];
    let row = store
        .step(first)?
        .ok_or_else(|| Error::invalid(format!("there is no step {first} in the trace")))?;
    let run = store
        .run(&row.run_id)?
        .ok_or_else(|| Error::invalid(format!("there is no run {}", row.run_id)))?;
    let workspace = PathBuf::from(&run.workspace);
    let mut steps = Vec::new();
    for id in step_ids {
        steps.push((*id, settled_files(store, *id, run.ended_at_ms.is_none())?));
    }
    let mut plan = compose(workspace, &steps);
    let roots =
        Roots::open([plan.workspace.clone()]).map_err(|e| Error::io("opening the workspace", e))?;
    // Each path must be as the newest step left it, or back as the oldest found it
    // already (nothing to do); anything else changed since.
    let mut done = Vec::new();
    // A path under one the undo removes (a symlink a step put where a directory was) is
    // not looked up through it: once that goes, nothing is there.
    let removed: std::collections::BTreeSet<PathBuf> = plan.remove.iter().cloned().collect();
    for (path, expected) in expect(&steps) {
        let now = if path.ancestors().skip(1).any(|a| removed.contains(a)) {
            None
        } else {
            current(&roots, &plan.workspace.join(&path))?
        };
        let want = plan.want.get(&path).cloned().flatten().map(side);
        if now == want {
            done.push(path);
        } else if now != expected {
            plan.conflicts.push(path);
        }
    }
    plan.restore.retain(|p| !done.contains(p));
    plan.remove.retain(|p| !done.contains(p));
    plan.conflicts.sort();
    plan.conflicts.dedup();
    Ok(plan)
}

/// How long an undo waits for a running corral to finish recording what a step changed.
const SETTLING: std::time::Duration = std::time::Duration::from_secs(30);

/// The files step `id` changed, once its run has recorded them (a run still going
/// records them on its own thread after the call: see `after`).
fn settled_files(store: &Store, id: i64, live: bool) -> Result<Vec<StepFile>> {
    let until = std::time::Instant::now() + SETTLING;
    loop {
        let files = store.step_files(id)?;
        if files.iter().any(|f| f.change == super::GIVEN_UP) {
            let seq = store.step(id)?.map_or(id, |row| row.seq);
            return Err(Error::invalid(format!(
                "step {seq} of its run can no longer be undone: its record was given up to keep its run's \
                 undo store within its budget (`[undo] store_max_mb`; a policy file raises it)"
            )));
        }
        if !files.iter().any(|f| f.change == corral_trace::PENDING) {
            return Ok(files);
        }
        if !live || std::time::Instant::now() >= until {
            return Err(Error::invalid(format!(
                "what step {id} changed was not recorded whole (the corral making the call \
                 ended, or is still recording it): it cannot be undone now"
            )));
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// What each path must be now for the undo to go ahead: as the newest step that touched
/// it left it.
fn expect(steps: &[(i64, Vec<StepFile>)]) -> Vec<(PathBuf, Option<(String, Kind)>)> {
    let mut seen = BTreeMap::new();
    for (_, files) in steps.iter().rev() {
        for f in files {
            seen.entry(path_of(f))
                .or_insert_with(|| f.after.clone().map(side));
        }
    }
    seen.into_iter().collect()
}

/// A recorded side (hash and mode) as what [`current`] finds.
fn side((hash, mode): (String, u32)) -> (String, Kind) {
    (hash, Kind::of(mode))
}

/// The steps undone newest first: each path ends as the oldest step found it. Where a
/// step left a path other than as the next step found it, something outside the steps
/// changed it between them: a conflict.
fn compose(workspace: PathBuf, steps: &[(i64, Vec<StepFile>)]) -> UndoPlan {
    let mut plan = UndoPlan {
        workspace,
        steps: steps.iter().map(|(id, _)| *id).collect(),
        ..UndoPlan::default()
    };
    for (_, files) in steps.iter().rev() {
        for f in files {
            let path = path_of(f);
            if let Some(later) = plan.want.get(&path)
                && later.as_ref().map(|l| &l.0) != f.after.as_ref().map(|a| &a.0)
            {
                plan.conflicts.push(path.clone());
            }
            plan.want.insert(path, f.before.clone());
        }
    }
    for (path, want) in &plan.want {
        match want {
            Some(_) => plan.restore.push(path.clone()),
            None => plan.remove.push(path.clone()),
        }
    }
    plan
}

fn path_of(f: &StepFile) -> PathBuf {
    PathBuf::from(OsStr::from_bytes(&f.path))
}

/// What is at `path` now, as a record says it: a regular file's content hash, a
/// symlink's target text's (never followed), an empty directory's; `None` when nothing
/// is, or a directory that holds something (a record has no entry for one).
fn current(roots: &Roots, path: &Path) -> Result<Option<(String, Kind)>> {
    use rustix::fs::FileType;
    let io = |e: std::io::Error| Error::io(format!("reading {}", path.display()), e);
    // Something no record holds (a device, a FIFO, a path through a symlink): never
    // what a step left.
    let other = Some((String::new(), Kind::File));
    let found = match roots.lstat(path) {
        Ok(found) => found,
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => return Ok(other),
        Err(e) => return Err(io(e)),
    };
    Ok(match found {
        None => None,
        Some((FileType::Symlink, target)) => Some((hex(&Sha256::digest(&target)), Kind::Link)),
        Some((FileType::Directory, _)) => roots
            .is_empty_dir(path)
            .map_err(io)?
            .then(|| (DIR_HASH.to_string(), Kind::Dir)),
        Some((FileType::RegularFile, _)) => match roots.read(path) {
            Ok(bytes) => bytes.map(|b| (hex(&Sha256::digest(&b)), Kind::File)),
            Err(e) if e.kind() == std::io::ErrorKind::InvalidInput => other,
            Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => other,
            Err(e) => return Err(io(e)),
        },
        Some(_) => other,
    })
}

/// Whether what is at `path` now is a directory.
fn is_dir(roots: &Roots, path: &Path) -> bool {
    matches!(
        roots.lstat(path),
        Ok(Some((rustix::fs::FileType::Directory, _)))
    )
}

/// Put the files back as `plan` says. Refused when it has conflicts, when a file's content
/// was not known when it was recorded, and when it would write a path the default box
/// hides or keeps read-only (see [`apply_within`]).
pub fn apply(plan: &UndoPlan, dir: &Path) -> Result<()> {
    apply_within(plan, dir, &default_box(&plan.workspace))
}

/// The sets of a `workspace-write` box in `workspace` under the default read denies, with
/// git's refs writable: what `corral undo`, outside any run, keeps an undo from writing.
fn default_box(workspace: &Path) -> Sets {
    let mut config =
        crate::config::sandbox::SandboxConfig::mode(crate::sandbox::SandboxMode::WorkspaceWrite);
    // A record holds `.git`'s refs only where calls could write them; hooks and config
    // stay protected.
    config.git_write = true;
    Sets::for_own_process(&config, workspace, &crate::sandbox::RunSandbox::default())
}

/// [`apply`] under `sets` (a run's own, for the `undo` tool). The steps:
///
/// 1. Refused when a path changed since the steps (`conflicts`).
/// 2. Refused when a file to put back changed while it was recorded (its directory
///    swapped, another file put in its place): what it held is not known.
/// 3. Refused when a path to write or remove is one `sets` hides or keeps read-only: an
///    undo never writes what a call could not (a key a record held from before the walk
///    left hidden paths out, a protected path).
/// 4. Each path written through a descriptor of the workspace, never through a link.
pub(crate) fn apply_within(plan: &UndoPlan, dir: &Path, sets: &Sets) -> Result<()> {
    refuse_conflicts(plan)?;
    refuse_unknown(plan)?;
    refuse_out_of_reach(plan, sets)?;
    write_back(plan, dir)
}

/// Step 2 of [`apply_within`].
fn refuse_unknown(plan: &UndoPlan) -> Result<()> {
    let unknown: Vec<String> = plan
        .want
        .iter()
        .filter(|(_, want)| want.as_ref().is_some_and(|(hash, _)| hash == CHANGING_HASH))
        .map(|(path, _)| path.display().to_string())
        .collect();
    if unknown.is_empty() {
        return Ok(());
    }
    Err(Error::invalid(format!(
        "not undone: {} changed while it was recorded (its directory was swapped or \
         another file put in its place as the record read it), so what it held is not \
         known; nothing was changed. Put it back by hand, or undo a step before it.",
        unknown.join(", ")
    )))
}

/// Step 3 of [`apply_within`].
fn refuse_out_of_reach(plan: &UndoPlan, sets: &Sets) -> Result<()> {
    for path in plan.restore.iter().chain(&plan.remove) {
        let full = plan.workspace.join(path);
        let why = match sets.reach(&full) {
            Reach::Hidden { rule } => rule.to_string(),
            Reach::ReadOnly { rule } => read_only(&full, &rule),
            _ => continue,
        };
        return Err(Error::policy(format!(
            "not undone: {why}, and an undo writes nothing a call could not; nothing was \
             changed. Put {} back by hand if it must be.",
            path.display()
        )));
    }
    Ok(())
}

/// Why `path` stays read-only, as a refusal says it.
fn read_only(path: &Path, rule: &ReadOnlyRule) -> String {
    match rule {
        ReadOnlyRule::Mode => format!("{} is in a read-only run", path.display()),
        ReadOnlyRule::Protected { path: p } => format!(
            "{} is under the protected path {}, which stays read-only",
            path.display(),
            p.display()
        ),
        ReadOnlyRule::Own { path: p } => format!(
            "{} is inside corral's own state or policy ({})",
            path.display(),
            p.display()
        ),
    }
}

/// Step 1 of [`apply_within`].
fn refuse_conflicts(plan: &UndoPlan) -> Result<()> {
    if !plan.conflicts.is_empty() {
        return Err(Error::invalid(format!(
            "not undone: changed since the call, so undo would overwrite that work: {}",
            plan.conflicts
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    Ok(())
}

/// Step 4 of [`apply_within`].
fn write_back(plan: &UndoPlan, dir: &Path) -> Result<()> {
    let blobs = Blobs::new(dir.join("blobs"));
    let roots =
        Roots::open([plan.workspace.clone()]).map_err(|e| Error::io("opening the workspace", e))?;
    let io = |what: &str, p: &Path| {
        let text = format!("{what} {}", p.display());
        move |e| Error::io(text, e)
    };
    for path in &plan.remove {
        let full = plan.workspace.join(path);
        let removed = if is_dir(&roots, &full) {
            roots.remove_dir(&full)
        } else {
            roots.remove(&full)
        };
        match removed {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(io("removing", path)(e)),
        }
    }
    for path in &plan.restore {
        let Some(Some((hash, mode))) = plan.want.get(path) else {
            continue;
        };
        let full = plan.workspace.join(path);
        let kind = Kind::of(*mode);
        // What the step put in its place goes: an empty directory where a file or a link
        // comes back, a file or a link where an empty directory does.
        let replaced = match (kind, is_dir(&roots, &full)) {
            (Kind::Dir, false) => roots.remove(&full),
            (Kind::File | Kind::Link, true) => roots.remove_dir(&full),
            _ => Ok(()),
        };
        match replaced {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(io("removing what replaced", path)(e)),
        }
        match kind {
            Kind::Dir => {
                roots
                    .make_dir(&full, *mode & 0o7777)
                    .map_err(io("restoring", path))?;
                continue;
            }
            // A link comes back as a link with its text, whatever it points at: nothing
            // is written through it.
            Kind::Link => {
                let target = blobs.get(hash).map_err(io("reading the record of", path))?;
                roots
                    .symlink(&full, &target)
                    .map_err(io("restoring", path))?;
                continue;
            }
            Kind::File => {}
        }
        let bytes = blobs.get(hash).map_err(io("reading the record of", path))?;
        roots
            .write(&full, &bytes, Replace::Any)
            .map_err(io("restoring", path))?;
        let fd = open_beneath(
            &roots_root(&plan.workspace)?,
            path,
            rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::NOFOLLOW,
        )
        .map_err(io("opening", path))?;
        rustix::fs::fchmod(&fd, rustix::fs::Mode::from_raw_mode(*mode & 0o7777))
            .map_err(|e| io("setting the mode of", path)(e.into()))?;
    }
    Ok(())
}

fn roots_root(workspace: &Path) -> Result<std::os::fd::OwnedFd> {
    rustix::fs::open(
        workspace,
        rustix::fs::OFlags::PATH | rustix::fs::OFlags::DIRECTORY | rustix::fs::OFlags::CLOEXEC,
        rustix::fs::Mode::empty(),
    )
    .map_err(|e| Error::io("opening the workspace", e.into()))
}
