//! A run opened for one call (a command line's) leaves no thread of corral's behind once
//! it has closed: its housekeeping is joined, the thread that made its namespace has
//! ended, and so has the one that collected the namespace's init. A process that exits
//! right after (as `corral exec` does) then has no sleeping thread to wake and end on the
//! way out. A test binary of its own: no other test's runs start threads meanwhile.

mod common;

use std::time::{Duration, Instant};

use common::Fixture;
use corral::ExecRequest;

/// The names of this process's threads that are corral's.
fn corral_threads() -> Vec<String> {
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .flatten()
        .filter_map(|task| std::fs::read_to_string(task.path().join("comm")).ok())
        .map(|name| name.trim_end().to_string())
        .filter(|name| name.starts_with("corral-"))
        .collect()
}

#[test]
fn a_closed_one_call_run_leaves_no_thread() {
    let fx = Fixture::new();
    for call in [true, false] {
        let run = fx
            .command_line()
            .housekeeping_in_background()
            .open()
            .unwrap();
        if call {
            let outcome = run.exec(&ExecRequest::new(["true"])).unwrap();
            assert!(outcome.status.success(), "{}", outcome.observation);
        }
        run.close().unwrap();
        // The threads were let go by the close; each ends on its own: wait for that,
        // bounded.
        let until = Instant::now() + Duration::from_secs(10);
        let mut left = corral_threads();
        while !left.is_empty() && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(5));
            left = corral_threads();
        }
        assert!(
            left.is_empty(),
            "left after a one-call run closed ({}): {left:?}",
            if call { "with its call" } else { "without one" }
        );
    }
}
