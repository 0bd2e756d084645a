//! A suspected sandbox denial in the `on-failure` approval mode: the approver decides
//! whether to run it again without the sandbox, and the answer is recorded.

mod common;

use common::Fixture;
use corral::{
    ApprovalMode, ApproveAll, Config, DenyAll, ExecRequest, Run, SandboxConfig, SandboxMode,
};

fn run(fx: &Fixture, approve: bool) -> Run {
    let builder = Run::builder(fx.workspace())
        .store(fx.store())
        .config(Config {
            sandbox: SandboxConfig::mode(SandboxMode::ReadOnly),
            ..Config::default()
        })
        .policy(corral::Policy::permissive())
        .approval(ApprovalMode::OnFailure);
    if approve {
        builder.approver(ApproveAll).open().unwrap()
    } else {
        builder.approver(DenyAll).open().unwrap()
    }
}

fn decisions(fx: &Fixture, run: &Run) -> Vec<String> {
    let store = corral::trace::Store::open(&fx.store()).unwrap();
    store
        .policy_events(Some(run.id()), false, 10)
        .unwrap()
        .into_iter()
        .map(|e| e.decision)
        .collect()
}

#[test]
fn an_approved_retry_runs_without_the_sandbox() {
    let fx = Fixture::new();
    let run = run(&fx, true);
    let o = run
        .exec(&ExecRequest::new(["sh", "-c", "echo x > written"]))
        .unwrap();
    assert!(o.status.success(), "{}", o.observation);
    assert!(fx.workspace().join("written").exists());
    let report = o.sandbox.unwrap();
    assert!(report.retried_unsandboxed);
    assert_eq!(decisions(&fx, &run), ["retry_unsandboxed_approved"]);
}

#[test]
fn a_denied_retry_keeps_the_failure() {
    let fx = Fixture::new();
    let run = run(&fx, false);
    let o = run
        .exec(&ExecRequest::new(["sh", "-c", "echo x > written"]))
        .unwrap();
    assert!(!o.status.success());
    assert!(!fx.workspace().join("written").exists());
    assert!(o.sandbox.unwrap().suspected_denial.is_some());
    assert_eq!(decisions(&fx, &run), ["retry_unsandboxed_denied"]);
}
