//! The undo records (`step_files`) of old runs are given up by count and by age; a run
//! still going and the newest run that recorded files are kept whatever the bounds.

use crate::common;

use corral_trace::{StepFile, Store};

/// A run started at `started_at_ms` whose one step changed `path` from `before` to
/// `after` (blob hashes); ended unless `live`.
fn run_changing(store: &Store, id: &str, started_at_ms: i64, hashes: (&str, &str), live: bool) {
    store
        .begin_run(&common::new_run(id, started_at_ms))
        .unwrap();
    let step = store
        .begin_step(&common::new_step(id, started_at_ms))
        .unwrap();
    store.finish_step(step.id, &common::exited(0)).unwrap();
    store
        .record_step_files(
            id,
            step.id,
            &[StepFile {
                path: b"a.txt".to_vec(),
                change: "modified".into(),
                before: Some((hashes.0.into(), 0o100644)),
                after: Some((hashes.1.into(), 0o100644)),
            }],
        )
        .unwrap();
    if !live {
        store.end_run(id, started_at_ms + 1, "closed").unwrap();
    }
}

#[test]
fn old_runs_records_are_given_up_by_count_and_by_age() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("trace.db")).unwrap();
    // r1 is old but still going; r2..r5 ended, r5 the newest.
    run_changing(&store, "r1", 100, ("h0", "h1"), true);
    run_changing(&store, "r2", 200, ("h1", "h2"), false);
    run_changing(&store, "r3", 300, ("h2", "h3"), false);
    run_changing(&store, "r4", 400, ("h3", "h4"), false);
    run_changing(&store, "r5", 500, ("h4", "h5"), false);
    // A run that changed nothing does not count.
    store.begin_run(&common::new_run("r6", 600)).unwrap();
    store.end_run("r6", 601, "closed").unwrap();

    // By count: the newest two, and r1, still going, whatever the bounds.
    let forgotten = store.prune_step_files(2, 0).unwrap();
    assert_eq!(forgotten, ["r3", "r2"]);
    for (id, kept) in [
        ("r1", true),
        ("r2", false),
        ("r3", false),
        ("r4", true),
        ("r5", true),
    ] {
        assert_eq!(!store.run_files(id).unwrap().is_empty(), kept, "{id}");
    }
    let hashes = store.step_file_hashes().unwrap();
    let mut hashes: Vec<&str> = hashes.iter().map(String::as_str).collect();
    hashes.sort();
    assert_eq!(hashes, ["h0", "h1", "h3", "h4", "h5"]);

    // By age: whatever started before 450 goes, but not a run still going or the newest.
    let forgotten = store.prune_step_files(100, 450).unwrap();
    assert_eq!(forgotten, ["r4"]);
    // Even with nothing to be kept, the newest stays: `corral undo` still has its last call.
    assert!(store.prune_step_files(0, i64::MAX).unwrap().is_empty());
    assert!(!store.run_files("r1").unwrap().is_empty());
    assert!(!store.run_files("r5").unwrap().is_empty());
    assert_eq!(store.oldest_live_run_ms().unwrap(), Some(100));
}
