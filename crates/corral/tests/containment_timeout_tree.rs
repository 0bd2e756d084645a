//! A timeout ends a whole tree that ignores SIGTERM, including a child that left the
//! process group with `setsid` and that child's own child: SIGTERM, the grace, SIGKILL,
//! and nothing survives.

use crate::common;

use std::time::Duration;

use common::{cleanup, exec_tree, survivors_after};
use corral::{Config, Status};

fn tree_is_ended(config: Config, name: &str) {
    let config = Config {
        kill_grace: Duration::from_millis(200),
        ..config
    };
    let timeout = Some(Duration::from_millis(400));
    let call = exec_tree(config, "stubborn-tree", "60000", name, timeout);
    let (outcome, took) = (&call.outcome, call.took);
    let left = survivors_after(&call.mark, Duration::from_secs(1));
    cleanup(&call.mark);
    assert!(
        matches!(outcome.status, Status::TimedOut { .. }),
        "{}",
        outcome.observation
    );
    assert!(
        left.is_empty(),
        "{}: survivors {left:?}",
        outcome.containment
    );
    assert!(took < Duration::from_secs(3), "returned after {took:?}");
}

#[test]
fn a_stubborn_tree_with_a_setsid_grandchild_does_not_survive_a_timeout() {
    tree_is_ended(Config::default(), "stubborn-tree");
}

#[test]
fn the_fallback_layer_ends_it_too() {
    tree_is_ended(
        Config {
            cgroups: false,
            ..Config::default()
        },
        "stubborn-tree-fallback",
    );
}
