//! Another program's SQLite database is refused and left alone.

use crate::common;

use corral_trace::{Store, TraceErrorKind};
use rusqlite::Connection;

#[test]
fn sqlite_db_with_other_tables_is_refused_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("trace.db");
    {
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch(
            "CREATE TABLE contacts (name TEXT, phone TEXT);
             INSERT INTO contacts VALUES ('ada', '123');",
        )
        .unwrap();
    }
    let bytes = std::fs::read(&path).unwrap();

    for result in [Store::open(&path), Store::open_existing(&path)] {
        let err = result.unwrap_err();
        assert_eq!(err.kind(), TraceErrorKind::NotATrace, "{err}");
        common::assert_names_path(&err, &path);
        assert!(err.to_string().contains("not a corral trace"), "{err}");
        assert_eq!(std::fs::read(&path).unwrap(), bytes);
    }
}

#[test]
fn sqlite_db_of_another_application_is_refused_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("trace.db");
    {
        let conn = Connection::open(&path).unwrap();
        // Even with no tables yet, an application id that is not ours.
        conn.pragma_update(None, "application_id", 0x1234_5678)
            .unwrap();
        conn.pragma_update(None, "user_version", 1).unwrap();
    }
    let bytes = std::fs::read(&path).unwrap();
    let err = Store::open(&path).unwrap_err();
    assert_eq!(err.kind(), TraceErrorKind::NotATrace, "{err}");
    common::assert_names_path(&err, &path);
    assert!(err.to_string().contains("another application"), "{err}");
    assert_eq!(std::fs::read(&path).unwrap(), bytes);
}
