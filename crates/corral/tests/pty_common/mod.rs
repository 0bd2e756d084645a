//! What the PTY tests share: waiting for output or a screen, with a deadline.
#![allow(dead_code)]

use std::time::{Duration, Instant};

use corral::{
    Run, handle::HandleState, handle::PollRequest, handle::Screen, handle::ScreenRequest,
    handle::StartRequest, handle::WriteRequest,
};

/// Start `line` on a terminal.
pub fn start_tty(run: &Run, line: &str) -> u32 {
    run.shell_start(&StartRequest::new(line).on_tty())
        .unwrap()
        .handle
}

/// An interactive bash without startup files, with a prompt that is easy to wait for.
pub fn start_bash(run: &Run) -> u32 {
    let h = start_tty(run, "bash --norc --noprofile");
    write_until(run, h, "PS1='READY''$ '\n", "READY$ ");
    h
}

/// Write `text`, then wait until what came back (with the write's own answer) contains
/// `needle`; returns all of it.
pub fn write_until(run: &Run, handle: u32, text: &str, needle: &str) -> String {
    let mut seen = write(run, handle, text);
    if !seen.contains(needle) {
        seen.push_str(&until_output(run, handle, needle, Duration::from_secs(5)));
    }
    seen
}

/// Write `text` and return what came back.
pub fn write(run: &Run, handle: u32, text: &str) -> String {
    run.shell_write(&WriteRequest {
        handle,
        text: text.into(),
        ..Default::default()
    })
    .unwrap()
    .output
}

/// Poll until the output (everything since now, accumulated) contains `needle`.
pub fn until_output(run: &Run, handle: u32, needle: &str, within: Duration) -> String {
    let deadline = Instant::now() + within;
    let mut seen = String::new();
    loop {
        let p = run
            .shell_poll(&PollRequest {
                handle,
                wait_ms: Some(100),
                ..Default::default()
            })
            .unwrap();
        seen.push_str(&p.output);
        if seen.contains(needle) {
            return seen;
        }
        assert!(
            Instant::now() < deadline && p.state == HandleState::Running,
            "waited for {needle:?}; saw {seen:?} (state {:?})",
            p.state
        );
    }
}

/// Look at the screen until `pred` holds.
pub fn until_screen(
    run: &Run,
    handle: u32,
    within: Duration,
    pred: impl Fn(&Screen) -> bool,
) -> Screen {
    let deadline = Instant::now() + within;
    loop {
        let s = run.shell_screen(&ScreenRequest { handle }).unwrap();
        if pred(&s) {
            return s;
        }
        assert!(
            Instant::now() < deadline,
            "the screen never matched:\n{}",
            s.observation
        );
        std::thread::sleep(Duration::from_millis(30));
    }
}
