//! corral's trace: the record of what ran.
//!
//! The trace is one SQLite database (by default
//! `$XDG_STATE_HOME/corral/trace.db`, i.e. `~/.local/state/corral/trace.db`;
//! this crate just takes a path) in WAL mode, so operators can read it with
//! `sqlite3` while corral is writing. Only this crate knows SQLite; the rest
//! of corral goes through [`Store`].
//!
//! Durability: commits are not synced (`synchronous = NORMAL`): a crash of corral loses
//! nothing, a power loss can lose the last commits but never leaves the store damaged.
//! Closing a store checkpoints its log into the database and syncs it, unless
//! [`Store::keep_log_on_close`] was asked for (a process that makes one call, such as
//! `corral exec`): then the rows stay in the `-wal` file beside the database, where
//! every SQLite reader finds them, until a later checkpoint (SQLite's own, once the log
//! passes [`KEPT_LOG_PAGES`] pages, or a close without that option) moves them in.
//!
//! # Schema (version 1)
//!
//! `runs`: one row per corral session.
//!
//! | column | meaning |
//! |---|---|
//! | `id` | run id (also the name of its capture directory) |
//! | `workspace` | the workspace root the run was confined to |
//! | `started_at_ms`, `ended_at_ms` | Unix milliseconds; `ended_at_ms` is NULL while running (or if the process died) |
//! | `ended_how` | `closed`, `dropped`, `error`, `panic`, `signal`, ... |
//! | `pid` | the corral process |
//! | `config_json` | the effective configuration |
//! | `capture_bytes` | bytes of capture files its steps wrote |
//! | `captures_pruned` | 1 once retention deleted its capture directory |
//!
//! `steps`: one row per tool call, inserted when the call starts and completed
//! when it finishes (so a row with NULL `outcome` is a call that was still
//! running, or whose process died).
//!
//! | column | meaning |
//! |---|---|
//! | `id` | global step id |
//! | `run_id`, `seq` | the run, and the call's number within it (1, 2, 3, ...) |
//! | `tool` | `exec`, `shell`, ... |
//! | `call_json` | the call exactly as the model asked for it |
//! | `argv_json` | the argv as spawned (a multi-stage line: an array of stage argvs); NULL if nothing was spawned |
//! | `cwd`, `started_at_ms`, `duration_ms` | where and when |
//! | `exit_code`, `signal`, `timed_out` | how the process ended |
//! | `outcome` | `exited`, `signaled`, `timed_out`, `unavailable`, `refused`, `error`, `answered` (an interaction with a handle that still runs), `yielded` (a call that became a handle), ... |
//! | `stdout_bytes`, `stderr_bytes` | full output sizes |
//! | `stdout_path`, `stderr_path` | capture files of the full output |
//! | `captures_pruned` | 1 once retention deleted those files |
//! | `observation` | the text the model was shown |
//! | `error` | corral's own error, if any |
//! | `containment` | the unit its processes ran in, e.g. `cgroup-v2+pids+pid-ns` (version 5) |
//!
//! `model_turns` (version 6): a task run's model turns; see the `model_turns` module.
//! `sandbox_events.kind` (version 6): `layer` for a call's sandbox layers, `gate_output`
//! and `gate_phase_failed` for a verification gate.
//! `sandbox_events.host`, `port`, `allowed`, `bytes` (version 7): the sandbox proxy's
//! decisions, rows of `kind = 'network'`; see the `network_events` module.
//! `step_files` (version 9): per step, the files it added, modified and deleted; see the
//! `step_files` module.
//!
//! What ran in a run:
//!
//! ```sql
//! SELECT seq, tool, argv_json, exit_code FROM steps WHERE run_id = ? ORDER BY seq;
//! ```
//!
//! What was refused:
//!
//! ```sql
//! SELECT run_id, seq, call_json, observation FROM steps WHERE outcome = 'refused';
//! ```
//!
//! The schema version is `PRAGMA user_version`; a corral trace also has
//! `PRAGMA application_id = 1668444780` ("crrl"). Later versions add
//! tables and columns; a store newer than the running corral is refused, never
//! downgraded.
//!
//! # Captures and retention
//!
//! The full stdout/stderr of each step lives beside the database, in
//! `<db dir>/captures/<run_id>/` ([`Store::capture_dir`]), made with the run's
//! first capture file (a run whose calls print nothing has none). Rows are kept
//! forever; capture files are not: [`Store::prune`] keeps the captures of the
//! newest runs (100 by default) up to a total size (2 GiB by default),
//! deletes older runs' capture directories and marks their steps'
//! `captures_pruned`, so tools can say "pruned" rather than "missing". Runs
//! still in progress, and the newest run that has ended, are never pruned.
//!
//! # Observers
//!
//! A process may install one [`Observer`] ([`set_observer`]): after each successful write
//! of a run, step, policy or sandbox event, handle or model turn, every [`Store`] of the
//! process tells it what was written. `corral-otel` is one: it turns the records into
//! OpenTelemetry spans, so the trace leaves the node without the call paths knowing.

