//! SIGTERM or SIGINT to `corral exec` ends the command's whole group before corral exits.

use crate::common;

use std::time::{Duration, Instant};

use common::{Scratch, testbin};

fn survivors(marker: &str) -> usize {
    corral_test_support::processes_with(marker).len()
}

fn signal_corral(sig: &str, expect: i32) {
    let s = Scratch::new();
    let marker = format!("corral-cli-signal-{sig}-{}", std::process::id());
    let mut child = s
        .corral(&["exec", "--", &testbin(), "pair", "60000", &marker])
        .spawn()
        .unwrap();
    let until = Instant::now() + Duration::from_secs(5);
    // corral itself carries the marker in its argv, then the pair: three processes.
    while survivors(&marker) < 3 && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(survivors(&marker), 3, "the tree did not start");
    std::process::Command::new("kill")
        .args([sig, &child.id().to_string()])
        .status()
        .unwrap();
    let status = child.wait().unwrap();
    let left = survivors(&marker);
    assert_eq!(status.code(), Some(expect));
    assert_eq!(left, 0, "processes outlived corral");
}

#[test]
fn sigterm_ends_the_tree() {
    signal_corral("-TERM", 143);
}

#[test]
fn sigint_ends_the_tree() {
    signal_corral("-INT", 130);
}

#[test]
fn sighup_ends_the_tree() {
    signal_corral("-HUP", 129);
}
