//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::Path;

use corral_trace::{NewRun, NewStep, StepDone, TraceError};

pub fn new_run(id: &str, started_at_ms: i64) -> NewRun {
    NewRun {
        id: id.to_owned(),
        workspace: "/work/ws".to_owned(),
        started_at_ms,
        pid: 4242,
        config_json: r#"{"timeout_ms":1000}"#.to_owned(),
    }
}

pub fn new_step(run_id: &str, started_at_ms: i64) -> NewStep {
    NewStep {
        run_id: run_id.to_owned(),
        tool: "exec".to_owned(),
        call_json: r#"{"argv":["echo","hi"]}"#.to_owned(),
        cwd: "/work/ws".to_owned(),
        started_at_ms,
    }
}

pub fn exited(code: i32) -> StepDone {
    StepDone {
        argv_json: r#"["echo","hi"]"#.to_owned(),
        duration_ms: 3,
        exit_code: Some(code),
        signal: None,
        timed_out: false,
        outcome: "exited".to_owned(),
        stdout_bytes: 3,
        stderr_bytes: 0,
        stdout_path: None,
        stderr_path: None,
        observation: "hi\n".to_owned(),
        error: None,
        containment: Some("cgroup-v2+pids".to_owned()),
    }
}

/// The error message names the store's path, and the error says so too.
pub fn assert_names_path(err: &TraceError, path: &Path) {
    let msg = err.to_string();
    assert!(
        msg.contains(&path.display().to_string()),
        "message does not name {}: {msg}",
        path.display()
    );
    assert_eq!(err.path(), path);
}

/// A run started at `started_at_ms` with one step whose stdout capture
/// (`bytes` long) is a real file in the run's capture directory; ended
/// unless `live`.
pub fn run_with_capture(
    store: &corral_trace::Store,
    id: &str,
    started_at_ms: i64,
    bytes: usize,
    live: bool,
) -> i64 {
    store.begin_run(&new_run(id, started_at_ms)).unwrap();
    let dir = store.capture_dir(id);
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("1.stdout");
    std::fs::write(&file, vec![b'x'; bytes]).unwrap();
    let ids = store.begin_step(&new_step(id, started_at_ms)).unwrap();
    let mut done = exited(0);
    done.stdout_bytes = bytes as u64;
    done.stdout_path = Some(file.display().to_string());
    store.finish_step(ids.id, &done).unwrap();
    if !live {
        store.end_run(id, started_at_ms + 1, "closed").unwrap();
    }
    ids.id
}
