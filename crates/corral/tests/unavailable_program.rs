//! A program the machine does not have is an outcome naming it, and the run goes on.

mod common;

use common::Fixture;
use corral::{ExecRequest, Status};

#[test]
fn a_missing_program_is_reported_by_name_and_the_run_goes_on() {
    let fx = Fixture::new();
    let run = fx.run();
    let outcome = run
        .exec(&ExecRequest::new(["corral-no-such-program", "x"]))
        .unwrap();
    let Status::Unavailable { program, reason } = &outcome.status else {
        panic!("expected unavailable, got {:?}", outcome.status);
    };
    assert_eq!(program, "corral-no-such-program");
    assert!(reason.contains("not found on PATH"), "{reason}");
    assert_eq!(outcome.status.cli_exit_code(), 127);
    assert!(
        outcome
            .observation
            .starts_with("unavailable: `corral-no-such-program`"),
        "{}",
        outcome.observation
    );

    // The run is still usable.
    assert!(
        run.exec(&ExecRequest::new(["true"]))
            .unwrap()
            .status
            .success()
    );
}

#[test]
fn a_relative_path_that_is_not_executable_is_unavailable() {
    let fx = Fixture::new();
    std::fs::write(fx.workspace().join("script.sh"), "echo hi\n").unwrap();
    let run = fx.run();
    let outcome = run.exec(&ExecRequest::new(["./script.sh"])).unwrap();
    let Status::Unavailable { reason, .. } = &outcome.status else {
        panic!("{:?}", outcome.status)
    };
    assert!(reason.contains("not executable"), "{reason}");
}