#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod error;
mod handles;
mod insert;
mod model_turns;
mod network_events;
mod observe;
mod owners;
mod policy_events;
mod records;
mod sandbox_events;
mod schema;
mod step_files;

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::config::DbConfig;
use rusqlite::{Connection, OpenFlags, OptionalExtension, Row, TransactionBehavior, params};
use serde::Serialize;

use error::Source;
pub use error::{TraceError, TraceErrorKind};
pub use handles::{HandleOutputRow, HandleRow};
use insert::InsertRow as _;
pub use model_turns::ModelTurnRow;
pub use network_events::{NetworkEventRow, NewNetworkEvent};
pub use observe::{Observer, set_observer};
pub use owners::{Abandoned, OwnerClaim};
pub use policy_events::PolicyEventRow;
pub use records::{NewHandle, NewModelTurn, NewPolicyEvent, NewSandboxEvent};
pub use sandbox_events::SandboxEventRow;
pub use step_files::{PENDING, StepFile};

/// The schema version this code writes and understands.
pub const SCHEMA_VERSION: usize = schema::MIGRATIONS.len();

/// How long a statement waits for another process's lock before failing.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// An open trace store. `Send` but not `Sync`: share it behind a `Mutex`.
#[derive(Debug)]
pub struct Store {
    conn: Connection,
    path: PathBuf,
}

/// A run about to start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewRun {
    /// Run id: ASCII letters, digits, `-`, `_`, `.` (it names a directory).
    pub id: String,
    /// The workspace root.
    pub workspace: String,
    /// When it started, in ms since the Unix epoch.
    pub started_at_ms: i64,
    /// The process id of the corral that owns it.
    pub pid: u32,
    /// The configuration it ran under, as JSON.
    pub config_json: String,
}

/// A tool call about to start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewStep {
    /// The run it belongs to.
    pub run_id: String,
    /// `exec`, `shell`, ...
    pub tool: String,
    /// The call as the model asked for it.
    pub call_json: String,
    /// The directory it ran in.
    pub cwd: String,
    /// When it started, in ms since the Unix epoch.
    pub started_at_ms: i64,
}

/// The ids of a step just begun.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct StepIds {
    /// Global id (the row id).
    pub id: i64,
    /// 1, 2, 3, ... within the run.
    pub seq: i64,
}

/// How a tool call ended.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct StepDone {
    /// The argv as spawned (a multi-stage line: a JSON array of stage argvs);
    /// `"null"` (stored as SQL NULL) when nothing was spawned.
    pub argv_json: String,
    /// How long it took, in ms.
    pub duration_ms: i64,
    /// The exit code, when it exited.
    pub exit_code: Option<i32>,
    /// The signal that ended it, when one did.
    pub signal: Option<i32>,
    /// Whether it was ended at its deadline.
    pub timed_out: bool,
    /// `exited`, `signaled`, `timed_out`, `unavailable`, `refused`, `error`, ...
    pub outcome: String,
    /// Bytes it wrote to stdout.
    pub stdout_bytes: u64,
    /// Bytes it wrote to stderr.
    pub stderr_bytes: u64,
    /// The capture file of its stdout, if it wrote any.
    pub stdout_path: Option<String>,
    /// The capture file of its stderr, if it wrote any.
    pub stderr_path: Option<String>,
    /// The text the model was shown.
    pub observation: String,
    /// Why it failed, when it did.
    pub error: Option<String>,
    /// The containment unit its processes ran in; `None` when nothing was spawned.
    pub containment: Option<String>,
}

/// A run as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RunRow {
    /// Its row id.
    pub id: String,
    /// The workspace root.
    pub workspace: String,
    /// When it started, in ms since the Unix epoch.
    pub started_at_ms: i64,
    /// When it ended, in ms since the Unix epoch; `None` while it runs.
    pub ended_at_ms: Option<i64>,
    /// How it ended (`closed`, `aborted`, …); `None` while it runs.
    pub ended_how: Option<String>,
    /// The process id of the corral that owns it.
    pub pid: u32,
    /// The configuration it ran under, as JSON.
    pub config_json: String,
    /// Number of steps (its highest `seq`: steps are numbered densely and
    /// never deleted).
    pub steps: i64,
    /// Bytes of capture files written by its steps (as recorded, even after
    /// pruning).
    pub capture_bytes: i64,
    /// Its capture directory has been deleted by retention.
    pub captures_pruned: bool,
}

