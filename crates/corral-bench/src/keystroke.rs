//! Keystroke to echo on a terminal handle: the time from `shell_write` of one character
//! to the echoed byte coming back through `shell_poll` (the write is made with
//! `yield_ms: 0`, so neither call waits out a yield window: the poll wakes on the byte).
//! Measured for `cat` (the terminal's own echo) and an interactive `bash` (readline's
//! echo, a round trip through the program). Also shown: a `shell_write` with the default
//! yield, which returns once the answer has gone quiet for 50 ms. Goal: median ≤ 5 ms.

use std::time::{Duration, Instant};

use corral::{
    Run, handle::HandleState, handle::KillRequest, handle::PollRequest, handle::StartRequest,
    handle::WriteRequest,
};

use crate::stats::{micros, summarize};

const WRITES: usize = 200;

fn poll(run: &Run, handle: u32, wait_ms: u64) -> corral::handle::Poll {
    run.shell_poll(&PollRequest {
        handle,
        wait_ms: Some(wait_ms),
        ..Default::default()
    })
    .unwrap()
}

/// Poll until nothing more comes for a moment (a prompt, a banner).
fn drain(run: &Run, handle: u32) {
    while poll(run, handle, 200).bytes > 0 {}
}

fn keystrokes(run: &Run, line: &str) -> Vec<Duration> {
    let handle = run
        .shell_start(&StartRequest::new(line).on_tty())
        .unwrap()
        .handle;
    drain(run, handle);
    let mut samples = Vec::with_capacity(WRITES);
    for i in 0..WRITES {
        // Start each line afresh now and then, so bash's line editor stays on one row.
        if i % 50 == 49 {
            run.shell_write(&WriteRequest {
                handle,
                text: "\x15".into(),
                yield_ms: Some(0),
                ..Default::default()
            })
            .unwrap();
            drain(run, handle);
        }
        let t = Instant::now();
        let mut seen = run
            .shell_write(&WriteRequest {
                handle,
                text: "x".into(),
                yield_ms: Some(0),
                ..Default::default()
            })
            .unwrap()
            .output;
        while !seen.contains('x') {
            let p = poll(run, handle, 1000);
            assert_eq!(p.state, HandleState::Running);
            seen.push_str(&p.output);
        }
        samples.push(t.elapsed());
    }
    run.shell_kill(&KillRequest { handle }).unwrap();
    samples
}

fn full_write(run: &Run) -> Vec<Duration> {
    let handle = run
        .shell_start(&StartRequest::new("cat").on_tty())
        .unwrap()
        .handle;
    drain(run, handle);
    let mut samples = Vec::new();
    for _ in 0..20 {
        let t = Instant::now();
        let p = run
            .shell_write(&WriteRequest {
                handle,
                text: "y\n".into(),
                ..Default::default()
            })
            .unwrap();
        samples.push(t.elapsed());
        assert!(p.output.contains('y'));
    }
    run.shell_kill(&KillRequest { handle }).unwrap();
    samples
}

pub fn run() {
    let dir = tempfile::tempdir().unwrap();
    let run = Run::builder(dir.path())
        .store(dir.path().join("trace.db"))
        .policy(corral::Policy::permissive())
        .open()
        .unwrap();
    println!(
        "{WRITES} one-character writes each (write with yield 0, then poll until the echo); goal: median ≤ 5 ms"
    );
    for line in ["cat", "bash --norc --noprofile"] {
        let s = summarize(&mut keystrokes(&run, line));
        println!(
            "keystroke→echo  median {:7.0} µs  p95 {:7.0} µs   {line}",
            micros(s.median),
            micros(s.p95)
        );
    }
    let s = summarize(&mut full_write(&run));
    println!(
        "shell_write round trip with the default yield (returns 50 ms after the answer goes quiet): median {:.1} ms",
        micros(s.median) / 1000.0
    );
    run.close().unwrap();
}
