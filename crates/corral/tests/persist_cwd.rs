//! A run that keeps its working directory, when asked: a line ending in `cd DIR`, or a
//! call's `cwd`, sets where later calls start; every result says where it ran; a kept
//! directory that vanished, or a `cd` out of the workspace, is said plainly.

use crate::common;

use common::Fixture;
use corral::{Config, ErrorKind, ExecRequest, Run, ShellRequest};

fn keeping(fx: &Fixture) -> Run {
    fx.run_with(Config {
        persist_cwd: true,
        ..Config::default()
    })
}

fn stdout(outcome: &corral::Outcome) -> String {
    format!(
        "{}{}",
        outcome.stdout.window.head, outcome.stdout.window.tail
    )
}

#[test]
fn by_default_every_call_starts_at_the_root() {
    let fx = Fixture::new();
    let run = fx.run();
    run.shell(&ShellRequest::new("mkdir sub && cd sub"))
        .unwrap();
    let pwd = run.exec(&ExecRequest::new(["pwd"])).unwrap();
    assert_eq!(stdout(&pwd).trim(), fx.workspace().display().to_string());
    assert!(!pwd.observation.contains("\nin "), "{}", pwd.observation);
}

#[test]
fn a_final_cd_sets_where_later_calls_start() {
    let fx = Fixture::new();
    let run = keeping(&fx);
    let cd = run
        .shell(&ShellRequest::new("mkdir -p a/b && cd a/b"))
        .unwrap();
    assert!(
        cd.observation.contains("in .; later calls start in a/b"),
        "{}",
        cd.observation
    );
    let pwd = run.exec(&ExecRequest::new(["pwd"])).unwrap();
    assert_eq!(
        stdout(&pwd).trim(),
        fx.workspace().join("a/b").display().to_string()
    );
    assert!(
        pwd.observation.contains("\nin a/b\n"),
        "{}",
        pwd.observation
    );
    // A cwd is relative to the kept directory, and is kept in turn.
    std::fs::create_dir(fx.workspace().join("a/b/c")).unwrap();
    let there = run.shell(&ShellRequest::new("pwd").cwd("c")).unwrap();
    assert!(
        stdout(&there).trim().ends_with("a/b/c"),
        "{}",
        there.observation
    );
    let after = run.shell(&ShellRequest::new("cd ../.. && pwd")).unwrap();
    assert!(
        stdout(&after).trim().ends_with("/a"),
        "{}",
        after.observation
    );
    // `pwd` ran last, not `cd`: the run stays where it was.
    let still = run.exec(&ExecRequest::new(["pwd"])).unwrap();
    assert!(
        stdout(&still).trim().ends_with("a/b/c"),
        "{}",
        still.observation
    );
}

#[test]
fn a_kept_directory_that_vanished_is_a_clear_error_once() {
    let fx = Fixture::new();
    let run = keeping(&fx);
    run.shell(&ShellRequest::new("mkdir gone && cd gone"))
        .unwrap();
    std::fs::remove_dir(fx.workspace().join("gone")).unwrap();
    let err = run.exec(&ExecRequest::new(["pwd"])).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidRequest, "{err}");
    assert!(err.to_string().contains("gone"), "{err}");
    assert!(err.to_string().contains("no longer exists"), "{err}");
    let pwd = run.exec(&ExecRequest::new(["pwd"])).unwrap();
    assert_eq!(stdout(&pwd).trim(), fx.workspace().display().to_string());
}

#[test]
fn a_cd_out_of_the_workspace_is_not_kept() {
    let fx = Fixture::new();
    let run = keeping(&fx);
    run.shell(&ShellRequest::new("mkdir in && cd in")).unwrap();
    let err = run.shell(&ShellRequest::new("cd /")).unwrap_err();
    // Refused (an ordinary result over MCP, with its hint), not a malformed request.
    assert_eq!(err.kind(), ErrorKind::Refused, "{err}");
    assert!(err.to_string().contains("leaves the workspace"), "{err}");
    let denial = err.denial().expect("a refusal says why");
    assert_eq!(denial.layer.as_deref(), Some("workspace"));
    assert!(denial.hint.starts_with("stay inside "), "{}", denial.hint);
    let pwd = run.exec(&ExecRequest::new(["pwd"])).unwrap();
    assert_eq!(
        stdout(&pwd).trim(),
        fx.workspace().join("in").display().to_string()
    );
}
