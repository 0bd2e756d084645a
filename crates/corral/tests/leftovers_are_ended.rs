//! Nothing outlives a foreground call: what a command leaves running in its group is
//! ended, counted, and a pipe held by an escaped process does not hang the call.

use crate::common;

use std::time::{Duration, Instant};

use common::{Fixture, cleanup, exec_tree, marker, survivors_after, testbin};
use corral::{Config, ExecRequest};

#[test]
fn a_background_child_is_ended_when_the_command_exits() {
    let fx = Fixture::new();
    let run = fx.run();
    let mark = marker("leftover-bg");
    let started = Instant::now();
    let outcome = run
        .exec(&ExecRequest::new([
            testbin(),
            "bg-child".into(),
            "60000".into(),
            mark.clone(),
        ]))
        .unwrap();
    let left = survivors_after(&mark, Duration::from_secs(2));
    cleanup(&mark);
    assert!(outcome.status.success(), "{}", outcome.observation);
    assert_eq!(outcome.leftovers_ended, 1, "{}", outcome.observation);
    assert!(
        outcome
            .observation
            .contains("ended 1 process the command left running"),
        "{}",
        outcome.observation
    );
    assert!(started.elapsed() < Duration::from_secs(3));
    assert!(left.is_empty(), "survivors: {left:?}");
}

#[test]
fn a_daemon_holding_the_pipe_does_not_hang_the_call() {
    let config = Config {
        kill_grace: Duration::from_millis(200),
        ..Config::default()
    };
    let call = exec_tree(config, "daemon", "60000", "leftover-daemon", None);
    let (outcome, took) = (&call.outcome, call.took);
    cleanup(&call.mark);
    assert!(outcome.status.success(), "{}", outcome.observation);
    assert!(took < Duration::from_secs(3), "returned after {took:?}");
}