/// A step as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StepRow {
    /// Its row id.
    pub id: i64,
    /// The run it belongs to.
    pub run_id: String,
    /// Its number within the run, from 1.
    pub seq: i64,
    /// The tool called.
    pub tool: String,
    /// The call as asked, as JSON.
    pub call_json: String,
    /// The argv of every stage as spawned, as JSON.
    pub argv_json: Option<String>,
    /// The directory it ran in.
    pub cwd: String,
    /// When it started, in ms since the Unix epoch.
    pub started_at_ms: i64,
    /// `None` until the step finished.
    pub duration_ms: Option<i64>,
    /// The exit code, when it exited.
    pub exit_code: Option<i32>,
    /// The signal that ended it, when one did.
    pub signal: Option<i32>,
    /// Whether it was ended at its deadline.
    pub timed_out: bool,
    /// `None` until the step finished.
    pub outcome: Option<String>,
    /// Bytes it wrote to stdout.
    pub stdout_bytes: u64,
    /// Bytes it wrote to stderr.
    pub stderr_bytes: u64,
    /// The capture file of its stdout, if it wrote any.
    pub stdout_path: Option<String>,
    /// The capture file of its stderr, if it wrote any.
    pub stderr_path: Option<String>,
    /// Whether retention removed its capture files.
    pub captures_pruned: bool,
    /// The text the model read.
    pub observation: Option<String>,
    /// Why it failed, when it did.
    pub error: Option<String>,
    /// The containment unit its processes ran in (steps recorded before schema 5, and
    /// steps that spawned nothing, have none).
    pub containment: Option<String>,
}

/// How much capture output to keep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retention {
    /// Keep the captures of this many newest runs (default 100).
    pub keep_runs: usize,
    /// Keep at most this many capture bytes in all (default 2 GiB).
    pub max_capture_bytes: u64,
}

impl Default for Retention {
    fn default() -> Self {
        Retention {
            keep_runs: 100,
            max_capture_bytes: 2 << 30,
        }
    }
}

/// What [`Store::prune`] removed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct PruneReport {
    /// Runs whose captures were pruned by this call.
    pub runs_pruned: usize,
    /// Capture bytes those runs had recorded.
    pub bytes_freed: u64,
}

const STEP_COLUMNS: &str = "id, run_id, seq, tool, call_json, argv_json, cwd, started_at_ms, \
     duration_ms, exit_code, signal, timed_out, outcome, stdout_bytes, stderr_bytes, \
     stdout_path, stderr_path, captures_pruned, observation, error, containment";

const RUN_COLUMNS: &str = "r.id, r.workspace, r.started_at_ms, r.ended_at_ms, r.ended_how, \
     r.pid, r.config_json, \
     (SELECT coalesce(max(s.seq), 0) FROM steps s WHERE s.run_id = r.id), \
     r.capture_bytes, r.captures_pruned";

/// How many pages a log kept between runs ([`Store::keep_log_on_close`]) grows to before
/// SQLite checkpoints it: a few calls' rows. Each later open reads every frame back (a
/// few µs each), and each checkpoint costs two `fsync`s: a command-line call writes
/// twenty-odd frames (BENCHMARKS.md, round eight).
pub const KEPT_LOG_PAGES: u32 = 80;

