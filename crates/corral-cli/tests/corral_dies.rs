//! When a corral process dies without ending its call (SIGKILL leaves it no chance), its
//! direct child dies with it, and the next corral to start ends whatever else it left.

use crate::common;

use std::time::{Duration, Instant};

use common::{Scratch, testbin};

fn alive(marker: &str) -> usize {
    corral_test_support::processes_with(marker).len()
}

#[test]
fn the_next_corral_ends_what_a_killed_one_left() {
    let s = Scratch::new();
    if !common::leftovers_of_a_killed_corral_are_reachable(&s) {
        return;
    }
    let marker = format!("corral-cli-dies-{}", std::process::id());
    // A tree that ignores SIGTERM with a grandchild in a session of its own.
    let mut corral = s
        .corral(&["exec", "--", &testbin(), "stubborn-tree", "60000", &marker])
        .spawn()
        .unwrap();
    let until = Instant::now() + Duration::from_secs(5);
    while alive(&marker) < 4 && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    corral.kill().unwrap();
    corral.wait().unwrap();
    assert!(s.output(&["exec", "--", "true"]).status.success());
    let until = Instant::now() + Duration::from_secs(3);
    while alive(&marker) > 0 && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    let left = alive(&marker);
    corral_test_support::cleanup(&marker);
    assert_eq!(
        left, 0,
        "processes outlived a killed corral and the next one"
    );
}
