//! A timeout ends the command's whole process group, SIGTERM then SIGKILL, and returns
//! promptly with the outcome saying so.

use crate::common;

use std::time::{Duration, Instant};

use common::{Fixture, cleanup, marker, survivors_after, testbin};
use corral::{Config, ExecRequest, Status};

#[test]
fn a_timeout_ends_the_command_and_its_child() {
    let fx = Fixture::new();
    let run = fx.run();
    let mark = marker("timeout-pair");
    let started = Instant::now();
    let outcome = run
        .exec(
            &ExecRequest::new([testbin(), "pair".into(), "60000".into(), mark.clone()])
                .timeout(Duration::from_millis(300)),
        )
        .unwrap();
    let took = started.elapsed();
    let left = survivors_after(&mark, Duration::from_secs(2));
    cleanup(&mark);
    assert_eq!(
        outcome.status,
        Status::TimedOut {
            after: Duration::from_millis(300)
        }
    );
    assert_eq!(outcome.status.cli_exit_code(), 124);
    assert!(
        outcome.observation.starts_with("timed out after 300ms"),
        "{}",
        outcome.observation
    );
    assert!(took < Duration::from_secs(2), "returned after {took:?}");
    assert!(left.is_empty(), "survivors: {left:?}");
}

#[test]
fn a_command_ignoring_sigterm_is_killed_after_the_grace() {
    let fx = Fixture::new();
    let config = Config {
        kill_grace: Duration::from_millis(300),
        ..Config::default()
    };
    let run = fx.run_with(config);
    let mark = marker("timeout-stubborn");
    let started = Instant::now();
    let outcome = run
        .exec(
            &ExecRequest::new([
                testbin(),
                "pair".into(),
                "60000".into(),
                mark.clone(),
                "--ignore-term".into(),
            ])
            .timeout(Duration::from_millis(200)),
        )
        .unwrap();
    let took = started.elapsed();
    let left = survivors_after(&mark, Duration::from_secs(2));
    cleanup(&mark);
    assert!(
        matches!(outcome.status, Status::TimedOut { .. }),
        "{:?}",
        outcome.status
    );
    assert!(
        took >= Duration::from_millis(500),
        "SIGKILL came before the grace: {took:?}"
    );
    assert!(took < Duration::from_secs(3), "returned after {took:?}");
    assert!(left.is_empty(), "survivors: {left:?}");
}
