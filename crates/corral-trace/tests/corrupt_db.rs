//! A truncated or damaged corral store is refused and left alone.

use crate::common;

use std::path::{Path, PathBuf};

use corral_trace::{Store, TraceErrorKind};

/// A store with enough rows to span many pages, closed cleanly.
fn populated_store(dir: &Path) -> PathBuf {
    let path = dir.join("trace.db");
    let store = Store::open(&path).unwrap();
    store.begin_run(&common::new_run("r", 1)).unwrap();
    for i in 0..300 {
        let ids = store.begin_step(&common::new_step("r", i)).unwrap();
        let mut done = common::exited(0);
        done.observation = "x".repeat(500);
        store.finish_step(ids.id, &done).unwrap();
    }
    drop(store);
    assert!(!Path::new(&format!("{}-wal", path.display())).exists());
    path
}

#[test]
fn truncated_store_is_refused_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = populated_store(dir.path());
    let full = std::fs::read(&path).unwrap();
    let truncated = &full[..full.len() * 9 / 10];
    std::fs::write(&path, truncated).unwrap();

    for result in [Store::open(&path), Store::open_existing(&path)] {
        let err = result.unwrap_err();
        assert_eq!(err.kind(), TraceErrorKind::Corrupt, "{err}");
        common::assert_names_path(&err, &path);
        assert!(err.to_string().contains("move it aside"), "{err}");
        assert_eq!(std::fs::read(&path).unwrap(), truncated);
    }
}

#[test]
fn damaged_schema_page_is_refused_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = populated_store(dir.path());
    let mut bytes = std::fs::read(&path).unwrap();
    // Keep the 100-byte header, wreck the rest of page 1 (the schema).
    for b in &mut bytes[100..4096] {
        *b = 0xa5;
    }
    std::fs::write(&path, &bytes).unwrap();

    let err = Store::open(&path).unwrap_err();
    assert!(
        matches!(
            err.kind(),
            TraceErrorKind::Corrupt | TraceErrorKind::NotATrace
        ),
        "{err}"
    );
    common::assert_names_path(&err, &path);
    assert!(err.to_string().contains("move it aside"), "{err}");
    assert_eq!(std::fs::read(&path).unwrap(), bytes);
}
