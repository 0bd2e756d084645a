//! A run whose owner is gone is closed by the next opener, once; a run whose owner lives
//! is left alone, whichever PID namespace that owner is in.

use crate::common;

use corral_trace::{NewHandle, Store};

/// A pid no process has: a child that was started and reaped.
fn dead_pid() -> u32 {
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    pid
}

fn open_run_with_work(store: &Store, id: &str, pid: u32) -> i64 {
    let mut run = common::new_run(id, 100);
    run.pid = pid;
    store.begin_run(&run).unwrap();
    let step = store.begin_step(&common::new_step(id, 101)).unwrap();
    store
        .record_handle_start(&NewHandle {
            run_id: id.into(),
            handle: 1,
            step_id: Some(step.id),
            line: "sleep 60".into(),
            stages_json: "[]".into(),
            pids_json: "[]".into(),
            containment: "cgroup-v2".into(),
            capture_path: None,
            owner_pid: pid,
            started_at_ms: 101,
        })
        .unwrap();
    let dir = store.capture_dir(id);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join(format!("{}.stdout", step.seq)),
        "compiling\nerror: boom\n",
    )
    .unwrap();
    step.id
}

#[test]
fn a_dead_owners_run_step_and_handle_are_closed_once() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("trace.db")).unwrap();
    let pid = dead_pid();
    let step = open_run_with_work(&store, "gone", pid);

    let closed = store.close_abandoned(500).unwrap();
    assert_eq!(closed.len(), 1);
    assert_eq!(
        (closed[0].steps, closed[0].handles, closed[0].pid),
        (1, 1, pid)
    );

    let run = store.run("gone").unwrap().unwrap();
    assert_eq!(run.ended_how.as_deref(), Some("aborted"));
    assert_eq!(run.ended_at_ms, Some(500));
    let row = store.step(step).unwrap().unwrap();
    assert_eq!(row.outcome.as_deref(), Some("aborted"));
    assert_eq!(row.stdout_bytes, 22);
    assert!(row.stdout_path.is_some());
    let observation = row.observation.unwrap();
    assert!(
        observation.contains(&format!("corral (pid {pid}) ended")),
        "{observation}"
    );
    assert!(observation.contains("error: boom"), "{observation}");
    let handle = store.handle("gone", 1).unwrap().unwrap();
    assert_eq!(handle.how.as_deref(), Some("aborted"));

    assert!(
        store.close_abandoned(600).unwrap().is_empty(),
        "closed twice"
    );
}

#[test]
fn a_claimed_run_is_left_alone_even_when_its_pid_is_not_visible() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("trace.db")).unwrap();
    // A pid this process cannot see, as for an owner in another PID namespace: the claim
    // (a lock the kernel holds for the owner) is what counts.
    open_run_with_work(&store, "live", dead_pid());
    let claim = store.claim_run("live").unwrap();
    let other = Store::open(&dir.path().join("trace.db")).unwrap();
    assert!(other.close_abandoned(500).unwrap().is_empty());
    assert!(other.run("live").unwrap().unwrap().ended_at_ms.is_none());

    // Once the claim goes (its owner died), the run is closed.
    drop(claim);
    assert_eq!(other.close_abandoned(600).unwrap().len(), 1);
}

#[test]
fn an_unclaimed_run_of_a_live_pid_is_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("trace.db")).unwrap();
    open_run_with_work(&store, "old-corral", std::process::id());
    assert!(store.close_abandoned(500).unwrap().is_empty());
}
