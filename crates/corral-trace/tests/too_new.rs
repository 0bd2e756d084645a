//! A store written by a newer corral is refused, not downgraded.

use crate::common;

use corral_trace::{SCHEMA_VERSION, Store, TraceErrorKind};
use rusqlite::Connection;

#[test]
fn newer_schema_is_refused_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("trace.db");
    let store = Store::open(&path).unwrap();
    store.begin_run(&common::new_run("r", 1)).unwrap();
    drop(store);
    let future = SCHEMA_VERSION as i64 + 7;
    {
        let conn = Connection::open(&path).unwrap();
        conn.pragma_update(None, "user_version", future).unwrap();
    }
    let bytes = std::fs::read(&path).unwrap();

    for result in [Store::open(&path), Store::open_existing(&path)] {
        let err = result.unwrap_err();
        assert_eq!(err.kind(), TraceErrorKind::TooNew, "{err}");
        common::assert_names_path(&err, &path);
        let msg = err.to_string();
        assert!(msg.contains(&format!("schema version {future}")), "{msg}");
        assert!(msg.contains("upgrade corral"), "{msg}");
        assert_eq!(std::fs::read(&path).unwrap(), bytes);
    }
}
