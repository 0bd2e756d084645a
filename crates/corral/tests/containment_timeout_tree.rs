//! A timeout ends a whole tree that ignores SIGTERM, including a child that left the
//! process group with `setsid` and that child's own child: SIGTERM, the grace, SIGKILL,
//! and nothing survives.

mod common;

use std::time::{Duration, Instant};

use common::{Fixture, cleanup, marker, survivors_after, testbin};
use corral::{Config, ExecRequest, Status};

fn tree_is_ended(config: Config, name: &str) {
    let fx = Fixture::new();
    let run = fx.run_with(Config {
        kill_grace: Duration::from_millis(200),
        ..config
    });
    let mark = marker(name);
    let started = Instant::now();
    let outcome = run
        .exec(
            &ExecRequest::new([
                testbin(),
                "stubborn-tree".into(),
                "60000".into(),
                mark.clone(),
            ])
            .timeout(Duration::from_millis(400)),
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