impl Store {
    /// Open the store at `path`, creating it (and its parent directories) if
    /// missing, and bring its schema up to date.
    ///
    /// An existing file that is not a corral trace (not an SQLite database,
    /// damaged, truncated, another program's database) or is from a newer
    /// corral is refused with an error naming it; it is never replaced.
    pub fn open(path: &Path) -> Result<Store, TraceError> {
        let path = absolute(path)?;
        match std::fs::metadata(&path) {
            Ok(meta) if meta.is_dir() => {
                return Err(TraceError::open(&path, "it is a directory", None));
            }
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                if let Some(parent) = path.parent() {
                    std::fs::create_dir_all(parent)
                        .map_err(|e| TraceError::io(&path, "create directory", parent, e))?;
                }
            }
            Err(e) => {
                return Err(TraceError::open(
                    &path,
                    "cannot inspect it",
                    Some(Source::Io(e)),
                ));
            }
        }
        Self::open_at(path, OpenFlags::SQLITE_OPEN_CREATE)
    }

    /// Open an existing store (for `corral trace ...`). A missing file is an
    /// error of kind [`TraceErrorKind::NotFound`]; nothing is created.
    ///
    /// The store is opened read-write when possible so that an older schema
    /// can be brought up to date; read-only files can still be read if
    /// their schema is current.
    pub fn open_existing(path: &Path) -> Result<Store, TraceError> {
        let path = absolute(path)?;
        match std::fs::metadata(&path) {
            Ok(meta) if meta.is_dir() => Err(TraceError::open(&path, "it is a directory", None)),
            Ok(_) => Self::open_at(path, OpenFlags::empty()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                Err(TraceError::store_missing(&path))
            }
            Err(e) => Err(TraceError::open(
                &path,
                "cannot inspect it",
                Some(Source::Io(e)),
            )),
        }
    }

    /// Open an existing store only to read it (for `corral trace` listings): nothing is
    /// written, not even a migration, so a store on a read-only filesystem, or one whose
    /// file or directory the reader may not write, can still be read. A store from an
    /// older corral must be opened writable once first; the error says so.
    pub fn open_read_only(path: &Path) -> Result<Store, TraceError> {
        let path = absolute(path)?;
        match std::fs::metadata(&path) {
            Ok(meta) if meta.is_dir() => {
                return Err(TraceError::open(&path, "it is a directory", None));
            }
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(TraceError::store_missing(&path));
            }
            Err(e) => {
                return Err(TraceError::open(
                    &path,
                    "cannot inspect it",
                    Some(Source::Io(e)),
                ));
            }
        }
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let check = |e| TraceError::sql(&path, "reading the header", e);
        let conn = Connection::open_with_flags(&path, flags)
            .map_err(|e| TraceError::sql(&path, "opening", e))?;
        conn.busy_timeout(BUSY_TIMEOUT).map_err(check)?;
        let conn = match conn.pragma_query_value(None, "application_id", |r| r.get::<_, i32>(0)) {
            Ok(_) => conn,
            // A WAL store whose `-shm` file is gone (its last writer closed cleanly) and
            // cannot be made again (a read-only filesystem): nothing can write it either,
            // so it is read as the immutable file it is.
            Err(e) if e.sqlite_error_code() == Some(rusqlite::ErrorCode::CannotOpen) => {
                drop(conn);
                Connection::open_with_flags(
                    immutable_uri(&path),
                    flags | OpenFlags::SQLITE_OPEN_URI,
                )
                .map_err(|e| TraceError::sql(&path, "opening", e))?
            }
            Err(e) => return Err(check(e)),
        };
        let app_id: i32 = conn
            .pragma_query_value(None, "application_id", |r| r.get(0))
            .map_err(check)?;
        let version: i64 = conn
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .map_err(check)?;
        if app_id != schema::APPLICATION_ID {
            return Err(TraceError::not_a_trace(
                &path,
                format!("application_id {app_id:#x} is not corral's"),
                None,
            ));
        }
        if version > SCHEMA_VERSION as i64 {
            return Err(TraceError::too_new(&path, version, SCHEMA_VERSION));
        }
        if version < SCHEMA_VERSION as i64 {
            return Err(TraceError::invalid(
                &path,
                format!(
                    "it has schema version {version}, older than this corral's {SCHEMA_VERSION}, and is opened read-only: run any corral command that writes the trace (e.g. `corral exec -- true`) once with write access to bring it up to date"
                ),
            ));
        }
        Ok(Store { conn, path })
    }

    fn open_at(path: PathBuf, extra: OpenFlags) -> Result<Store, TraceError> {
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX | extra;
        let mut conn = Connection::open_with_flags(&path, flags)
            .map_err(|e| TraceError::sql(&path, "opening", e))?;
        let check = |e| TraceError::sql(&path, "reading the header", e);
        conn.busy_timeout(BUSY_TIMEOUT).map_err(check)?;

        // Identify the file before anything writes to it.
        let app_id: i32 = conn
            .pragma_query_value(None, "application_id", |r| r.get(0))
            .map_err(check)?;
        let version: i64 = conn
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .map_err(check)?;
        let objects: i64 = conn
            .query_row("SELECT count(*) FROM sqlite_schema", [], |r| r.get(0))
            .map_err(check)?;
        if app_id != schema::APPLICATION_ID {
            let fresh = app_id == 0 && version == 0 && objects == 0;
            if !fresh {
                let detail = if app_id != 0 {
                    format!("an SQLite database of another application, application_id {app_id:#x}")
                } else {
                    format!(
                        "an SQLite database with {objects} schema objects that are not corral's"
                    )
                };
                return Err(TraceError::not_a_trace(&path, detail, None));
            }
        }
        if version > SCHEMA_VERSION as i64 {
            return Err(TraceError::too_new(&path, version, SCHEMA_VERSION));
        }

        let setup = |e| TraceError::sql(&path, "configuring the connection", e);
        let _mode: String = conn
            .pragma_update_and_check(None, "journal_mode", "WAL", |r| r.get(0))
            .map_err(setup)?;
        conn.pragma_update(None, "synchronous", "NORMAL")
            .map_err(setup)?;
        conn.pragma_update(None, "foreign_keys", true)
            .map_err(setup)?;
        // Plans must not depend on bound values: otherwise SQLite re-prepares
        // some cached statements on every bind, which dominates a step's cost.
        conn.set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true)
            .map_err(setup)?;
        // Room for every statement the store prepares (about forty): a run that uses them
        // all must not evict the ones each call uses.
        conn.set_prepared_statement_cache_capacity(64);

        if (version as usize) < SCHEMA_VERSION {
            migrate(&mut conn, &path)?;
        }
        Ok(Store { conn, path })
    }

    /// Leave the log (`-wal`) in place when this store is closed instead of checkpointing
    /// it into the database: no `fsync` at the close, and none at the next open (a log
    /// that already has frames needs no new header). What that gives up is said in the
    /// crate docs: until a later checkpoint, the last rows are on disk only once the
    /// kernel writes them back, and a copy of the database file alone lacks them.
    ///
    /// The log is then checkpointed every [`KEPT_LOG_PAGES`] pages instead of SQLite's
    /// 1,000: the first reader of a log no process holds open rebuilds its index from
    /// every frame, so a kept log's length is paid by each later open.
    pub fn keep_log_on_close(&self) -> Result<(), TraceError> {
        let fail = |e| TraceError::sql(&self.path, "configuring the connection", e);
        self.conn
            .set_db_config(DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, true)
            .map_err(fail)?;
        self.conn
            .pragma_update(None, "wal_autocheckpoint", KEPT_LOG_PAGES)
            .map_err(fail)
    }

    /// The database file (absolute).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// `<db dir>/captures/<run_id>`: where a run's capture files go. Not
    /// created here.
    pub fn capture_dir(&self, run_id: &str) -> PathBuf {
        self.captures_root().join(run_id)
    }

    fn captures_root(&self) -> PathBuf {
        self.path
            .parent()
            .unwrap_or_else(|| Path::new("/"))
            .join("captures")
    }

    fn err(&self, action: &'static str) -> impl Fn(rusqlite::Error) -> TraceError + '_ {
        move |e| TraceError::sql(&self.path, action, e)
    }

    /// Make every write `write` does one transaction: one commit (one append to the log,
    /// one round of locks) for rows that belong together, instead of one each. All or
    /// none are kept: on an error the transaction is rolled back and the error returned
    /// (an observer of the store has heard of the rows written before it). Inside a
    /// batch already, `write` joins it.
    pub fn batch<T>(
        &self,
        write: impl FnOnce(&Store) -> Result<T, TraceError>,
    ) -> Result<T, TraceError> {
        if !self.conn.is_autocommit() {
            return write(self);
        }
        let err = self.err("writing a batch of rows");
        // `BEGIN` and `COMMIT` come from the statement cache: a `Transaction` would parse
        // them again for every batch, a call's largest cost in SQLite after its rows.
        self.cached("BEGIN IMMEDIATE").map_err(&err)?;
        let open = OpenBatch(self);
        let written = write(self)?;
        self.cached("COMMIT").map_err(&err)?;
        std::mem::forget(open);
        Ok(written)
    }

    /// Run `sql`, a statement without parameters or rows, prepared once per connection.
    fn cached(&self, sql: &str) -> rusqlite::Result<()> {
        self.conn.prepare_cached(sql)?.execute([]).map(drop)
    }

    /// Record the start of a run. Its id must be unused and usable as a
    /// directory name.
    pub fn begin_run(&self, run: &NewRun) -> Result<(), TraceError> {
        if !valid_run_id(&run.id) {
            return Err(TraceError::invalid(
                &self.path,
                format!(
                    "run id {:?} is not usable as a directory name (use ASCII letters, digits, '-', '_', '.')",
                    run.id
                ),
            ));
        }
        let mut stmt = self
            .conn
            .prepare_cached(
                "INSERT INTO runs (id, workspace, started_at_ms, pid, config_json) \
                 VALUES (?1, ?2, ?3, ?4, ?5)",
            )
            .map_err(self.err("recording a run"))?;
        match stmt.execute(params![
            run.id,
            run.workspace,
            run.started_at_ms,
            run.pid,
            run.config_json
        ]) {
            Ok(_) => {
                observe::notify(|o| o.run_begun(run));
                Ok(())
            }
            Err(e) if e.sqlite_error_code() == Some(rusqlite::ErrorCode::ConstraintViolation) => {
                Err(TraceError::invalid(
                    &self.path,
                    format!("run {:?} already exists", run.id),
                ))
            }
            Err(e) => Err(self.err("recording a run")(e)),
        }
    }

    /// Record the end of a run; `how` is `closed`, `dropped`, `error`,
    /// `panic`, `signal`, ...
    pub fn end_run(&self, run_id: &str, ended_at_ms: i64, how: &str) -> Result<(), TraceError> {
        let changed = self
            .conn
            .prepare_cached("UPDATE runs SET ended_at_ms = ?2, ended_how = ?3 WHERE id = ?1")
            .and_then(|mut s| s.execute(params![run_id, ended_at_ms, how]))
            .map_err(self.err("ending a run"))?;
        if changed == 0 {
            return Err(TraceError::no_such(&self.path, format!("run {run_id:?}")));
        }
        observe::notify(|o| o.run_ended(run_id, ended_at_ms, how));
        Ok(())
    }

    /// Record the start of a tool call. Returns its global id and its
    /// sequence number within the run (continuing after any earlier steps of
    /// the same run, whoever wrote them).
    pub fn begin_step(&self, step: &NewStep) -> Result<StepIds, TraceError> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "INSERT INTO steps (run_id, seq, tool, call_json, cwd, started_at_ms) \
                 VALUES (?1, (SELECT coalesce(max(seq), 0) + 1 FROM steps WHERE run_id = ?1), \
                         ?2, ?3, ?4, ?5) \
                 RETURNING id, seq",
            )
            .map_err(self.err("recording a step"))?;
        let res = stmt.insert_row(
            params![
                step.run_id,
                step.tool,
                step.call_json,
                step.cwd,
                step.started_at_ms
            ],
            |r| {
                Ok(StepIds {
                    id: r.get(0)?,
                    seq: r.get(1)?,
                })
            },
        );
        match res {
            Ok(ids) => {
                observe::notify(|o| o.step_begun(ids, step));
                Ok(ids)
            }
            Err(e) if e.sqlite_error_code() == Some(rusqlite::ErrorCode::ConstraintViolation) => {
                Err(TraceError::no_such(
                    &self.path,
                    format!("run {:?} (begin_run it first)", step.run_id),
                ))
            }
            Err(e) => Err(self.err("recording a step")(e)),
        }
    }

    /// Record how a tool call ended. Finishing a step again replaces what
    /// was recorded (and keeps the run's `capture_bytes` consistent).
    pub fn finish_step(&self, id: i64, done: &StepDone) -> Result<(), TraceError> {
        let argv = (done.argv_json != "null").then_some(done.argv_json.as_str());
        let changed = self
            .conn
            .prepare_cached(
                "UPDATE steps SET argv_json = ?2, duration_ms = ?3, exit_code = ?4, signal = ?5, \
                 timed_out = ?6, outcome = ?7, stdout_bytes = ?8, stderr_bytes = ?9, \
                 stdout_path = ?10, stderr_path = ?11, observation = ?12, error = ?13, \
                 containment = ?14 WHERE id = ?1",
            )
            .and_then(|mut s| {
                s.execute(params![
                    id,
                    argv,
                    done.duration_ms,
                    done.exit_code,
                    done.signal,
                    done.timed_out,
                    done.outcome,
                    to_i64(done.stdout_bytes),
                    to_i64(done.stderr_bytes),
                    done.stdout_path,
                    done.stderr_path,
                    done.observation,
                    done.error,
                    done.containment,
                ])
            })
            .map_err(self.err("recording a step's end"))?;
        if changed == 0 {
            return Err(TraceError::no_such(&self.path, format!("step {id}")));
        }
        observe::notify(|o| o.step_finished(id, done));
        Ok(())
    }

    /// The newest `limit` runs, newest first.
    pub fn runs(&self, limit: usize) -> Result<Vec<RunRow>, TraceError> {
        let mut stmt = self
            .conn
            .prepare_cached(&format!(
                "SELECT {RUN_COLUMNS} FROM runs r \
                 ORDER BY r.started_at_ms DESC, r.rowid DESC LIMIT ?1"
            ))
            .map_err(self.err("listing runs"))?;
        stmt.query_map([to_i64(limit as u64)], run_row)
            .and_then(Iterator::collect)
            .map_err(self.err("listing runs"))
    }

    /// One run, if it exists.
    pub fn run(&self, run_id: &str) -> Result<Option<RunRow>, TraceError> {
        self.conn
            .prepare_cached(&format!("SELECT {RUN_COLUMNS} FROM runs r WHERE r.id = ?1"))
            .and_then(|mut s| s.query_row([run_id], run_row).optional())
            .map_err(self.err("reading a run"))
    }

    /// The newest `limit` steps, of one run or of all, newest first.
    pub fn steps(&self, run_id: Option<&str>, limit: usize) -> Result<Vec<StepRow>, TraceError> {
        let limit = to_i64(limit as u64);
        let action = "listing steps";
        match run_id {
            Some(run_id) => self
                .conn
                .prepare_cached(&format!(
                    "SELECT {STEP_COLUMNS} FROM steps WHERE run_id = ?1 ORDER BY seq DESC LIMIT ?2"
                ))
                .and_then(|mut s| s.query_map(params![run_id, limit], step_row)?.collect())
                .map_err(self.err(action)),
            None => self
                .conn
                .prepare_cached(&format!(
                    "SELECT {STEP_COLUMNS} FROM steps ORDER BY id DESC LIMIT ?1"
                ))
                .and_then(|mut s| s.query_map([limit], step_row)?.collect())
                .map_err(self.err(action)),
        }
    }

    /// One step by global id, if it exists.
    pub fn step(&self, id: i64) -> Result<Option<StepRow>, TraceError> {
        self.conn
            .prepare_cached(&format!("SELECT {STEP_COLUMNS} FROM steps WHERE id = ?1"))
            .and_then(|mut s| s.query_row([id], step_row).optional())
            .map_err(self.err("reading a step"))
    }

    /// Apply retention to capture files.
    ///
    /// Going from the newest run to the oldest among runs that still have
    /// captures, keeps runs until either `keep_runs` runs are kept or
    /// keeping the next would exceed `max_capture_bytes`; from there on,
    /// every older run's capture directory is deleted and its steps marked
    /// `captures_pruned`. Two kinds of run are always kept, whatever the
    /// bounds (their bytes still count): runs that have not ended, and the
    /// newest run that has, whose output a person or a model was just
    /// pointed at. Sizes come from the byte counts recorded by
    /// [`Store::finish_step`]; a run whose recorded count would break the
    /// size bound is measured on disk, where a capped capture is far smaller
    /// than the stream it kept. Rows are never deleted.
    pub fn prune(&self, retention: &Retention) -> Result<PruneReport, TraceError> {
        // Read from the `runs_unpruned` index alone (no row of `runs` is visited), and
        // put newest first here: an `ORDER BY … rowid` would take the rows instead.
        let mut unpruned: Vec<(i64, i64, String, i64, bool)> = self
            .conn
            .prepare_cached(
                "SELECT started_at_ms, rowid, id, capture_bytes, ended_at_ms IS NULL \
                 FROM runs WHERE captures_pruned = 0",
            )
            .and_then(|mut s| {
                s.query_map([], |r| {
                    Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
                })?
                .collect()
            })
            .map_err(self.err("reading runs for pruning"))?;
        unpruned.sort_unstable_by_key(|&(started, rowid, ..)| std::cmp::Reverse((started, rowid)));
        let candidates = unpruned
            .into_iter()
            .map(|(_, _, id, bytes, live)| (id, bytes, live));

        // Once a bound bites, every older run is pruned too (except the runs
        // always kept), so captures always cover the newest runs.
        let mut kept_runs = 0usize;
        let mut kept_bytes = 0u64;
        let mut over_bytes = false;
        let mut newest_ended = true;
        let mut victims = Vec::new();
        for (id, bytes, live) in candidates {
            let mut bytes = u64::try_from(bytes).unwrap_or(0);
            if !over_bytes && kept_bytes.saturating_add(bytes) > retention.max_capture_bytes {
                bytes = bytes.min(self.bytes_on_disk(&id));
            }
            over_bytes =
                over_bytes || kept_bytes.saturating_add(bytes) > retention.max_capture_bytes;
            let always = live || newest_ended;
            newest_ended &= live;
            let keep = always || (kept_runs < retention.keep_runs && !over_bytes);
            if keep {
                kept_runs += 1;
                kept_bytes = kept_bytes.saturating_add(bytes);
            } else {
                victims.push((id, bytes));
            }
        }

        let mut report = PruneReport::default();
        let mut done = Vec::with_capacity(victims.len());
        let mut failure = None;
        for (id, bytes) in victims {
            if valid_run_id(&id) {
                let dir = self.capture_dir(&id);
                match std::fs::remove_dir_all(&dir) {
                    Ok(()) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    Err(e) => {
                        failure = Some(TraceError::io(
                            &self.path,
                            "delete capture directory",
                            &dir,
                            e,
                        ));
                        break;
                    }
                }
            }
            report.runs_pruned += 1;
            report.bytes_freed = report.bytes_freed.saturating_add(bytes);
            done.push(id);
        }
        if !done.is_empty() {
            self.mark_pruned(&done)?;
        }
        match failure {
            Some(e) => Err(e),
            None => Ok(report),
        }
    }

    /// The bytes of the files in run `id`'s capture directory (0 when it has
    /// none).
    fn bytes_on_disk(&self, id: &str) -> u64 {
        if !valid_run_id(id) {
            return 0;
        }
        std::fs::read_dir(self.capture_dir(id))
            .into_iter()
            .flatten()
            .filter_map(|entry| entry.ok()?.metadata().ok())
            .filter(|meta| meta.is_file())
            .map(|meta| meta.len())
            .sum()
    }

    fn mark_pruned(&self, run_ids: &[String]) -> Result<(), TraceError> {
        let err = self.err("marking pruned captures");
        let tx = self.conn.unchecked_transaction().map_err(&err)?;
        {
            let mut steps = tx
                .prepare_cached(
                    "UPDATE steps SET captures_pruned = 1 WHERE run_id = ?1 \
                     AND captures_pruned = 0 \
                     AND (stdout_path IS NOT NULL OR stderr_path IS NOT NULL)",
                )
                .map_err(&err)?;
            let mut runs = tx
                .prepare_cached("UPDATE runs SET captures_pruned = 1 WHERE id = ?1")
                .map_err(&err)?;
            for id in run_ids {
                steps.execute([id]).map_err(&err)?;
                runs.execute([id]).map_err(&err)?;
            }
        }
        tx.commit().map_err(&err)
    }
}

