//! Retention by run count deletes older runs' capture directories and marks
//! their steps, keeping the rows.

use crate::common;

use corral_trace::{PruneReport, Retention, Store};

#[test]
fn prune_keeps_newest_runs_by_count() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("trace.db");
    let store = Store::open(&path).unwrap();
    assert_eq!(
        store.capture_dir("r1"),
        dir.path().join("captures").join("r1")
    );

    let mut step_ids = Vec::new();
    for i in 1..=5 {
        step_ids.push(common::run_with_capture(
            &store,
            &format!("r{i}"),
            i * 100,
            100,
            false,
        ));
    }
    // A step without captures in a run that will be pruned stays unmarked.
    let bare = store.begin_step(&common::new_step("r1", 101)).unwrap();
    store.finish_step(bare.id, &common::exited(0)).unwrap();
    assert_eq!(store.run("r1").unwrap().unwrap().capture_bytes, 100);

    let retention = Retention {
        keep_runs: 2,
        max_capture_bytes: u64::MAX,
    };
    let report = store.prune(&retention).unwrap();
    assert_eq!(
        report,
        PruneReport {
            runs_pruned: 3,
            bytes_freed: 300
        }
    );

    for i in 1..=5usize {
        let id = format!("r{i}");
        let pruned = i <= 3;
        assert_eq!(store.capture_dir(&id).exists(), !pruned, "{id}");
        let run = store.run(&id).unwrap().unwrap();
        assert_eq!(run.captures_pruned, pruned, "{id}");
        let step = store.step(step_ids[i - 1]).unwrap().unwrap();
        assert_eq!(step.captures_pruned, pruned, "{id}");
        assert!(step.stdout_path.is_some());
    }
    assert!(!store.step(bare.id).unwrap().unwrap().captures_pruned);
    // Rows stay.
    assert_eq!(store.runs(100).unwrap().len(), 5);
    assert_eq!(store.steps(None, 100).unwrap().len(), 6);

    // Nothing more to do; a new run pushes out one more.
    assert_eq!(store.prune(&retention).unwrap(), PruneReport::default());
    common::run_with_capture(&store, "r6", 600, 100, false);
    let report = store.prune(&retention).unwrap();
    assert_eq!(report.runs_pruned, 1);
    assert!(!store.capture_dir("r4").exists());
    assert!(store.capture_dir("r5").exists());
    assert!(store.capture_dir("r6").exists());
}

#[test]
fn default_retention() {
    let r = Retention::default();
    assert_eq!(r.keep_runs, 100);
    assert_eq!(r.max_capture_bytes, 2 << 30);
}
