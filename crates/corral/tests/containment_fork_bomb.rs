//! A fork bomb stops at the call's process bound (`Config::pids_max`), nothing it started
//! survives, and the call returns. Skipped, saying why, where the host gives corral no
//! `pids` controller.

use crate::common;

use std::time::{Duration, Instant};

use common::{Fixture, cleanup, marker, survivors_after, testbin};
use corral::{Config, ExecRequest, Status};

const BOUND: u32 = 24;

#[test]
fn a_fork_bomb_stops_at_the_bound_and_is_ended() {
    let fx = Fixture::new();
    let run = fx.run_with(Config {
        pids_max: Some(BOUND),
        kill_grace: Duration::from_millis(200),
        ..Config::default()
    });
    let probe = run
        .exec(&ExecRequest::new([testbin(), "exit".into(), "0".into()]))
        .unwrap();
    if !probe.containment.contains("pids") {
        common::skip(&format!(
            "containment {:?} has no pids bound on this host",
            probe.containment
        ));
        return;
    }
    let mark = marker("fork-bomb");
    let started = Instant::now();
    let outcome = run
        .exec(
            &ExecRequest::new([testbin(), "fork-bomb".into(), "2000".into(), mark.clone()])
                .timeout(Duration::from_millis(1500)),
        )
        .unwrap();
    let took = started.elapsed();
    let left = survivors_after(&mark, Duration::from_secs(1));
    cleanup(&mark);
    assert!(
        matches!(outcome.status, Status::TimedOut { .. }),
        "{}",
        outcome.observation
    );
    let text = &outcome.stdout.window.head;
    let count: u32 = text
        .trim()
        .strip_prefix("started ")
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no count in {text:?}"));
    assert!(count < BOUND, "started {count} with a bound of {BOUND}");
    assert!(left.is_empty(), "survivors: {} processes", left.len());
    assert!(took < Duration::from_secs(4), "returned after {took:?}");
}
