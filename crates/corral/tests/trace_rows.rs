//! Every call leaves a step row; a run records how it began and ended.

use crate::common;

use common::{Fixture, testbin};
use corral::ExecRequest;
use corral::trace::Store;

#[test]
fn a_step_row_holds_the_call_the_argv_and_the_result() {
    let fx = Fixture::new();
    std::fs::create_dir(fx.workspace().join("sub")).unwrap();
    let run = fx.run();
    let request =
        ExecRequest::new([testbin(), "spew".into(), "640".into(), "64".into()]).cwd("sub");
    let outcome = run.exec(&request).unwrap();
    let id = run.id().to_string();
    run.close().unwrap();

    let store = Store::open_existing(&fx.store()).unwrap();
    let row = store.step(outcome.step.id).unwrap().unwrap();
    assert_eq!(row.run_id, id);
    assert_eq!(row.seq, 1);
    assert_eq!(row.tool, "exec");
    assert_eq!(
        serde_json::from_str::<ExecRequest>(&row.call_json).unwrap(),
        request
    );
    assert_eq!(
        row.argv_json.as_deref(),
        Some(serde_json::to_string(&request.argv).unwrap().as_str())
    );
    assert!(row.cwd.ends_with("/ws/sub"), "{}", row.cwd);
    assert_eq!(row.exit_code, Some(0));
    assert_eq!(row.outcome.as_deref(), Some("exited"));
    assert_eq!((row.stdout_bytes, row.stderr_bytes), (640, 64));
    assert_eq!(
        row.observation.as_deref(),
        Some(outcome.observation.as_str())
    );
    assert!(!row.timed_out);
    assert_eq!(row.containment.as_deref(), Some(outcome.containment));

    let runs = store.runs(10).unwrap();
    assert_eq!(runs[0].id, id);
    assert_eq!(runs[0].ended_how.as_deref(), Some("closed"));
    assert_eq!(runs[0].steps, 1);
}

#[test]
fn dropping_a_run_records_it() {
    let fx = Fixture::new();
    let id = {
        let run = fx.run();
        run.id().to_string()
    };
    let store = Store::open_existing(&fx.store()).unwrap();
    assert_eq!(
        store.run(&id).unwrap().unwrap().ended_how.as_deref(),
        Some("dropped")
    );
}

#[test]
fn steps_are_numbered_in_order() {
    let fx = Fixture::new();
    let run = fx.run();
    let seqs: Vec<i64> = (0..3)
        .map(|_| run.exec(&ExecRequest::new(["true"])).unwrap().step.seq)
        .collect();
    assert_eq!(seqs, [1, 2, 3]);
}

#[test]
fn a_closed_run_refuses_calls() {
    let fx = Fixture::new();
    let run = fx.run();
    run.close().unwrap();
    // close() consumes the run: the type system already refuses; this checks the store.
    let store = Store::open_existing(&fx.store()).unwrap();
    assert_eq!(
        store.runs(1).unwrap()[0].ended_how.as_deref(),
        Some("closed")
    );
}

#[test]
fn calls_at_once_each_end_with_their_own_sandbox_row() {
    let fx = Fixture::new();
    let run = fx.run();
    // Each call's sandbox row is written with its step's end: calls that overlap must not
    // take each other's.
    let steps: Vec<i64> = std::thread::scope(|scope| {
        let calls: Vec<_> = (0..4)
            .map(|_| {
                scope.spawn(|| {
                    (0..5)
                        .map(|_| {
                            run.exec(&ExecRequest::new([testbin(), "exit".into(), "0".into()]))
                                .unwrap()
                        })
                        .map(|outcome| outcome.step.id)
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        calls.into_iter().flat_map(|c| c.join().unwrap()).collect()
    });
    run.close().unwrap();
    let store = Store::open_existing(&fx.store()).unwrap();
    assert_eq!(steps.len(), 20);
    for id in steps {
        let rows = store.sandbox_events(id).unwrap();
        assert_eq!(rows.len(), 1, "step {id}: {rows:?}");
        assert_eq!(rows[0].step_id, Some(id));
        assert!(store.step(id).unwrap().unwrap().outcome.is_some());
    }
}
