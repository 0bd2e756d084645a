//! A trace kept inside the workspace (its database, the captures, the undo store) is
//! corral's, not the workspace's: no step records it as changed, an undo leaves it be,
//! and the undo store does not record its own blobs at every call.

use std::path::Path;

use crate::common::testbin;
use corral::handle::{HandleState, PollRequest, StartRequest};
use corral::undo::{UndoTarget, apply, plan};
use corral::{Config, Run, ShellRequest};

/// Every path a step of the workspace records, as text.
fn recorded_paths(store: &corral::trace::Store, workspace: &Path) -> Vec<(i64, String)> {
    let ws = workspace.to_string_lossy();
    let mut paths = Vec::new();
    for step in store.changing_steps(&ws, 100).unwrap() {
        for file in store.step_files(step).unwrap() {
            paths.push((step, String::from_utf8_lossy(&file.path).into_owned()));
        }
    }
    paths
}

fn a_trace_in(workspace: &Path, store: &Path) {
    let ws = workspace.canonicalize().unwrap();
    let run = Run::builder(&ws)
        .store(store)
        .config(Config::default())
        .policy(corral::Policy::permissive())
        .open()
        .unwrap();
    // A call that changes a file and prints enough to leave a capture file.
    let wrote = run
        .shell(&ShellRequest::new(format!(
            "echo agent > a.txt && {} lines 3000",
            testbin()
        )))
        .unwrap();
    assert!(wrote.status.success(), "{}", wrote.observation);
    // A handle whose polls record what it changed so far, while its capture grows.
    let started = run
        .shell_start(&StartRequest::new(format!(
            "echo handle > b.txt && {} tick 4 100",
            testbin()
        )))
        .unwrap();
    loop {
        let poll = run
            .shell_poll(&PollRequest {
                handle: started.handle,
                wait_ms: Some(5000),
                ..Default::default()
            })
            .unwrap();
        if poll.state != HandleState::Running {
            break;
        }
    }
    let run_id = run.id().to_string();
    run.close().unwrap();

    let trace = corral::trace::Store::open_existing(store).unwrap();
    let mut paths: Vec<String> = recorded_paths(&trace, &ws)
        .into_iter()
        .map(|(_, p)| p)
        .collect();
    paths.sort();
    assert_eq!(paths, ["a.txt", "b.txt"], "only what the commands wrote");

    // Undoing every step puts the workspace back and leaves the trace whole.
    let undo_dir = corral::undo::store_dir(store);
    for _ in 0..2 {
        let undo = plan(
            &trace,
            &undo_dir,
            &UndoTarget::Last {
                workspace: ws.clone(),
            },
        )
        .unwrap();
        assert!(undo.conflicts.is_empty(), "{:?}", undo.conflicts);
        apply(&undo, &undo_dir).unwrap();
    }
    assert!(!ws.join("a.txt").exists() && !ws.join("b.txt").exists());
    let reopened = corral::trace::Store::open_existing(store).unwrap();
    assert!(
        reopened.run(&run_id).unwrap().is_some(),
        "the run is still in the trace"
    );
}

#[test]
fn a_trace_in_a_directory_of_the_workspace_is_not_recorded() {
    let workspace = tempfile::tempdir().unwrap();
    let store = workspace.path().join(".corral").join("trace.db");
    a_trace_in(workspace.path(), &store);
}

#[test]
fn a_trace_beside_the_workspaces_files_is_not_recorded() {
    // The trace's directory is the workspace itself: its captures, owners and undo store
    // are the workspace's direct children.
    let workspace = tempfile::tempdir().unwrap();
    let store = workspace.path().join("trace.db");
    a_trace_in(workspace.path(), &store);
}
