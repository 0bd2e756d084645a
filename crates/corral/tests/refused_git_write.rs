//! A git write the box refused says so once: git's error in its stderr, and the denial
//! beside it without the line again, in place of the guess it makes certain.

use crate::common;

use std::path::Path;

use common::Fixture;
use corral::{Config, ShellRequest, sandbox::SandboxConfig, sandbox::SandboxMode};

/// `git` with a fixed identity and no config of the person's.
fn git(ws: &Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new("git")
        .args(["-c", "user.email=t@example.org", "-c", "user.name=t"])
        .args(args)
        .current_dir(ws)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap()
}

#[test]
fn a_refused_git_write_is_said_once() {
    if !common::layer_enforced(corral::sandbox::Layer::ProtectedPaths) {
        return;
    }
    let fx = Fixture::new();
    let ws = fx.workspace();
    assert!(git(&ws, &["init", "-q", "."]).status.success());
    std::fs::write(ws.join("a.txt"), "one\n").unwrap();
    assert!(git(&ws, &["add", "a.txt"]).status.success());
    assert!(git(&ws, &["commit", "-q", "-m", "one"]).status.success());
    std::fs::write(ws.join("a.txt"), "two\n").unwrap();
    // `git_write = false`: the whole `.git` read-only, as before git wrote in the box.
    let mut sandbox = SandboxConfig::mode(SandboxMode::WorkspaceWrite);
    sandbox.git_write = false;
    let run = fx.approving_run(Config {
        sandbox,
        ..Config::default()
    });
    let r = run
        .shell(&ShellRequest::new(
            "git -c user.email=t@example.org -c user.name=t commit -qam two",
        ))
        .unwrap();
    assert!(!r.status.success(), "{}", r.observation);
    // git's own error, in its stderr, once; the denial and what would allow it beside.
    let said = r
        .observation
        .matches("index.lock': Read-only file system")
        .count();
    assert_eq!(said, 1, "{}", r.observation);
    assert!(
        r.observation.contains("sandbox: denied a write to ")
            && r.observation.contains("git_write = true"),
        "{}",
        r.observation
    );
    assert!(
        !r.observation.contains("may have been refused"),
        "the guess is made certain, not repeated: {}",
        r.observation
    );
}
