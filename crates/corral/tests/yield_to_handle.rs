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
