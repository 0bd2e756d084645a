//! A fresh store gets the whole schema; reopening changes nothing.

use crate::common;

use corral_trace::{SCHEMA_VERSION, Store};
use rusqlite::Connection;

fn schema_of(path: &std::path::Path) -> (i64, i64, Vec<(String, String)>) {
    let conn = Connection::open(path).unwrap();
    let version = conn
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap();
    let app_id = conn
        .pragma_query_value(None, "application_id", |r| r.get(0))
        .unwrap();
    let mut stmt = conn
        .prepare("SELECT name, coalesce(sql, '') FROM sqlite_schema ORDER BY name")
        .unwrap();
    let objects = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    (version, app_id, objects)
}

#[test]
fn migrates_from_empty_and_reopen_is_idempotent() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state/corral/trace.db");

    let store = Store::open(&path).unwrap();
    assert_eq!(store.path(), path);
    let journal: String = {
        let conn = Connection::open(&path).unwrap();
        conn.pragma_query_value(None, "journal_mode", |r| r.get(0))
            .unwrap()
    };
    assert_eq!(journal, "wal");
    store.begin_run(&common::new_run("r1", 1)).unwrap();
    drop(store);

    let (version, app_id, objects) = schema_of(&path);
    assert_eq!(version, SCHEMA_VERSION as i64);
    assert_eq!(version, 10);
    assert_eq!(app_id, 0x6372_726c);
    let names: Vec<&str> = objects.iter().map(|(n, _)| n.as_str()).collect();
    for wanted in [
        "runs",
        "steps",
        "runs_by_start",
        "runs_open",
        "runs_unpruned",
        "steps_by_run_seq",
        "policy_events",
        "step_files",
    ] {
        assert!(names.contains(&wanted), "missing {wanted} in {names:?}");
    }

    for _ in 0..2 {
        let store = Store::open(&path).unwrap();
        assert_eq!(store.runs(10).unwrap().len(), 1);
        drop(store);
        assert_eq!(schema_of(&path), (version, app_id, objects.clone()));
    }
    let store = Store::open_existing(&path).unwrap();
    assert_eq!(store.run("r1").unwrap().unwrap().id, "r1");
}

#[test]
fn an_empty_file_becomes_a_store() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("trace.db");
    std::fs::write(&path, b"").unwrap();
    let store = Store::open(&path).unwrap();
    store.begin_run(&common::new_run("r1", 1)).unwrap();
    drop(store);
    assert_eq!(schema_of(&path).0, SCHEMA_VERSION as i64);
}

/// What every open asks of `runs` reads the open and the unpruned runs through their
/// indexes, not every row the store has ever had.
#[test]
fn an_open_reads_runs_through_their_indexes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("trace.db");
    drop(Store::open(&path).unwrap());
    let conn = Connection::open(&path).unwrap();
    let plan = |sql: &str| -> String {
        let mut stmt = conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).unwrap();
        stmt.query_map([], |r| r.get::<_, String>(3))
            .unwrap()
            .collect::<Result<Vec<_>, _>>()
            .unwrap()
            .join("; ")
    };
    let open = plan("SELECT id, pid FROM runs WHERE ended_at_ms IS NULL");
    assert!(open.contains("runs_open"), "{open}");
    // The prune's question is answered by the index alone.
    let unpruned = plan(
        "SELECT started_at_ms, rowid, id, capture_bytes, ended_at_ms IS NULL \
         FROM runs WHERE captures_pruned = 0",
    );
    assert!(
        unpruned.contains("COVERING INDEX runs_unpruned"),
        "{unpruned}"
    );
}
