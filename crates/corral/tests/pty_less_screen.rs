//! The screen of a full-screen program, as a terminal shows it.

use crate::common;
use crate::pty_common;

use std::time::Duration;

use common::Fixture;
use corral::{handle::HandleState, handle::PollRequest, handle::WriteRequest};
use pty_common::{start_tty, until_screen};

#[test]
fn the_screen_of_less_shows_the_first_lines_of_its_file() {
    let fx = Fixture::new();
    let text: String = (1..=200).map(|n| format!("line {n}\n")).collect();
    std::fs::write(fx.workspace().join("lines.txt"), text).unwrap();
    let run = fx.run();
    let h = start_tty(&run, "less lines.txt");
    let s = until_screen(&run, h, Duration::from_secs(10), |s| {
        s.lines.first().map(String::as_str) == Some("line 1")
    });
    assert_eq!((s.rows, s.cols), (24, 80));
    assert_eq!(s.lines[22], "line 23", "{}", s.observation);
    assert!(!s.lines.iter().any(|l| l == "line 24"), "{}", s.observation);
    assert!(
        s.observation.contains("line 1\nline 2\n"),
        "{}",
        s.observation
    );
    // Quit, and less ends by itself.
    run.shell_write(&WriteRequest {
        handle: h,
        text: "q".into(),
        ..Default::default()
    })
    .unwrap();
    let p = run
        .shell_poll(&PollRequest {
            handle: h,
            wait_ms: Some(3000),
            ..Default::default()
        })
        .unwrap();
    let p = if p.state == HandleState::Running {
        run.shell_poll(&PollRequest {
            handle: h,
            wait_ms: Some(3000),
            ..Default::default()
        })
        .unwrap()
    } else {
        p
    };
    assert!(
        matches!(p.state, HandleState::Exited { .. }),
        "{:?}",
        p.state
    );
}
