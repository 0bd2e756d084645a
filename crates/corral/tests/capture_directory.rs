//! A run's capture directory is made by its first capture file: a run whose calls print
//! nothing leaves no directory behind, and one that prints finds its files there.

use crate::common;

use common::{Fixture, testbin};
use corral::ExecRequest;

#[test]
fn a_run_that_prints_nothing_makes_no_capture_directory() {
    let fx = Fixture::new();
    let run = fx.run();
    let outcome = run
        .exec(&ExecRequest::new([testbin(), "exit".into(), "0".into()]))
        .unwrap();
    assert!(outcome.status.success(), "{}", outcome.observation);
    assert_eq!(outcome.stdout.capture, None);
    let captures = fx.store().parent().unwrap().join("captures");
    let made: Vec<_> = std::fs::read_dir(&captures)
        .map(|dir| dir.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    assert!(made.is_empty(), "{made:?}");
    run.close().unwrap();
}

#[test]
fn the_first_output_makes_the_directory_and_its_file() {
    let fx = Fixture::new();
    let run = fx.run();
    let outcome = run
        .exec(&ExecRequest::new([testbin(), "lines".into(), "3".into()]))
        .unwrap();
    let capture = outcome.stdout.capture.clone().expect("a capture file");
    assert_eq!(
        std::fs::read_to_string(&capture).unwrap().lines().count(),
        3
    );
    // A second call's file goes beside it.
    let again = run
        .exec(&ExecRequest::new([testbin(), "lines".into(), "2".into()]))
        .unwrap();
    let second = again.stdout.capture.expect("a capture file");
    assert_eq!(second.parent(), capture.parent());
    run.close().unwrap();
}
