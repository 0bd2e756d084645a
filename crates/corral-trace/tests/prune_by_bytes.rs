//! Retention by total capture size, from recorded byte counts.

mod common;

use corral_trace::{Retention, Store};

fn bytes_only(max: u64) -> Retention {
    Retention {
        keep_runs: 1000,
        max_capture_bytes: max,
    }
}

#[test]
fn prune_keeps_newest_runs_within_byte_budget() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("trace.db")).unwrap();
    // Oldest to newest: 50, 200, 100 bytes.
    common::run_with_capture(&store, "old", 100, 50, false);
    common::run_with_capture(&store, "mid", 200, 200, false);
    let new = common::run_with_capture(&store, "new", 300, 100, false);

    // 100 fits, 100 + 200 does not: "mid" goes, and so does everything
    // older even though "old" alone would still fit.
    let report = store.prune(&bytes_only(250)).unwrap();
    assert_eq!(report.runs_pruned, 2);
    assert_eq!(report.bytes_freed, 250);
    assert!(store.capture_dir("new").exists());
    assert!(!store.capture_dir("mid").exists());
    assert!(!store.capture_dir("old").exists());
    assert!(store.run("mid").unwrap().unwrap().captures_pruned);
    assert!(store.run("old").unwrap().unwrap().captures_pruned);
    assert!(!store.step(new).unwrap().unwrap().captures_pruned);

    // A budget smaller than the newest run prunes it too.
    let report = store.prune(&bytes_only(10)).unwrap();
    assert_eq!(report.runs_pruned, 1);
    assert!(!store.capture_dir("new").exists());
    assert!(store.step(new).unwrap().unwrap().captures_pruned);
}

#[test]
fn runs_in_progress_are_not_pruned_for_size() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("trace.db")).unwrap();
    common::run_with_capture(&store, "done", 100, 100, false);
    common::run_with_capture(&store, "live", 200, 1000, true);

    let report = store.prune(&bytes_only(500)).unwrap();
    assert_eq!(report.runs_pruned, 1);
    assert!(store.capture_dir("live").exists());
    assert!(!store.capture_dir("done").exists());

    // The count bound still applies to them.
    let report = store
        .prune(&Retention {
            keep_runs: 0,
            max_capture_bytes: u64::MAX,
        })
        .unwrap();
    assert_eq!(report.runs_pruned, 1);
    assert!(!store.capture_dir("live").exists());
}

#[test]
fn missing_capture_dirs_are_fine() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("trace.db")).unwrap();
    common::run_with_capture(&store, "a", 100, 100, false);
    common::run_with_capture(&store, "b", 200, 100, false);
    std::fs::remove_dir_all(store.capture_dir("a")).unwrap();
    let report = store.prune(&bytes_only(150)).unwrap();
    assert_eq!(report.runs_pruned, 1);
    assert!(store.run("a").unwrap().unwrap().captures_pruned);
}
