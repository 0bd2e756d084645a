//! Who owns a run, and closing what a dead owner left.
//!
//! A run row says `running` (no `ended_at_ms`) from the moment it begins until its owner
//! records its end. An owner killed with SIGKILL, or stopped by a full disk or a power cut,
//! never does, and neither do the steps and handles it had going. So each owner holds a
//! claim for as long as it lives: an exclusive `flock` on `<db dir>/owners/<run id>`, which
//! the kernel drops when the process dies, however it dies, in whatever PID namespace it
//! ran (a claim the owner's pid says is dead, though a process it forked still holds it,
//! counts as released). The next corral to open the store tries each unended run's claim
//! ([`Store::close_abandoned`]); one it can take belongs to a dead owner, and that run, its
//! unfinished steps and its live handles are closed as `aborted` with what is known.
//!
//! A run without a claim file (written by an older corral) falls back to its pid: it is
//! abandoned when no process with that pid is left.

use std::fs::{File, OpenOptions};
use std::io::Read;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use rusqlite::params;
use serde::Serialize;

use crate::{Store, TraceError, valid_run_id};

/// A live owner's claim on its run; dropping it releases the claim (the run must have
/// been ended first, or the next opener closes it as abandoned).
#[derive(Debug)]
pub struct OwnerClaim {
    path: PathBuf,
    _file: File,
}

impl OwnerClaim {
    /// Give the claim up and remove its file: the run has ended.
    pub fn release(self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// A run whose owner died before ending it, as [`Store::close_abandoned`] closed it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Abandoned {
    /// The run it belongs to.
    pub run_id: String,
    /// The owner's pid, which is gone.
    pub pid: u32,
    /// Steps that were still running, now `aborted`.
    pub steps: usize,
    /// Handles that were still live, now `aborted`.
    pub handles: usize,
}

/// Bytes of a step's last output kept in its observation when it is closed as aborted.
const LAST_OUTPUT: u64 = 2048;

impl Store {
    /// Claim run `run_id` for this process until the claim is dropped or released.
    ///
    /// The claim file appears already locked (it is locked under a temporary name, then
    /// renamed into place), so no opener ever sees an unlocked claim of a live owner.
    pub fn claim_run(&self, run_id: &str) -> Result<OwnerClaim, TraceError> {
        let dir = self.owners_dir();
        std::fs::create_dir_all(&dir)
            .map_err(|e| TraceError::io(&self.path, "create directory", &dir, e))?;
        let path = dir.join(run_id);
        let temp = dir.join(format!(".{run_id}.{}", std::process::id()));
        let file = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&temp)
            .map_err(|e| TraceError::io(&self.path, "create", &temp, e))?;
        file.lock()
            .map_err(|e| TraceError::io(&self.path, "lock", &temp, e))?;
        // The owner's pid and PID namespace: an opener in the same namespace can tell a
        // dead owner from a live one even while something it forked holds the lock.
        let owner = format!("{} {}", std::process::id(), pid_namespace());
        let _ = file.write_all_at(owner.as_bytes(), 0);
        std::fs::rename(&temp, &path)
            .map_err(|e| TraceError::io(&self.path, "rename", &temp, e))?;
        Ok(OwnerClaim { path, _file: file })
    }

    fn owners_dir(&self) -> PathBuf {
        self.path
            .parent()
            .unwrap_or_else(|| Path::new("/"))
            .join("owners")
    }

    /// Close every run whose owner is gone: the run `aborted` as of `now_ms`, its
    /// unfinished steps `aborted` (with the capture files they had written and the end of
    /// their output), its live handles `aborted`. Each is closed once; a later call finds
    /// nothing more to do.
    pub fn close_abandoned(&self, now_ms: i64) -> Result<Vec<Abandoned>, TraceError> {
        let open: Vec<(String, i64)> = self
            .conn
            .prepare_cached("SELECT id, pid FROM runs WHERE ended_at_ms IS NULL")
            .and_then(|mut s| s.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?.collect())
            .map_err(self.err("reading runs still open"))?;
        let mut closed = Vec::new();
        for (run_id, pid) in open {
            let pid = u32::try_from(pid).unwrap_or(0);
            if !valid_run_id(&run_id) || self.owner_alive(&run_id, pid) {
                continue;
            }
            closed.push(self.close_run_as_aborted(&run_id, pid, now_ms)?);
            let _ = std::fs::remove_file(self.owners_dir().join(&run_id));
        }
        Ok(closed)
    }

