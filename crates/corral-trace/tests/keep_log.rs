//! A store asked to keep its log on close leaves its rows in the `-wal` file, where the
//! next opener (and a read-only reader) finds them; one closed without it checkpoints
//! them into the database and removes the log.

use crate::common;

use std::path::Path;

use corral_trace::Store;

fn wal(path: &Path) -> std::path::PathBuf {
    std::path::PathBuf::from(format!("{}-wal", path.display()))
}

#[test]
fn a_kept_log_holds_the_rows_until_a_close_that_checkpoints() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("trace.db");
    for (i, id) in ["one", "two"].into_iter().enumerate() {
        let store = Store::open(&path).unwrap();
        store.keep_log_on_close().unwrap();
        store.begin_run(&common::new_run(id, i as i64)).unwrap();
        let ids = store.begin_step(&common::new_step(id, i as i64)).unwrap();
        store.finish_step(ids.id, &common::exited(0)).unwrap();
        drop(store);
        assert!(wal(&path).exists(), "the log was kept after run {id}");
    }

    let reader = Store::open_read_only(&path).unwrap();
    for id in ["one", "two"] {
        let run = reader
            .run(id)
            .unwrap()
            .unwrap_or_else(|| panic!("run {id}"));
        assert_eq!(run.steps, 1, "{id}");
    }
    drop(reader);

    // A close without the option checkpoints everything into the database.
    drop(Store::open(&path).unwrap());
    assert!(!wal(&path).exists());
    let copy = dir.path().join("copy.db");
    std::fs::copy(&path, &copy).unwrap();
    let copied = Store::open_read_only(&copy).unwrap();
    assert!(copied.run("one").unwrap().is_some());
    assert!(copied.run("two").unwrap().is_some());
}
