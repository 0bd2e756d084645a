//! What begin_step/finish_step record is what step/steps read back.

use crate::common;

use corral_trace::{StepDone, StepIds, Store, TraceErrorKind};

#[test]
fn begin_and_finish_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("trace.db")).unwrap();
    store.begin_run(&common::new_run("run-1", 1000)).unwrap();

    let ids = store.begin_step(&common::new_step("run-1", 1001)).unwrap();
    assert_eq!(ids.seq, 1);

    // Begun but not finished: the row is there, without an outcome.
    let open = store.step(ids.id).unwrap().unwrap();
    assert_eq!(open.run_id, "run-1");
    assert_eq!(open.tool, "exec");
    assert_eq!(open.call_json, r#"{"argv":["echo","hi"]}"#);
    assert_eq!(open.cwd, "/work/ws");
    assert_eq!(open.started_at_ms, 1001);
    assert_eq!(open.outcome, None);
    assert_eq!(open.duration_ms, None);
    assert_eq!(open.argv_json, None);

    let done = StepDone {
        argv_json: r#"["sh","-c","echo hi >&2; exit 3"]"#.to_owned(),
        duration_ms: 17,
        exit_code: Some(3),
        signal: None,
        timed_out: false,
        outcome: "exited".to_owned(),
        stdout_bytes: 10,
        stderr_bytes: 3,
        stdout_path: Some("captures/run-1/1.stdout".to_owned()),
        stderr_path: Some("captures/run-1/1.stderr".to_owned()),
        observation: "exit 3\nhi".to_owned(),
        error: Some("note".to_owned()),
        containment: Some("cgroup-v2+pids+pid-ns".to_owned()),
    };
    store.finish_step(ids.id, &done).unwrap();

    let row = store.step(ids.id).unwrap().unwrap();
    assert_eq!(row.id, ids.id);
    assert_eq!(row.seq, 1);
    assert_eq!(row.argv_json.as_deref(), Some(done.argv_json.as_str()));
    assert_eq!(row.duration_ms, Some(17));
    assert_eq!(row.exit_code, Some(3));
    assert_eq!(row.signal, None);
    assert!(!row.timed_out);
    assert_eq!(row.outcome.as_deref(), Some("exited"));
    assert_eq!((row.stdout_bytes, row.stderr_bytes), (10, 3));
    assert_eq!(row.stdout_path, done.stdout_path);
    assert_eq!(row.stderr_path, done.stderr_path);
    assert!(!row.captures_pruned);
    assert_eq!(row.observation.as_deref(), Some("exit 3\nhi"));
    assert_eq!(row.error.as_deref(), Some("note"));
    assert_eq!(row.containment, done.containment);
    assert_eq!(store.run("run-1").unwrap().unwrap().capture_bytes, 13);

    // Finishing again replaces, and capture_bytes follows.
    store
        .finish_step(
            ids.id,
            &StepDone {
                stdout_bytes: 4,
                stderr_path: None,
                ..done.clone()
            },
        )
        .unwrap();
    assert_eq!(store.run("run-1").unwrap().unwrap().capture_bytes, 4);

    // A refused call: nothing spawned, argv "null" is stored as NULL.
    let refused = store.begin_step(&common::new_step("run-1", 1002)).unwrap();
    assert_eq!(refused.seq, 2);
    store
        .finish_step(
            refused.id,
            &StepDone {
                argv_json: "null".to_owned(),
                outcome: "refused".to_owned(),
                observation: "refused: rm is not allowed".to_owned(),
                ..StepDone::default()
            },
        )
        .unwrap();
    let row = store.step(refused.id).unwrap().unwrap();
    assert_eq!(row.argv_json, None);
    assert_eq!(row.outcome.as_deref(), Some("refused"));

    let steps = store.steps(Some("run-1"), 10).unwrap();
    let seqs: Vec<i64> = steps.iter().map(|s| s.seq).collect();
    assert_eq!(seqs, [2, 1]);
    assert_eq!(store.steps(None, 1).unwrap()[0].id, refused.id);
    assert_eq!(store.run("run-1").unwrap().unwrap().steps, 2);
}

#[test]
fn unknown_run_and_step_are_not_found() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("trace.db");
    let store = Store::open(&path).unwrap();

    let err = store.begin_step(&common::new_step("nope", 1)).unwrap_err();
    assert_eq!(err.kind(), TraceErrorKind::NotFound);
    common::assert_names_path(&err, &path);

    let err = store.finish_step(99, &common::exited(0)).unwrap_err();
    assert_eq!(err.kind(), TraceErrorKind::NotFound);
    let err = store.end_run("nope", 5, "closed").unwrap_err();
    assert_eq!(err.kind(), TraceErrorKind::NotFound);
    assert_eq!(store.step(99).unwrap(), None);
    assert_eq!(store.run("nope").unwrap(), None);
}

#[test]
fn run_ids_must_be_directory_names_and_unique() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("trace.db")).unwrap();
    for bad in ["", ".", "..", "a/b", "../x", "a b"] {
        let err = store.begin_run(&common::new_run(bad, 1)).unwrap_err();
        assert_eq!(err.kind(), TraceErrorKind::Invalid, "{bad:?}");
    }
    store.begin_run(&common::new_run("r.1_a-B", 1)).unwrap();
    let err = store.begin_run(&common::new_run("r.1_a-B", 2)).unwrap_err();
    assert_eq!(err.kind(), TraceErrorKind::Invalid);
    assert!(err.to_string().contains("already exists"), "{err}");
    let StepIds { seq, .. } = store.begin_step(&common::new_step("r.1_a-B", 3)).unwrap();
    assert_eq!(seq, 1);
}
