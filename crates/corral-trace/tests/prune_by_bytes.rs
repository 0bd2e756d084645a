//! Retention by total capture size, from recorded byte counts.

use crate::common;

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

    // A budget smaller than the newest run keeps it all the same: its output is what
    // was just pointed at.
    let report = store.prune(&bytes_only(10)).unwrap();
    assert_eq!(report.runs_pruned, 0);
    assert!(store.capture_dir("new").exists());
    assert!(!store.step(new).unwrap().unwrap().captures_pruned);

    // Once a newer run has ended, it goes.
    common::run_with_capture(&store, "newer", 400, 5, false);
    let report = store.prune(&bytes_only(10)).unwrap();
    assert_eq!(report.runs_pruned, 1);
    assert!(!store.capture_dir("new").exists());
    assert!(store.step(new).unwrap().unwrap().captures_pruned);
}

#[test]
fn a_capped_capture_counts_what_it_keeps_on_disk() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("trace.db")).unwrap();
    common::run_with_capture(&store, "old", 100, 50, false);
    let big = common::run_with_capture(&store, "big", 200, 100, false);
    // The stream carried 10 000 bytes; the cap kept the 100 on disk.
    let mut done = common::exited(0);
    done.stdout_bytes = 10_000;
    done.stdout_path = Some(
        store
            .capture_dir("big")
            .join("1.stdout")
            .display()
            .to_string(),
    );
    store.finish_step(big, &done).unwrap();
    common::run_with_capture(&store, "new", 300, 10, false);

    let report = store.prune(&bytes_only(200)).unwrap();
    assert_eq!(report.runs_pruned, 0, "10 + 100 + 50 bytes are on disk");
}

#[test]
fn runs_in_progress_are_not_pruned_for_size() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("trace.db")).unwrap();
    common::run_with_capture(&store, "older", 50, 100, false);
    common::run_with_capture(&store, "done", 100, 100, false);
    common::run_with_capture(&store, "live", 200, 1000, true);

    // The live run and the newest ended one stay, over the budget as they are.
    let report = store.prune(&bytes_only(500)).unwrap();
    assert_eq!(report.runs_pruned, 1);
    assert!(store.capture_dir("live").exists());
    assert!(store.capture_dir("done").exists());
    assert!(!store.capture_dir("older").exists());

    // So is the count bound: what a live run captures may still be read.
    let report = store
        .prune(&Retention {
            keep_runs: 0,
            max_capture_bytes: u64::MAX,
        })
        .unwrap();
    assert_eq!(report.runs_pruned, 0);
    assert!(store.capture_dir("live").exists());
}

#[test]
fn missing_capture_dirs_are_fine() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("trace.db")).unwrap();
    common::run_with_capture(&store, "a", 100, 100, false);
    common::run_with_capture(&store, "b", 200, 100, false);
    std::fs::remove_dir_all(store.capture_dir("a")).unwrap();
    let report = store.prune(&bytes_only(50)).unwrap();
    assert_eq!(report.runs_pruned, 1);
    assert!(store.run("a").unwrap().unwrap().captures_pruned);
}
