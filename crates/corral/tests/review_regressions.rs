//! Holes found by trying to get past corral, each closed and kept closed here.

use crate::common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::Fixture;
use corral::{
    ApprovalMode, Policy, Run, ShellRequest, Status, approve::Approval, approve::ApprovalRequest,
    approve::Approver,
};

#[derive(Debug)]
struct Refuse;

impl Approver for Refuse {
    fn name(&self) -> &str {
        "refuse"
    }
    fn approve(&self, _: &ApprovalRequest, _: &Path) -> Approval {
        Approval::Deny(Some("no".into()))
    }
}

#[test]
fn assignments_in_front_of_a_safe_command_are_checked_too() {
    let fx = Fixture::new();
    let run = Run::builder(fx.workspace())
        .store(fx.store())
        .policy(Policy::default())
        .approval(ApprovalMode::UnlessTrusted)
        .approver(Refuse)
        .open()
        .unwrap();
    // Known-safe on its own, it runs without asking.
    assert!(run.shell(&ShellRequest::new("ls")).is_ok());
    // With git configuration smuggled in through the environment, it is asked about.
    let line =
        "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0='touch pwned' ls";
    let err = run.shell(&ShellRequest::new(line)).unwrap_err();
    assert!(
        err.to_string().contains("env 'GIT_CONFIG_COUNT=1'"),
        "{err}"
    );
    assert!(!fx.workspace().join("pwned").exists());
}

#[test]
fn a_directory_swapped_for_a_symlink_after_the_check_is_not_entered() {
    let fx = Fixture::new();
    std::fs::create_dir(fx.workspace().join("d")).unwrap();
    let outside = fx.dir.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    let run = fx.run();
    let line = format!(
        "rmdir d && ln -s {} d; cd d; touch escaped",
        outside.display()
    );
    let outcome = run.shell(&ShellRequest::new(line)).unwrap();
    assert!(!outside.join("escaped").exists(), "{}", outcome.observation);
    assert!(
        outcome.observation.contains("that was checked"),
        "{}",
        outcome.observation
    );
}

#[test]
fn a_timeout_holds_for_a_call_that_may_yield() {
    let fx = Fixture::new();
    let run = fx.run();
    let t = Instant::now();
    let outcome = run
        .shell(
            &ShellRequest::new("sleep 3")
                .timeout(Duration::from_millis(500))
                .yield_after(5000),
        )
        .unwrap();
    assert!(
        matches!(outcome.status, Status::TimedOut { .. }),
        "{:?}",
        outcome.status
    );
    assert!(
        t.elapsed() < Duration::from_secs(2),
        "took {:?}",
        t.elapsed()
    );
}
