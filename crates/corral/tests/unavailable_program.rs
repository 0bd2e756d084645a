//! A program the machine does not have is an outcome naming it, and the run goes on.

use crate::common;

use common::Fixture;
use corral::{ExecRequest, Status};

#[test]
fn a_missing_program_is_reported_by_name_and_the_run_goes_on() {
    let fx = Fixture::new();
    let run = fx.run();
    let outcome = run
        .exec(&ExecRequest::new(["corral-no-such-program", "x"]))
        .unwrap();
    let Status::Unavailable {
        program, reason, ..
    } = &outcome.status
    else {
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
    // As a shell says it: found, but it cannot run.
    assert_eq!(outcome.status.cli_exit_code(), 126);
}

#[test]
fn a_directory_cannot_run() {
    let fx = Fixture::new();
    std::fs::create_dir(fx.workspace().join("sub")).unwrap();
    let run = fx.run();
    let outcome = run.exec(&ExecRequest::new(["./sub"])).unwrap();
    let Status::Unavailable { reason, .. } = &outcome.status else {
        panic!("{:?}", outcome.status)
    };
    assert!(reason.contains("directory"), "{reason}");
    assert_eq!(outcome.status.cli_exit_code(), 126);
}

#[test]
fn an_argument_list_over_the_kernels_limit_says_so() {
    let fx = Fixture::new();
    let run = fx.run();
    // One argument past the kernel's limit on a single string (128 KiB).
    let long = "x".repeat(200 * 1024);
    let outcome = run
        .exec(&ExecRequest::new(["true", long.as_str()]))
        .unwrap();
    let Status::TooLong {
        program,
        bytes,
        longest,
    } = &outcome.status
    else {
        panic!("{:?}", outcome.status)
    };
    assert_eq!(program, "true");
    assert_eq!(*longest, 200 * 1024);
    assert!(*bytes > 200 * 1024, "{bytes}");
    assert_eq!(outcome.status.outcome(), "too_long");
    let said = &outcome.observation;
    assert!(
        said.contains("argument list of `true` is too long"),
        "{said}"
    );
    assert!(said.contains("a file"), "says what to do instead: {said}");
    assert_eq!(outcome.status.cli_exit_code(), 126);
}

/// A stage that cannot start says why on its own stderr: where its `2>` sends it.
#[test]
fn a_start_that_fails_reports_to_the_stages_own_stderr() {
    let fx = Fixture::new();
    let run = fx.run();
    let long = "x".repeat(200 * 1024);
    let outcome = run
        .shell(&corral::ShellRequest::new(format!("true {long} 2>err.txt")))
        .unwrap();
    assert_eq!(
        outcome.status.cli_exit_code(),
        126,
        "{}",
        outcome.observation
    );
    let err = std::fs::read_to_string(fx.workspace().join("err.txt")).unwrap();
    assert!(err.contains("argument list is too long"), "{err}");
    assert_eq!(outcome.stderr.bytes, 0, "{}", outcome.observation);
}
