//! Two daemons that restart each other when one dies are both ended: ending them one pid
//! at a time would lose the race, so the unit has to end them together.

use crate::common;

use std::time::Duration;

use common::{cleanup, exec_tree, survivors_after};
use corral::Config;

fn pair_is_ended(config: Config, name: &str) {
    let config = Config {
        kill_grace: Duration::from_millis(200),
        ..config
    };
    let call = exec_tree(config, "respawn", "10000", name, None);
    let (outcome, took) = (&call.outcome, call.took);
    let left = survivors_after(&call.mark, Duration::from_secs(1));
    // A respawning pair may outlive one round of kill -9: repeat until none is left.
    for _ in 0..20 {
        cleanup(&call.mark);
    }
    assert!(outcome.status.success(), "{}", outcome.observation);
    assert!(
        left.is_empty(),
        "{}: survivors {left:?}",
        outcome.containment
    );
    assert!(took < Duration::from_secs(3), "returned after {took:?}");
}

#[test]
fn daemons_that_respawn_each_other_are_all_ended() {
    pair_is_ended(Config::default(), "respawn");
}

#[test]
fn the_fallback_layer_ends_them_too() {
    pair_is_ended(
        Config {
            cgroups: false,
            ..Config::default()
        },
        "respawn-fallback",
    );
}
