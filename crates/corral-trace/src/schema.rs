//! Schema migrations.
//!
//! `MIGRATIONS[i]` takes a store from `user_version = i` to `i + 1`. Each
//! script runs in its own `BEGIN IMMEDIATE` transaction together with the
//! `user_version` bump, so a store is always at exactly one version. To
//! change the schema, append a script; never edit one that has shipped.

/// `PRAGMA application_id` of a corral trace ("crrl"): tells a corral store
/// apart from any other SQLite database.
pub(crate) const APPLICATION_ID: i32 = 0x6372_726c;

pub(crate) const MIGRATIONS: &[&str] = &[
    V1,
    V2,
    V3,
    V4,
    V5,
    crate::model_turns::MODEL_TURNS_AND_GATE_KIND,
    crate::network_events::NETWORK_COLUMNS,
    RUNS_OPEN_AND_UNPRUNED,
    crate::step_files::STEP_FILES,
    UNPRUNED_RUNS_FROM_THEIR_INDEX,
];

const V1: &str = "
PRAGMA application_id = 1668444780;

CREATE TABLE runs (
    id              TEXT    PRIMARY KEY NOT NULL,
    workspace       TEXT    NOT NULL,
    started_at_ms   INTEGER NOT NULL,
    ended_at_ms     INTEGER,
    ended_how       TEXT,
    pid             INTEGER NOT NULL,
    config_json     TEXT    NOT NULL,
    capture_bytes   INTEGER NOT NULL DEFAULT 0,
    captures_pruned INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX runs_by_start ON runs (started_at_ms);

CREATE TABLE steps (
    id              INTEGER PRIMARY KEY,
    run_id          TEXT    NOT NULL REFERENCES runs (id),
    seq             INTEGER NOT NULL,
    tool            TEXT    NOT NULL,
    call_json       TEXT    NOT NULL,
    argv_json       TEXT,
    cwd             TEXT    NOT NULL,
    started_at_ms   INTEGER NOT NULL,
    duration_ms     INTEGER,
    exit_code       INTEGER,
    signal          INTEGER,
    timed_out       INTEGER NOT NULL DEFAULT 0,
    outcome         TEXT,
    stdout_bytes    INTEGER NOT NULL DEFAULT 0,
    stderr_bytes    INTEGER NOT NULL DEFAULT 0,
    stdout_path     TEXT,
    stderr_path     TEXT,
    captures_pruned INTEGER NOT NULL DEFAULT 0,
    observation     TEXT,
    error           TEXT
);
CREATE UNIQUE INDEX steps_by_run_seq ON steps (run_id, seq);

-- Keep runs.capture_bytes equal to the bytes of the capture files its steps
-- recorded, however often a step is finished. (Skipped when nothing changes,
-- so steps without captures do not rewrite the run's page.)
CREATE TRIGGER steps_capture_bytes
AFTER UPDATE OF stdout_bytes, stderr_bytes, stdout_path, stderr_path ON steps
WHEN iif(NEW.stdout_path IS NULL, 0, NEW.stdout_bytes)
   + iif(NEW.stderr_path IS NULL, 0, NEW.stderr_bytes)
  != iif(OLD.stdout_path IS NULL, 0, OLD.stdout_bytes)
   + iif(OLD.stderr_path IS NULL, 0, OLD.stderr_bytes)
BEGIN
    UPDATE runs SET capture_bytes = capture_bytes
        + iif(NEW.stdout_path IS NULL, 0, NEW.stdout_bytes)
        + iif(NEW.stderr_path IS NULL, 0, NEW.stderr_bytes)
        - iif(OLD.stdout_path IS NULL, 0, OLD.stdout_bytes)
        - iif(OLD.stderr_path IS NULL, 0, OLD.stderr_bytes)
    WHERE id = NEW.run_id;
END;
";

/// Policy decisions worth keeping: every refusal and every approver's answer. A silent
/// allow writes no row; the step row already holds the argv.
const V2: &str = "
CREATE TABLE policy_events (
    id          INTEGER PRIMARY KEY,
    run_id      TEXT    NOT NULL REFERENCES runs (id),
    step_id     INTEGER REFERENCES steps (id),
    at_ms       INTEGER NOT NULL,
    act         TEXT    NOT NULL,
    target      TEXT    NOT NULL,
    effect      TEXT    NOT NULL,
    rule        TEXT,
    layer       TEXT,
    origin      TEXT,
    decision    TEXT    NOT NULL,
    answered_by TEXT,
    reason      TEXT
);
CREATE INDEX policy_events_by_run ON policy_events (run_id, id);
CREATE INDEX policy_events_by_decision ON policy_events (decision, id);
";

/// Background handles: one row a handle (what it ran, in what containment, how it
/// ended), and every poll's bytes as they were read.
const V3: &str = "
CREATE TABLE process_handles (
    id            INTEGER PRIMARY KEY,
    run_id        TEXT    NOT NULL REFERENCES runs (id),
    handle        INTEGER NOT NULL,
    step_id       INTEGER REFERENCES steps (id),
    line          TEXT    NOT NULL,
    stages_json   TEXT    NOT NULL,
    pids_json     TEXT    NOT NULL,
    containment   TEXT    NOT NULL,
    capture_path  TEXT,
    owner_pid     INTEGER NOT NULL,
    started_at_ms INTEGER NOT NULL,
    ended_at_ms   INTEGER,
    how           TEXT,
    exit_code     INTEGER,
    signal        INTEGER
);
CREATE UNIQUE INDEX process_handles_by_run ON process_handles (run_id, handle);

CREATE TABLE handle_output (
    id        INTEGER PRIMARY KEY,
    run_id    TEXT    NOT NULL REFERENCES runs (id),
    handle    INTEGER NOT NULL,
    at_ms     INTEGER NOT NULL,
    offset    INTEGER NOT NULL,
    skipped   INTEGER NOT NULL,
    bytes     BLOB    NOT NULL
);
CREATE INDEX handle_output_by_handle ON handle_output (run_id, handle, id);
";

/// What the sandbox enforced for each call, layer by layer, and suspected denials.
const V4: &str = "
CREATE TABLE sandbox_events (
    id      INTEGER PRIMARY KEY,
    run_id  TEXT    NOT NULL REFERENCES runs (id),
    step_id INTEGER REFERENCES steps (id),
    at_ms   INTEGER NOT NULL,
    mode    TEXT    NOT NULL,
    network INTEGER NOT NULL,
    layer   TEXT    NOT NULL,
    level   TEXT    NOT NULL,
    detail  TEXT    NOT NULL
);
CREATE INDEX sandbox_events_by_step ON sandbox_events (step_id, id);
CREATE INDEX sandbox_events_by_run ON sandbox_events (run_id, id);
";

/// The containment unit each call's processes ran in (e.g. `cgroup-v2+pids+pid-ns`).
const V5: &str = "
ALTER TABLE steps ADD COLUMN containment TEXT;
";

/// What every open asks of `runs`, indexed so that it reads the runs it concerns rather
/// than every run the store ever had (each row carries its run's configuration, so a
/// scan of a store with a few hundred runs read hundreds of pages at every open): the
/// runs still open (is their owner gone?) and the runs whose captures are still kept
/// (which to prune, newest first).
const RUNS_OPEN_AND_UNPRUNED: &str = "
CREATE INDEX runs_open ON runs (id, pid) WHERE ended_at_ms IS NULL;
CREATE INDEX runs_unpruned ON runs (started_at_ms) WHERE captures_pruned = 0;
";

/// The prune at every open reads what it needs of the unpruned runs from their index
/// alone: before, each of the hundred runs it reads cost a look-up of the run's row, and
/// rows carry the run's configuration (two to a page), so a run of one call read some
/// fifty pages of `runs` while its command ran, and its end waited for them.
const UNPRUNED_RUNS_FROM_THEIR_INDEX: &str = "
DROP INDEX runs_unpruned;
CREATE INDEX runs_unpruned
    ON runs (started_at_ms, id, capture_bytes, ended_at_ms, captures_pruned)
    WHERE captures_pruned = 0;
";

#[cfg(test)]
mod tests {
    #[test]
    fn application_id_literal_matches() {
        assert!(super::V1.contains(&format!("application_id = {};", super::APPLICATION_ID)));
    }
}
