//! A daemon that a foreground command starts (double fork, `setsid`) is still the call's:
//! it is gone when the call returns, and the outcome counts it among the leftovers.
//! Checked on the layer the host gives and on the process-group + subreaper fallback.

use crate::common;

use std::time::Duration;

use common::{cleanup, exec_tree, survivors_after};
use corral::Config;

fn daemon_is_ended(config: Config, name: &str) {
    let config = Config {
        kill_grace: Duration::from_millis(300),
        ..config
    };
    let call = exec_tree(config, "daemon", "60000", name, None);
    let (outcome, took) = (&call.outcome, call.took);
    let left = survivors_after(&call.mark, Duration::from_secs(1));
    cleanup(&call.mark);
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
