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
    let corral = s
        .corral(&["exec", "--", &testbin(), "stubborn-tree", "60000", &marker])
        .spawn()
        .unwrap();
    wait_for(&marker, 4);
    assert_eq!(
        killed_then_next(&s, corral, &marker),
        0,
        "processes outlived a killed corral and the next one"
    );
}

/// Where no cgroup or PID namespace holds a call (an ordinary user's unsandboxed call on
/// a host that delegates no cgroup), its processes are held by their process group: the
/// grandchildren of a killed corral stay in it, and the next corral ends them. Holds in
/// every containment.
#[test]
fn the_next_corral_ends_a_killed_one_s_leftovers_in_their_group() {
    let s = Scratch::new();
    let marker = format!("corral-cli-dies-group-{}", std::process::id());
    let bin = testbin();
    let line = format!("'{bin}' bg-child 60000 {marker}; '{bin}' sleep 60000 {marker}");
    let corral = s
        .corral(&["exec", "--", "sh", "-c", &line])
        .spawn()
        .unwrap();
    // corral and `sh` name the marker in their arguments too: four in all.
    wait_for(&marker, 4);
    assert_eq!(alive(&marker), 4, "the call's processes did not start");
    assert_eq!(
        killed_then_next(&s, corral, &marker),
        0,
        "processes outlived a killed corral and the next one"
    );
}

/// Wait (5 s at most) until `n` processes carry `marker`.
fn wait_for(marker: &str, n: usize) {
    let until = Instant::now() + Duration::from_secs(5);
    while alive(marker) < n && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Kill `corral` outright, start the next corral, and count what still carries `marker`
/// (waiting up to 3 s for it to go); whatever is left is then cleaned up.
fn killed_then_next(s: &Scratch, mut corral: std::process::Child, marker: &str) -> usize {
    corral.kill().unwrap();
    corral.wait().unwrap();
    let out = s.output(&["exec", "--", "true"]);
    assert!(out.status.success(), "{out:?}");
    let until = Instant::now() + Duration::from_secs(3);
    while alive(marker) > 0 && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    let left = alive(marker);
    corral_test_support::cleanup(marker);
    left
}
