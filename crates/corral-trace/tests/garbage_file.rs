//! A file that is not an SQLite database is refused and left alone.

use crate::common;

use corral_trace::{Store, TraceErrorKind};

#[test]
fn garbage_file_is_refused_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("trace.db");
    let bytes: Vec<u8> = (0..10_000u32).map(|i| (i * 7 + i / 13) as u8).collect();
    std::fs::write(&path, &bytes).unwrap();

    for result in [Store::open(&path), Store::open_existing(&path)] {
        let err = result.unwrap_err();
        assert_eq!(err.kind(), TraceErrorKind::NotATrace, "{err}");
        common::assert_names_path(&err, &path);
        let msg = err.to_string();
        assert!(msg.contains("not a corral trace"), "{msg}");
        assert!(msg.contains("file is not a database"), "{msg}");
        assert!(msg.contains("move it aside"), "{msg}");
        assert_eq!(std::fs::read(&path).unwrap(), bytes);
    }
}

#[test]
fn text_file_is_refused_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("trace.db");
    let text = b"these are my notes, not a database\n".repeat(200);
    std::fs::write(&path, &text).unwrap();
    let err = Store::open(&path).unwrap_err();
    assert_eq!(err.kind(), TraceErrorKind::NotATrace, "{err}");
    common::assert_names_path(&err, &path);
    assert_eq!(std::fs::read(&path).unwrap(), text);
}

#[test]
fn a_directory_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let err = Store::open(dir.path()).unwrap_err();
    assert_eq!(err.kind(), TraceErrorKind::Open, "{err}");
    common::assert_names_path(&err, dir.path());
}
