//! The installed observer is told of each record once it is written, and of nothing a
//! write refused (a step of a run that does not exist, a handle's second end).

mod common;

use std::sync::{Arc, Mutex};

use corral_trace::{
    NewHandle, NewPolicyEvent, NewRun, NewStep, Observer, StepDone, StepIds, Store,
};

#[derive(Default)]
struct Log(Mutex<Vec<String>>);

impl Log {
    fn push(&self, s: String) {
        self.0.lock().unwrap().push(s);
    }
}

impl Observer for Log {
    fn run_begun(&self, run: &NewRun) {
        self.push(format!("run {}", run.id));
    }
    fn run_ended(&self, run_id: &str, _at: i64, how: &str) {
        self.push(format!("end {run_id} {how}"));
    }
    fn step_begun(&self, ids: StepIds, step: &NewStep) {
        self.push(format!("step {} {} {}", step.run_id, ids.seq, step.tool));
    }
    fn step_finished(&self, _id: i64, done: &StepDone) {
        self.push(format!("done {:?}", done.exit_code));
    }
    fn policy_event(&self, e: &NewPolicyEvent) {
        self.push(format!("policy {} {}", e.decision, e.target));
    }
    fn handle_started(&self, h: &NewHandle) {
        self.push(format!("handle {} {}", h.handle, h.line));
    }
    fn handle_ended(
        &self,
        _r: &str,
        h: u32,
        _at: i64,
        how: &str,
        _c: Option<i32>,
        _s: Option<i32>,
    ) {
        self.push(format!("handle end {h} {how}"));
    }
}

#[test]
fn every_written_record_is_observed_and_no_refused_one() {
    let log = Arc::new(Log::default());
    assert!(corral_trace::set_observer(log.clone()).is_ok());
    // One per process.
    assert!(corral_trace::set_observer(Arc::new(Log::default())).is_err());

    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("trace.db")).unwrap();
    store.begin_run(&common::new_run("r1", 1)).unwrap();
    assert!(store.begin_run(&common::new_run("r1", 1)).is_err());
    let step = store.begin_step(&common::new_step("r1", 2)).unwrap();
    assert!(store.begin_step(&common::new_step("nope", 2)).is_err());
    store
        .record_policy_event(&NewPolicyEvent {
            run_id: "r1".into(),
            step_id: Some(step.id),
            at_ms: 2,
            act: "exec".into(),
            target: "rm -f x".into(),
            effect: "deny".into(),
            decision: "refused".into(),
            ..Default::default()
        })
        .unwrap();
    store
        .record_handle_start(&NewHandle {
            run_id: "r1".into(),
            handle: 1,
            step_id: Some(step.id),
            line: "sleep 9".into(),
            ..Default::default()
        })
        .unwrap();
    store
        .record_handle_end("r1", 1, 5, "killed", None, Some(9))
        .unwrap();
    store
        .record_handle_end("r1", 1, 6, "exited", Some(0), None)
        .unwrap();
    store.finish_step(step.id, &common::exited(7)).unwrap();
    store.end_run("r1", 9, "closed").unwrap();

    assert_eq!(
        *log.0.lock().unwrap(),
        [
            "run r1",
            "step r1 1 exec",
            "policy refused rm -f x",
            "handle 1 sleep 9",
            "handle end 1 killed",
            "done Some(7)",
            "end r1 closed",
        ]
    );
}