/// `file:PATH?immutable=1`, with the bytes a URI gives meaning to escaped.
fn immutable_uri(path: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    let mut uri = String::from("file:");
    for &b in path.as_os_str().as_bytes() {
        match b {
            b'%' | b'?' | b'#' => uri.push_str(&format!("%{b:02X}")),
            b if b.is_ascii() && !b.is_ascii_control() => uri.push(b as char),
            b => uri.push_str(&format!("%{b:02X}")),
        }
    }
    uri.push_str("?immutable=1");
    uri
}

fn absolute(path: &Path) -> Result<PathBuf, TraceError> {
    std::path::absolute(path)
        .map_err(|e| TraceError::open(path, "cannot make the path absolute", Some(Source::Io(e))))
}

/// A run id names a directory under `captures/`, so it must not be able to
/// escape it.
fn valid_run_id(id: &str) -> bool {
    !id.is_empty()
        && id != "."
        && id != ".."
        && id.len() <= 200
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

fn migrate(conn: &mut Connection, path: &Path) -> Result<(), TraceError> {
    let err = |e| TraceError::sql(path, "migrating the schema", e);
    for (from, script) in schema::MIGRATIONS.iter().enumerate() {
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(err)?;
        // Another process may have migrated while we waited for the lock.
        let version: i64 = tx
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .map_err(err)?;
        if version > from as i64 {
            continue;
        }
        tx.execute_batch(script).map_err(err)?;
        tx.pragma_update(None, "user_version", (from + 1) as i64)
            .map_err(err)?;
        tx.commit().map_err(err)?;
    }
    Ok(())
}

/// A batch's transaction until its `COMMIT`: rolled back if the batch stops short (an
/// error, or a panic in what it writes), so the connection is never left inside it.
struct OpenBatch<'a>(&'a Store);

