//! `process_handles` and `handle_output`: what a run started in the background, how each
//! handle ended, and every byte a poll read, appended as it was read.

use rusqlite::{OptionalExtension, Row, params};
use serde::Serialize;

use crate::records::NewHandle;
use crate::{Store, TraceError};

/// A recorded handle.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HandleRow {
    /// The run it belongs to.
    pub run_id: String,
    /// The handle id within its run.
    pub handle: u32,
    /// The step it belongs to, when it belongs to one.
    pub step_id: Option<i64>,
    /// The command line as asked.
    pub line: String,
    /// Every stage's argv, as JSON.
    pub stages_json: String,
    /// The process ids it started, as JSON.
    pub pids_json: String,
    /// The containment its processes ran in.
    pub containment: String,
    /// The capture file of its output.
    pub capture_path: Option<String>,
    /// The process id of the corral that started it.
    pub owner_pid: u32,
    /// When it started, in ms since the Unix epoch.
    pub started_at_ms: i64,
    /// When it ended, in ms since the Unix epoch; `None` while it runs.
    pub ended_at_ms: Option<i64>,
    /// `exited`, `killed`, `run_ended`, `orphaned`; `None` while it runs.
    pub how: Option<String>,
    /// The exit code, when it exited.
    pub exit_code: Option<i32>,
    /// The signal that ended it, when one did.
    pub signal: Option<i32>,
}

/// One poll's read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HandleOutputRow {
    /// When it happened, in ms since the Unix epoch.
    pub at_ms: i64,
    /// The logical offset of the first byte read.
    pub offset: u64,
    /// Bytes skipped before it (more than one poll's window was waiting).
    pub skipped: u64,
    /// Bytes carried.
    pub bytes: Vec<u8>,
}

const COLUMNS: &str = "run_id, handle, step_id, line, stages_json, pids_json, containment, capture_path, \
                       owner_pid, started_at_ms, ended_at_ms, how, exit_code, signal";

fn row(r: &Row<'_>) -> rusqlite::Result<HandleRow> {
    Ok(HandleRow {
        run_id: r.get(0)?,
        handle: r.get(1)?,
        step_id: r.get(2)?,
        line: r.get(3)?,
        stages_json: r.get(4)?,
        pids_json: r.get(5)?,
        containment: r.get(6)?,
        capture_path: r.get(7)?,
        owner_pid: r.get(8)?,
        started_at_ms: r.get(9)?,
        ended_at_ms: r.get(10)?,
        how: r.get(11)?,
        exit_code: r.get(12)?,
        signal: r.get(13)?,
    })
}

