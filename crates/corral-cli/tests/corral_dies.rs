//! When a corral process dies without ending its call (SIGKILL leaves it no chance), its
//! direct child dies with it, and the next corral to start ends whatever else it left.

mod common;

use std::process::Command;
use std::time::{Duration, Instant};

use common::{Scratch, testbin};

fn alive(marker: &str) -> usize {
    let mut n = 0;
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        let zombie = stat
            .rsplit_once(')')
            .is_some_and(|(_, r)| r.trim_start().starts_with('Z'));
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        if !zombie && String::from_utf8_lossy(&cmdline).contains(marker) {
            n += 1;
        }
    }
    n
}

#[test]
fn the_next_corral_ends_what_a_killed_one_left() {
    let s = Scratch::new();
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
    if left > 0 {
        let _ = Command::new("pkill").args(["-9", "-f", &marker]).status();
    }
    assert_eq!(
        left, 0,
        "processes outlived a killed corral and the next one"
    );
}
