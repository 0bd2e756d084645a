//! A call made after another call's processes were killed starts as any call does.
//!
//! A killed call's cgroup remembers the kill: a child later born into that group from
//! outside it is killed at birth. A long-lived run (`corral mcp`) must never hand such a
//! group to its next calls, however many there are.

use crate::common;

use std::time::Duration;

use common::{Fixture, testbin};
use corral::{Config, ExecRequest, Status};

/// More calls than the groups a process keeps for reuse, so a reused group is reached.
const CALLS_AFTER: usize = 12;

fn every_later_call_succeeds(run: &corral::Run, after: &str) {
    for i in 0..CALLS_AFTER {
        let outcome = run.exec(&ExecRequest::new(["true"])).unwrap();
        assert!(
            outcome.status.success(),
            "call {i} after {after} ({}): {}",
            outcome.containment,
            outcome.observation
        );
    }
}

#[test]
fn calls_after_a_timeout_and_after_ended_leftovers_start_normally() {
    let fx = Fixture::new();
    let run = fx.run_with(Config {
        kill_grace: Duration::from_millis(100),
        ..Config::default()
    });
    for _ in 0..2 {
        // Deaf to SIGTERM: the timeout ends it with SIGKILL.
        let bin = testbin();
        let deaf = ExecRequest::new([bin.as_str(), "sleep", "30000", "--ignore-term"]);
        let timed_out = run.exec(&deaf.timeout(Duration::from_millis(300))).unwrap();
        assert!(
            matches!(timed_out.status, Status::TimedOut { .. }),
            "{}",
            timed_out.observation
        );
        every_later_call_succeeds(&run, "a timeout");

        // The command exits and leaves a process behind, which the call ends.
        let mark = common::marker("after-a-kill");
        let leftover = run
            .exec(&ExecRequest::new([
                bin.as_str(),
                "daemon",
                "30000",
                mark.as_str(),
            ]))
            .unwrap();
        common::cleanup(&mark);
        assert!(leftover.status.success(), "{}", leftover.observation);
        assert_eq!(leftover.leftovers_ended, 1, "{}", leftover.observation);
        every_later_call_succeeds(&run, "ended leftovers");
    }
}
