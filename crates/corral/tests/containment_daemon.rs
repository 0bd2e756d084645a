//! A daemon that a foreground command starts (double fork, `setsid`) is still the call's:
//! it is gone when the call returns, and the outcome counts it among the leftovers.
//! Checked on the layer the host gives and on the process-group + subreaper fallback.

mod common;

use std::time::{Duration, Instant};

use common::{Fixture, cleanup, marker, survivors_after, testbin};
use corral::{Config, ExecRequest};

fn daemon_is_ended(config: Config, name: &str) {
    let fx = Fixture::new();
    let run = fx.run_with(Config {
        kill_grace: Duration::from_millis(300),
        ..config
    });
    let mark = marker(name);
    let started = Instant::now();
    let outcome = run
        .exec(&ExecRequest::new([
            testbin(),
            "daemon".into(),
            "60000".into(),
            mark.clone(),
        ]))
        .unwrap();
    let took = started.elapsed();
    let left = survivors_after(&mark, Duration::from_secs(1));
    cleanup(&mark);
    assert!(outcome.status.success(), "{}", outcome.observation);
    assert!(
        left.is_empty(),
        "{}: survivors {left:?}",
        outcome.containment
    );
    assert!(
        outcome.leftovers_ended >= 1,
        "{}: {}",
        outcome.containment,
        outcome.observation
    );
    assert!(took < Duration::from_secs(3), "returned after {took:?}");
}

#[test]
fn a_setsid_daemon_is_ended_with_the_call() {
    daemon_is_ended(Config::default(), "daemon");
}

#[test]
fn the_fallback_layer_ends_it_too() {
    daemon_is_ended(
        Config {
            cgroups: false,
            ..Config::default()
        },
        "daemon-fallback",
    );
}