impl Drop for OpenBatch<'_> {
    fn drop(&mut self) {
        if !self.0.conn.is_autocommit() {
            let _ = self.0.cached("ROLLBACK");
        }
    }
}

fn to_i64(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

fn run_row(r: &Row<'_>) -> rusqlite::Result<RunRow> {
    Ok(RunRow {
        id: r.get(0)?,
        workspace: r.get(1)?,
        started_at_ms: r.get(2)?,
        ended_at_ms: r.get(3)?,
        ended_how: r.get(4)?,
        pid: r.get(5)?,
        config_json: r.get(6)?,
        steps: r.get(7)?,
        capture_bytes: r.get(8)?,
        captures_pruned: r.get(9)?,
    })
}

fn step_row(r: &Row<'_>) -> rusqlite::Result<StepRow> {
    let bytes =
        |i| -> rusqlite::Result<u64> { Ok(u64::try_from(r.get::<_, i64>(i)?).unwrap_or(0)) };
    Ok(StepRow {
        id: r.get(0)?,
        run_id: r.get(1)?,
        seq: r.get(2)?,
        tool: r.get(3)?,
        call_json: r.get(4)?,
        argv_json: r.get(5)?,
        cwd: r.get(6)?,
        started_at_ms: r.get(7)?,
        duration_ms: r.get(8)?,
        exit_code: r.get(9)?,
        signal: r.get(10)?,
        timed_out: r.get(11)?,
        outcome: r.get(12)?,
        stdout_bytes: bytes(13)?,
        stderr_bytes: bytes(14)?,
        stdout_path: r.get(15)?,
        stderr_path: r.get(16)?,
        captures_pruned: r.get(17)?,
        observation: r.get(18)?,
        error: r.get(19)?,
        containment: r.get(20)?,
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn store_is_send() {
        fn assert_send<T: Send>() {}
        assert_send::<super::Store>();
        assert_send::<super::TraceError>();
    }
}
