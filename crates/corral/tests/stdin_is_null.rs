//! stdin is the null device: a command that reads it sees end of file at once.

use crate::common;

use std::time::{Duration, Instant};

use common::{Fixture, testbin};
use corral::ExecRequest;

#[test]
fn a_reader_of_stdin_returns_at_once() {
    let fx = Fixture::new();
    let run = fx.run();
    let started = Instant::now();
    let outcome = run
        .exec(&ExecRequest::new([testbin(), "stdin-len".into()]).timeout(Duration::from_secs(20)))
        .unwrap();
    assert!(outcome.status.success(), "{}", outcome.observation);
    assert_eq!(outcome.stdout.window.head, "0\n");
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[test]
fn cat_returns_at_once() {
    let fx = Fixture::new();
    let run = fx.run();
    let outcome = run
        .exec(&ExecRequest::new(["cat"]).timeout(Duration::from_secs(20)))
        .unwrap();
    assert!(outcome.status.success(), "{}", outcome.observation);
    assert_eq!(outcome.stdout.bytes, 0);
}
