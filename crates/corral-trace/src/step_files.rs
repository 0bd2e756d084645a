//! `step_files` (version 9): per step, the workspace files it added, modified and
//! deleted, each with its content before and after as the hash of a blob in corral's
//! undo store. "What did the agent change" is one query:
//!
//! ```sql
//! SELECT s.seq, f.change, f.path FROM step_files f JOIN steps s ON s.id = f.step_id
//!  WHERE f.run_id = ?1 ORDER BY s.seq, f.path;
//! ```

use rusqlite::{Row, params};
use serde::Serialize;

use crate::{Store, TraceError};

pub(crate) const STEP_FILES: &str = "
CREATE TABLE step_files (
    id          INTEGER PRIMARY KEY,
    run_id      TEXT    NOT NULL REFERENCES runs (id),
    step_id     INTEGER NOT NULL REFERENCES steps (id),
    path        BLOB    NOT NULL,
    change      TEXT    NOT NULL,
    before_hash TEXT,
    before_mode INTEGER,
    after_hash  TEXT,
    after_mode  INTEGER
);
CREATE INDEX step_files_by_step ON step_files (step_id, id);
CREATE INDEX step_files_by_run ON step_files (run_id, step_id);
";

/// The `change` of the one row a step has while what it changed is still being recorded
/// (its path empty): a reader waits for it to be replaced by the step's rows.
pub const PENDING: &str = "pending";

/// One file one step changed. A side that is `None` had no file (added: no `before`;
/// deleted: no `after`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StepFile {
    /// The path relative to the run's workspace, as bytes.
    pub path: Vec<u8>,
    /// `added`, `modified` or `deleted`.
    pub change: String,
    /// The content's hash and the file's mode before the step.
    pub before: Option<(String, u32)>,
    /// The same after it.
    pub after: Option<(String, u32)>,
}

fn row(r: &Row<'_>) -> rusqlite::Result<(i64, StepFile)> {
    let side = |hash: Option<String>, mode: Option<u32>| hash.zip(mode);
    Ok((
        r.get(0)?,
        StepFile {
            path: r.get(1)?,
            change: r.get(2)?,
            before: side(r.get(3)?, r.get(4)?),
            after: side(r.get(5)?, r.get(6)?),
        },
    ))
}

const COLUMNS: &str =
    "step_id, path, change, before_hash, before_mode, after_hash, after_mode FROM step_files";

