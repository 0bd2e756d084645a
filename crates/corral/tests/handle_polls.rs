//! A poll is a byte cursor: what was printed since the previous poll, the newest bytes
//! when more than a window is waiting (with exactly how many were skipped), and a wait
//! that wakes on output.

use crate::common;

use std::time::{Duration, Instant};

use common::{Fixture, testbin};
use corral::{Config, Status, handle::HandleState, handle::PollRequest, handle::StartRequest};

fn poll(run: &corral::Run, handle: u32, wait_ms: u64) -> corral::handle::Poll {
    run.shell_poll(&PollRequest {
        handle,
        wait_ms: Some(wait_ms),
        ..Default::default()
    })
    .unwrap()
}

#[test]
fn a_poll_before_any_output_is_empty_not_an_error() {
    let fx = Fixture::new();
    let run = fx.run();
    let h = run
        .shell_start(&StartRequest::new(format!("{} sleep 2000", testbin())))
        .unwrap()
        .handle;
    let p = poll(&run, h, 0);
    assert_eq!(
        (p.state, p.bytes, p.skipped_bytes),
        (HandleState::Running, 0, 0)
    );
    assert!(p.observation.contains("(no new output)"));
}

#[test]
fn more_than_a_window_returns_the_newest_and_counts_the_rest() {
    let fx = Fixture::new();
    let run = fx.run_with(Config {
        poll_window: 1000,
        ..Config::default()
    });
    let h = run
        .shell_start(&StartRequest::new(format!("{} lines 2000", testbin())))
        .unwrap()
        .handle;
    // Wait for the exit.
    let mut p = poll(&run, h, 0);
    let until = Instant::now() + Duration::from_secs(10);
    let mut seen = 0u64;
    while p.state == HandleState::Running && Instant::now() < until {
        seen += p.bytes + p.skipped_bytes;
        std::thread::sleep(Duration::from_millis(50));
        p = poll(&run, h, 0);
    }
    seen += p.bytes + p.skipped_bytes;
    assert_eq!(
        p.state,
        HandleState::Exited {
            status: Status::Exited { code: 0 }
        }
    );
    // Everything printed was either returned or counted as skipped, exactly once.
    let total: u64 = (1..=2000u64)
        .map(|i| format!("line {i}\n").len() as u64)
        .sum();
    assert_eq!(seen, total);
    assert!(p.bytes <= 1000);
    assert!(
        p.output.ends_with("line 2000\n"),
        "the newest bytes come back: {:?}",
        p.output
    );
    // The cursor moved past everything: the next poll is empty.
    assert_eq!(poll(&run, h, 0).bytes, 0);
}

#[test]
fn a_waiting_poll_wakes_on_output() {
    let fx = Fixture::new();
    let run = fx.run();
    let h = run
        .shell_start(&StartRequest::new(format!("{} tick 3 300", testbin())))
        .unwrap()
        .handle;
    let first = poll(&run, h, 5000);
    assert!(first.output.starts_with("tick 1"), "{first:?}");
    let t = Instant::now();
    let second = poll(&run, h, 5000);
    assert_eq!(second.output, "tick 2\n");
    assert!(
        t.elapsed() < Duration::from_secs(2),
        "the wait should end when the line arrives"
    );
}

#[test]
fn polls_are_recorded_as_read() {
    let fx = Fixture::new();
    let run = fx.run();
    let h = run
        .shell_start(&StartRequest::new("echo recorded"))
        .unwrap()
        .handle;
    let p = poll(&run, h, 5000);
    assert_eq!(p.output, "recorded\n");
    let store = corral::trace::Store::open_existing(&fx.store()).unwrap();
    let rows = store.handle_output(run.id(), h).unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].bytes, b"recorded\n");
}

#[test]
fn skipped_bytes_are_read_by_the_call_the_poll_names() {
    let fx = Fixture::new();
    let run = fx.run_with(Config {
        poll_window: 1000,
        ..Config::default()
    });
    let h = run
        .shell_start(&StartRequest::new(format!("{} lines 2000", testbin())))
        .unwrap()
        .handle;
    // Reading the capture moves no cursor: wait on it until the last line is there.
    let tail = corral::OutputRequest {
        handle: Some(h),
        tail: Some(1),
        ..Default::default()
    };
    let until = Instant::now() + Duration::from_secs(10);
    while !run.output(&tail).unwrap().observation.contains("2000\n") {
        assert!(
            Instant::now() < until,
            "the handle never printed its last line"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let p = poll(&run, h, 0);
    assert!(p.skipped_bytes > 0);
    let call = p
        .observation
        .split("read them with output ")
        .nth(1)
        .and_then(|rest| rest.split(" …]").next())
        .unwrap_or_else(|| panic!("no call named: {}", p.observation));
    let request: corral::OutputRequest = serde_json::from_str(call).unwrap();
    let skipped = run.output(&request).unwrap();
    assert_eq!(
        skipped.shown,
        Some((0, p.skipped_bytes - 1)),
        "{}",
        skipped.observation
    );
    assert!(
        skipped.observation.contains(" 1\n"),
        "{}",
        skipped.observation
    );
}
