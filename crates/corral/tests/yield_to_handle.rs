//! `yield_ms`: a call still running after it becomes a handle, with its output so far;
//! one that ends in time is an ordinary result.

use crate::common;

use std::time::{Duration, Instant};

use common::{Fixture, testbin};
use corral::{
    ExecRequest, ShellRequest, Status, handle::HandleState, handle::KillRequest,
    handle::PollRequest,
};

#[test]
fn a_slow_call_becomes_a_handle_with_its_output_so_far() {
    let fx = Fixture::new();
    let run = fx.run();
    let t = Instant::now();
    let outcome = run
        .shell(&ShellRequest::new(format!("{} tick 50 100", testbin())).yield_after(350))
        .unwrap();
    assert!(t.elapsed() < Duration::from_secs(2));
    let Status::Running { handle } = outcome.status else {
        panic!("{:?}", outcome.status)
    };
    assert!(
        outcome.stdout.window.head.starts_with("tick 1\n"),
        "{}",
        outcome.observation
    );
    assert!(
        outcome
            .observation
            .contains(&format!("it is now handle {handle}")),
        "{}",
        outcome.observation
    );
    let next = run
        .shell_poll(&PollRequest {
            handle,
            wait_ms: Some(2000),
            ..Default::default()
        })
        .unwrap();
    assert!(
        !next.output.contains("tick 1\n"),
        "the poll continues after what the call returned"
    );
    assert_eq!(
        run.shell_kill(&KillRequest { handle }).unwrap().state,
        HandleState::Killed
    );
}

#[test]
fn a_quick_call_with_yield_is_an_ordinary_result() {
    let fx = Fixture::new();
    let run = fx.run();
    let mut request = ExecRequest::new([testbin(), "exit".into(), "4".into()]);
    request.yield_ms = Some(5000);
    let t = Instant::now();
    let outcome = run.exec(&request).unwrap();
    assert!(
        t.elapsed() < Duration::from_secs(3),
        "it returns when the command ends"
    );
    assert_eq!(outcome.status, Status::Exited { code: 4 });
}

/// A line that becomes a handle does not call its stages "not run" while they run: its
/// status line says it runs, as which handle. One that ends within its wait says how each
/// stage ended, as a foreground call does.
#[test]
fn a_line_that_became_a_handle_is_not_shown_as_not_run() {
    let fx = Fixture::new();
    let run = fx.run();
    let outcome = run
        .shell(&ShellRequest::new("echo hi; sleep 30 && echo done").yield_after(300))
        .unwrap();
    let Status::Running { handle } = outcome.status else {
        panic!("{}", outcome.observation)
    };
    run.shell_kill(&KillRequest { handle }).unwrap();
    assert!(
        !outcome.observation.contains("not run"),
        "{}",
        outcome.observation
    );
    assert!(
        outcome
            .observation
            .starts_with(&format!("still running: it is now handle {handle}")),
        "{}",
        outcome.observation
    );

    let outcome = run
        .shell(&ShellRequest::new("echo hi; false && echo done").yield_after(10_000))
        .unwrap();
    assert_eq!(outcome.status, Status::Exited { code: 1 });
    assert!(
        outcome
            .observation
            .contains("stages: echo hi → exit 0 ; false → exit 1 && echo 'done' → not run"),
        "{}",
        outcome.observation
    );
}
