//! A call cancelled for a caller that is gone ([`Cancel::cancel_now`]) ends at once, with
//! SIGKILL: a command that ignores SIGTERM does not get the kill grace, also when a
//! graceful cancel came first and its grace is running.

use crate::common;

use std::time::{Duration, Instant};

use common::Fixture;
use corral::{CallOptions, Cancel, ExecRequest, Status};

fn ignoring_term(fx: &Fixture, cancel: &Cancel) -> std::thread::JoinHandle<corral::Outcome> {
    let run = fx
        .command_line()
        .approver(corral::approve::ApproveAll)
        .open()
        .unwrap();
    let options = CallOptions {
        cancel: Some(cancel.clone()),
        ..CallOptions::default()
    };
    let started = fx.workspace().join("started");
    let script = format!("trap '' TERM; touch '{}'; sleep 300", started.display());
    std::thread::spawn(move || {
        run.exec_with(&ExecRequest::new(["sh", "-c", &script]), options)
            .unwrap()
    })
}

fn wait_started(fx: &Fixture) {
    let until = Instant::now() + Duration::from_secs(20);
    while !fx.workspace().join("started").exists() {
        assert!(Instant::now() < until, "the command never started");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// `cancel_now`, then the call's end, well within the kill grace (2 s).
fn ended_at_once(cancel: &Cancel, call: std::thread::JoinHandle<corral::Outcome>) {
    let asked = Instant::now();
    cancel.cancel_now();
    let outcome = call.join().unwrap();
    assert_eq!(outcome.status, Status::Cancelled, "{}", outcome.observation);
    assert!(
        asked.elapsed() < Duration::from_millis(1500),
        "{:?}",
        asked.elapsed()
    );
}

#[test]
fn cancel_now_kills_at_once() {
    let fx = Fixture::new();
    let cancel = Cancel::new().unwrap();
    let call = ignoring_term(&fx, &cancel);
    wait_started(&fx);
    ended_at_once(&cancel, call);
}

#[test]
fn cancel_now_cuts_a_running_grace_short() {
    let fx = Fixture::new();
    let cancel = Cancel::new().unwrap();
    let call = ignoring_term(&fx, &cancel);
    wait_started(&fx);
    cancel.cancel();
    // The graceful end is under way (SIGTERM, ignored); then the caller leaves.
    std::thread::sleep(Duration::from_millis(100));
    ended_at_once(&cancel, call);
}