    /// Whether the owner of `run_id` still lives: its claim is held (and, seen from the
    /// owner's own PID namespace, the pid the claim names is a live process), or (no
    /// claim file) a process `pid` exists. A claim still held after its owner is gone is
    /// held by something the owner forked that has not exited yet (a lock belongs to the
    /// open file, which a fork shares): the owner is dead all the same.
    fn owner_alive(&self, run_id: &str, pid: u32) -> bool {
        match File::open(self.owners_dir().join(run_id)) {
            Ok(mut file) => match file.try_lock() {
                Ok(()) => false,
                Err(std::fs::TryLockError::WouldBlock) => {
                    let mut owner = String::new();
                    let _ = file.read_to_string(&mut owner);
                    let mut words = owner.split_whitespace();
                    let claimed: Option<u32> = words.next().and_then(|p| p.parse().ok());
                    match (claimed, words.next()) {
                        // Seen from the owner's own PID namespace, its pid says it all.
                        (Some(pid), Some(ns)) if ns != "unknown" && ns == pid_namespace() => {
                            process_lives(pid)
                        }
                        _ => true,
                    }
                }
                // Cannot tell: leave it be.
                Err(std::fs::TryLockError::Error(_)) => true,
            },
            Err(_) => pid != 0 && process_lives(pid),
        }
    }

    fn close_run_as_aborted(
        &self,
        run_id: &str,
        pid: u32,
        now_ms: i64,
    ) -> Result<Abandoned, TraceError> {
        let err = self.err("closing an abandoned run");
        let why = format!("corral (pid {pid}) ended before this call did");
        let unfinished: Vec<(i64, i64, i64)> = self
            .conn
            .prepare_cached(
                "SELECT id, seq, started_at_ms FROM steps WHERE run_id = ?1 AND outcome IS NULL",
            )
            .and_then(|mut s| {
                s.query_map([run_id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
                    .collect()
            })
            .map_err(&err)?;
        let tx = self.conn.unchecked_transaction().map_err(&err)?;
        for (id, seq, started) in &unfinished {
            let dir = self.capture_dir(run_id);
            let [out, errs] =
                ["stdout", "stderr"].map(|s| Written::of(&dir.join(format!("{seq}.{s}"))));
            let mut observation = format!("aborted: {why}");
            for (name, w) in [("stdout", &out), ("stderr", &errs)] {
                if !w.last.is_empty() {
                    observation.push_str(&format!("\n[{name}, its last output]\n{}", w.last));
                }
            }
            tx.prepare_cached(
                "UPDATE steps SET outcome = 'aborted', error = ?2, observation = ?3, \
                 duration_ms = ?4, stdout_bytes = ?5, stderr_bytes = ?6, \
                 stdout_path = ?7, stderr_path = ?8 WHERE id = ?1",
            )
            .and_then(|mut s| {
                s.execute(params![
                    id,
                    why,
                    observation,
                    (now_ms - started).max(0),
                    out.bytes,
                    errs.bytes,
                    out.path,
                    errs.path,
                ])
            })
            .map_err(&err)?;
        }
        let handles = tx
            .prepare_cached(
                "UPDATE process_handles SET how = 'aborted', ended_at_ms = ?2 \
                 WHERE run_id = ?1 AND how IS NULL",
            )
            .and_then(|mut s| s.execute(params![run_id, now_ms]))
            .map_err(&err)?;
        tx.prepare_cached(
            "UPDATE runs SET ended_at_ms = ?2, ended_how = 'aborted' WHERE id = ?1 \
             AND ended_at_ms IS NULL",
        )
        .and_then(|mut s| s.execute(params![run_id, now_ms]))
        .map_err(&err)?;
        tx.commit().map_err(&err)?;
        Ok(Abandoned {
            run_id: run_id.to_string(),
            pid,
            steps: unfinished.len(),
            handles,
        })
    }
}

/// What an unfinished step had written to one capture file.
struct Written {
    bytes: i64,
    path: Option<String>,
    last: String,
}

impl Written {
    fn of(path: &Path) -> Self {
        let Ok(mut file) = File::open(path) else {
            return Self {
                bytes: 0,
                path: None,
                last: String::new(),
            };
        };
        let len = file.metadata().map_or(0, |m| m.len());
        let mut last = Vec::new();
        let from = len.saturating_sub(LAST_OUTPUT);
        let _ = std::io::Seek::seek(&mut file, std::io::SeekFrom::Start(from))
            .and_then(|_| file.read_to_end(&mut last));
        Self {
            bytes: i64::try_from(len).unwrap_or(i64::MAX),
            path: Some(path.display().to_string()),
            last: String::from_utf8_lossy(&last).into_owned(),
        }
    }
}

/// This process's PID namespace, as `/proc/self/ns/pid` names it (`pid:[4026531836]`).
fn pid_namespace() -> String {
    std::fs::read_link("/proc/self/ns/pid")
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| "unknown".into())
}

/// Whether process `pid` exists and has not exited (a zombie has).
fn process_lives(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // `pid (comm) S ...`: the state follows the last `)`.
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_none_or(|state| state != "Z" && state != "X"),
        Err(_) => false,
    }
}