impl Store {
    /// Record the files step `step_id` of `run_id` changed, in one transaction.
    pub fn record_step_files(
        &self,
        run_id: &str,
        step_id: i64,
        files: &[StepFile],
    ) -> Result<(), TraceError> {
        self.batch(|store| {
            let mut insert = store
                .conn
                .prepare_cached(
                    "INSERT INTO step_files (run_id, step_id, path, change, before_hash, \
                     before_mode, after_hash, after_mode) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                )
                .map_err(store.err("recording a step's files"))?;
            for f in files {
                insert
                    .execute(params![
                        run_id,
                        step_id,
                        f.path,
                        f.change,
                        f.before.as_ref().map(|b| &b.0),
                        f.before.as_ref().map(|b| b.1),
                        f.after.as_ref().map(|a| &a.0),
                        f.after.as_ref().map(|a| a.1),
                    ])
                    .map_err(store.err("recording a step's files"))?;
            }
            Ok(())
        })
    }

    /// Mark step `step_id` of `run_id` as having its files still being recorded (see
    /// [`PENDING`]).
    pub fn mark_step_files_pending(&self, run_id: &str, step_id: i64) -> Result<(), TraceError> {
        self.replace_step_files(
            run_id,
            step_id,
            &[StepFile {
                path: Vec::new(),
                change: PENDING.into(),
                before: None,
                after: None,
            }],
        )
    }

    /// Make the files recorded for step `step_id` of `run_id` these, in one transaction:
    /// a handle's step is recorded again at each poll and at its end.
    pub fn replace_step_files(
        &self,
        run_id: &str,
        step_id: i64,
        files: &[StepFile],
    ) -> Result<(), TraceError> {
        self.batch(|store| {
            store
                .conn
                .prepare_cached("DELETE FROM step_files WHERE step_id = ?1")
                .and_then(|mut s| s.execute([step_id]))
                .map_err(store.err("replacing a step's files"))?;
            store.record_step_files(run_id, step_id, files)
        })
    }

    /// The files step `step_id` changed, by path.
    pub fn step_files(&self, step_id: i64) -> Result<Vec<StepFile>, TraceError> {
        self.conn
            .prepare_cached(&format!(
                "SELECT {COLUMNS} WHERE step_id = ?1 ORDER BY path"
            ))
            .and_then(|mut s| {
                s.query_map([step_id], row)?
                    .map(|r| r.map(|(_, f)| f))
                    .collect()
            })
            .map_err(self.err("listing a step's files"))
    }

    /// The steps of `run_id` that changed files, oldest first, each with its files.
    pub fn run_files(&self, run_id: &str) -> Result<Vec<(i64, Vec<StepFile>)>, TraceError> {
        let rows: Vec<(i64, StepFile)> = self
            .conn
            .prepare_cached(&format!(
                "SELECT {COLUMNS} WHERE run_id = ?1 ORDER BY step_id, path"
            ))
            .and_then(|mut s| s.query_map([run_id], row)?.collect())
            .map_err(self.err("listing a run's files"))?;
        let mut steps: Vec<(i64, Vec<StepFile>)> = Vec::new();
        for (step, file) in rows {
            match steps.last_mut() {
                Some((last, files)) if *last == step => files.push(file),
                _ => steps.push((step, vec![file])),
            }
        }
        Ok(steps)
    }

    /// The newest `limit` steps that changed files in runs whose workspace is
    /// `workspace`, newest first.
    pub fn changing_steps(&self, workspace: &str, limit: usize) -> Result<Vec<i64>, TraceError> {
        self.conn
            .prepare_cached(
                "SELECT DISTINCT f.step_id FROM step_files f JOIN runs r ON r.id = f.run_id \
                 WHERE r.workspace = ?1 ORDER BY f.step_id DESC LIMIT ?2",
            )
            .and_then(|mut s| {
                s.query_map(params![workspace, limit as i64], |r| r.get(0))?
                    .collect()
            })
            .map_err(self.err("finding the steps that changed files"))
    }

    /// Forget the files recorded for the runs that recorded any beyond the newest
    /// `keep_runs` of them, or started before `started_before_ms`: the undo of those runs
    /// is given up. A run still going, and the newest run that recorded files, are kept
    /// whatever the bounds. The runs forgotten.
    pub fn prune_step_files(
        &self,
        keep_runs: usize,
        started_before_ms: i64,
    ) -> Result<Vec<String>, TraceError> {
        let runs: Vec<(String, i64, bool)> = self
            .conn
            .prepare_cached(
                "SELECT r.id, r.started_at_ms, r.ended_at_ms IS NULL FROM runs r \
                 WHERE EXISTS (SELECT 1 FROM step_files f WHERE f.run_id = r.id) \
                 ORDER BY r.started_at_ms DESC, r.rowid DESC",
            )
            .and_then(|mut s| {
                s.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
                    .collect()
            })
            .map_err(self.err("reading runs for pruning their files"))?;
        let mut kept = 0usize;
        let mut forgotten = Vec::new();
        for (i, (id, started, live)) in runs.into_iter().enumerate() {
            if live || i == 0 || (kept < keep_runs && started >= started_before_ms) {
                kept += 1;
            } else {
                forgotten.push(id);
            }
        }
        self.batch(|store| {
            let mut delete = store
                .conn
                .prepare_cached("DELETE FROM step_files WHERE run_id = ?1")
                .map_err(store.err("pruning a run's files"))?;
            for id in &forgotten {
                delete
                    .execute([id])
                    .map_err(store.err("pruning a run's files"))?;
            }
            Ok(())
        })?;
        Ok(forgotten)
    }

    /// Every content hash the recorded files name, before or after.
    pub fn step_file_hashes(&self) -> Result<std::collections::HashSet<String>, TraceError> {
        self.conn
            .prepare_cached(
                "SELECT before_hash FROM step_files WHERE before_hash IS NOT NULL \
                 UNION SELECT after_hash FROM step_files WHERE after_hash IS NOT NULL",
            )
            .and_then(|mut s| s.query_map([], |r| r.get(0))?.collect())
            .map_err(self.err("reading the recorded files' hashes"))
    }

    /// When the oldest run still going started (a crashed one counts until a later run
    /// closes it).
    pub fn oldest_live_run_ms(&self) -> Result<Option<i64>, TraceError> {
        self.conn
            .prepare_cached("SELECT MIN(started_at_ms) FROM runs WHERE ended_at_ms IS NULL")
            .and_then(|mut s| s.query_row([], |r| r.get(0)))
            .map_err(self.err("finding the runs still going"))
    }

    /// The ids of the runs still going (not ended), oldest first.
    pub fn live_run_ids(&self) -> Result<Vec<String>, TraceError> {
        self.conn
            .prepare_cached("SELECT id FROM runs WHERE ended_at_ms IS NULL ORDER BY started_at_ms")
            .and_then(|mut s| {
                s.query_map([], |r| r.get(0))?
                    .collect::<rusqlite::Result<Vec<String>>>()
            })
            .map_err(self.err("finding the runs still going"))
    }
}
