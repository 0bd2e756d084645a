//! `C-c` typed into a shell interrupts its foreground job, not the session.

use crate::common;
use crate::pty_common;

use std::time::{Duration, Instant};

use common::Fixture;
use corral::{handle::HandleState, handle::KeysRequest};
use pty_common::{start_bash, write, write_until};

/// Whether a process runs with exactly this argv.
fn running(argv: &[&str]) -> bool {
    let want: Vec<u8> = argv
        .iter()
        .flat_map(|a| [a.as_bytes(), b"\0"].concat())
        .collect();
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .any(|e| std::fs::read(e.path().join("cmdline")).is_ok_and(|c| c == want))
}

fn wait_for(what: &str, within: Duration, f: impl Fn() -> bool) {
    let deadline = Instant::now() + within;
    while !f() {
        assert!(Instant::now() < deadline, "{what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn ctrl_c_interrupts_the_foreground_job_and_the_session_goes_on() {
    let fx = Fixture::new();
    let run = fx.run();
    let h = start_bash(&run);
    // A duration no other process has: the marker that finds this sleep from outside.
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    let duration = format!("100.{nanos:09}{}", std::process::id());
    write(&run, h, &format!("sleep {duration}\n"));
    wait_for("the sleep started", Duration::from_secs(5), || {
        running(&["sleep", &duration])
    });
    let p = run
        .shell_keys(&KeysRequest {
            handle: h,
            keys: vec!["C-c".into()],
            yield_ms: Some(500),
        })
        .unwrap();
    assert_eq!(p.state, HandleState::Running);
    wait_for("the sleep was interrupted", Duration::from_secs(3), || {
        !running(&["sleep", &duration])
    });
    let seen = write_until(&run, h, "echo alive-$((6*7))\n", "alive-42");
    assert!(seen.contains("alive-42"), "{seen:?}");
}
