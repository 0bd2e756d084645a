//! Runs are listed newest first with their step counts and end state.

use crate::common;

use corral_trace::Store;

#[test]
fn runs_newest_first_with_step_counts() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("trace.db")).unwrap();
    // Inserted out of start order; two share a start time.
    for (id, started, steps) in [("b", 200, 2), ("a", 100, 0), ("c", 300, 5), ("d", 300, 1)] {
        store.begin_run(&common::new_run(id, started)).unwrap();
        for i in 0..steps {
            let ids = store
                .begin_step(&common::new_step(id, started + i))
                .unwrap();
            store.finish_step(ids.id, &common::exited(0)).unwrap();
        }
    }
    store.end_run("b", 250, "closed").unwrap();
    store.end_run("a", 150, "panic").unwrap();

    let runs = store.runs(10).unwrap();
    let listed: Vec<(&str, i64)> = runs.iter().map(|r| (r.id.as_str(), r.steps)).collect();
    assert_eq!(listed, [("d", 1), ("c", 5), ("b", 2), ("a", 0)]);

    let b = &runs[2];
    assert_eq!(b.ended_at_ms, Some(250));
    assert_eq!(b.ended_how.as_deref(), Some("closed"));
    assert_eq!(b.pid, 4242);
    assert_eq!(b.workspace, "/work/ws");
    assert_eq!(b.config_json, r#"{"timeout_ms":1000}"#);
    assert!(!b.captures_pruned);
    assert_eq!(runs[1].ended_at_ms, None);
    assert_eq!(runs[3].ended_how.as_deref(), Some("panic"));

    let first_two: Vec<String> = store.runs(2).unwrap().into_iter().map(|r| r.id).collect();
    assert_eq!(first_two, ["d", "c"]);
    assert_eq!(store.run("c").unwrap().unwrap().steps, 5);

    // Rows serialize as JSON for the CLI.
    let json = serde_json::to_value(&runs[0]).unwrap();
    assert_eq!(json["id"], "d");
    assert_eq!(json["steps"], 1);
}