impl Store {
    /// Record a handle at the moment it starts.
    pub fn record_handle_start(&self, h: &NewHandle) -> Result<(), TraceError> {
        self.conn
            .prepare_cached(
                "INSERT INTO process_handles (run_id, handle, step_id, line, stages_json, pids_json, \
                 containment, capture_path, owner_pid, started_at_ms) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            )
            .and_then(|mut s| {
                s.execute(params![
                    h.run_id,
                    h.handle,
                    h.step_id,
                    h.line,
                    h.stages_json,
                    h.pids_json,
                    h.containment,
                    h.capture_path,
                    h.owner_pid,
                    h.started_at_ms
                ])
            })
            .map(|_| crate::observe::notify(|o| o.handle_started(h)))
            .map_err(self.err("recording a handle"))
    }

    /// Record how a handle ended (only the first end counts).
    pub fn record_handle_end(
        &self,
        run_id: &str,
        handle: u32,
        ended_at_ms: i64,
        how: &str,
        exit_code: Option<i32>,
        signal: Option<i32>,
    ) -> Result<(), TraceError> {
        self.conn
            .prepare_cached(
                "UPDATE process_handles SET ended_at_ms = ?3, how = ?4, exit_code = ?5, signal = ?6 \
                 WHERE run_id = ?1 AND handle = ?2 AND how IS NULL",
            )
            .and_then(|mut s| s.execute(params![run_id, handle, ended_at_ms, how, exit_code, signal]))
            .map(|changed| {
                // Only the first end counts, here as in the table.
                if changed > 0 {
                    crate::observe::notify(|o| {
                        o.handle_ended(run_id, handle, ended_at_ms, how, exit_code, signal)
                    });
                }
            })
            .map_err(self.err("recording a handle's end"))
    }

    /// Append what one poll read.
    pub fn record_handle_output(
        &self,
        run_id: &str,
        handle: u32,
        at_ms: i64,
        offset: u64,
        skipped: u64,
        bytes: &[u8],
    ) -> Result<(), TraceError> {
        self.conn
            .prepare_cached(
                "INSERT INTO handle_output (run_id, handle, at_ms, offset, skipped, bytes) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            )
            .and_then(|mut s| {
                s.execute(params![
                    run_id,
                    handle,
                    at_ms,
                    offset as i64,
                    skipped as i64,
                    bytes
                ])
            })
            .map(|_| ())
            .map_err(self.err("recording a handle's output"))
    }

    /// A run's handles, in the order they started.
    pub fn handles(&self, run_id: &str) -> Result<Vec<HandleRow>, TraceError> {
        self.conn
            .prepare_cached(&format!(
                "SELECT {COLUMNS} FROM process_handles WHERE run_id = ?1 ORDER BY handle"
            ))
            .and_then(|mut s| s.query_map([run_id], row)?.collect())
            .map_err(self.err("listing handles"))
    }

    /// One handle.
    pub fn handle(&self, run_id: &str, handle: u32) -> Result<Option<HandleRow>, TraceError> {
        self.conn
            .prepare_cached(&format!(
                "SELECT {COLUMNS} FROM process_handles WHERE run_id = ?1 AND handle = ?2"
            ))
            .and_then(|mut s| s.query_row(params![run_id, handle], row).optional())
            .map_err(self.err("reading a handle"))
    }

    /// Everything the polls of one handle read, in order.
    pub fn handle_output(
        &self,
        run_id: &str,
        handle: u32,
    ) -> Result<Vec<HandleOutputRow>, TraceError> {
        self.conn
            .prepare_cached(
                "SELECT at_ms, offset, skipped, bytes FROM handle_output WHERE run_id = ?1 AND handle = ?2 ORDER BY id",
            )
            .and_then(|mut s| {
                s.query_map(params![run_id, handle], |r| {
                    Ok(HandleOutputRow {
                        at_ms: r.get(0)?,
                        offset: r.get::<_, i64>(1)? as u64,
                        skipped: r.get::<_, i64>(2)? as u64,
                        bytes: r.get(3)?,
                    })
                })?
                .collect()
            })
            .map_err(self.err("reading a handle's output"))
    }

    /// Mark every handle of `run_id` that never ended as orphaned, as of `at_ms`: the
    /// process that owned it is gone. Returns how many.
    pub fn orphan_handles(&self, run_id: &str, at_ms: i64) -> Result<usize, TraceError> {
        self.conn
            .prepare_cached(
                "UPDATE process_handles SET how = 'orphaned', ended_at_ms = ?2 WHERE run_id = ?1 AND how IS NULL",
            )
            .and_then(|mut s| s.execute(params![run_id, at_ms]))
            .map_err(self.err("marking orphaned handles"))
    }

    /// Reopen an ended run in this process: it no longer counts as ended.
    pub fn reopen_run(&self, run_id: &str, pid: u32) -> Result<(), TraceError> {
        let n = self
            .conn
            .prepare_cached(
                "UPDATE runs SET ended_at_ms = NULL, ended_how = NULL, pid = ?2 WHERE id = ?1",
            )
            .and_then(|mut s| s.execute(params![run_id, pid]))
            .map_err(self.err("reopening a run"))?;
        if n == 0 {
            return Err(TraceError::no_such(&self.path, format!("run {run_id:?}")));
        }
        Ok(())
    }
}
