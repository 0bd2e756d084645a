//! When the policy says ask, the approver answers for the person: once, for the run, no,
//! or abort. A deny never reaches it.

use crate::common;

use std::path::Path;
use std::sync::{Arc, Mutex};

use common::Fixture;
use corral::policy::{Act, Effect};
use corral::trace::Store;
use corral::{
    ApprovalMode, ErrorKind, ExecRequest, Policy, Run, ShellRequest, approve::Approval,
    approve::ApprovalRequest, approve::Approver,
};

/// Answers from a script and remembers every question.
#[derive(Debug, Clone)]
struct Scripted {
    answers: Arc<Mutex<Vec<Approval>>>,
    asked: Arc<Mutex<Vec<String>>>,
}

impl Scripted {
    fn new(answers: Vec<Approval>) -> Self {
        Self {
            answers: Arc::new(Mutex::new(answers)),
            asked: Arc::default(),
        }
    }
    fn asked(&self) -> Vec<String> {
        self.asked.lock().unwrap().clone()
    }
}

impl Approver for Scripted {
    fn name(&self) -> &str {
        "scripted"
    }
    fn approve(&self, request: &ApprovalRequest, workspace: &Path) -> Approval {
        self.asked.lock().unwrap().push(request.question(workspace));
        self.answers.lock().unwrap().remove(0)
    }
}

fn run(fx: &Fixture, policy: Policy, approver: &Scripted) -> Run {
    Run::builder(fx.workspace())
        .store(fx.store())
        .policy(policy)
        .approver(approver.clone())
        .open()
        .unwrap()
}

fn asking(pattern: &str) -> Policy {
    Policy::permissive()
        .layer("project")
        .rule(Act::Exec, pattern, Effect::Ask)
}

#[test]
fn approve_once_asks_every_time() {
    let fx = Fixture::new();
    let approver = Scripted::new(vec![Approval::Approve, Approval::Approve]);
    let run = run(&fx, asking("echo*"), &approver);
    for _ in 0..2 {
        assert!(
            run.exec(&ExecRequest::new(["echo", "hi"]))
                .unwrap()
                .status
                .success()
        );
    }
    assert_eq!(
        approver.asked(),
        ["Allow `echo hi` in the workspace root?"; 2]
    );
}

#[test]
fn approve_for_run_is_cached_by_exact_argv() {
    let fx = Fixture::new();
    let approver = Scripted::new(vec![Approval::ApproveForRun, Approval::Approve]);
    let run = run(&fx, asking("echo*"), &approver);
    run.exec(&ExecRequest::new(["echo", "a"])).unwrap();
    run.exec(&ExecRequest::new(["echo", "a"])).unwrap();
    assert_eq!(
        approver.asked().len(),
        1,
        "the same argv was asked about again"
    );
    run.exec(&ExecRequest::new(["echo", "b"])).unwrap();
    assert_eq!(
        approver.asked().len(),
        2,
        "a different argv must be asked about"
    );
}

#[test]
fn an_approval_of_text_does_not_cover_bytes_that_read_the_same() {
    let fx = Fixture::new();
    let approver = Scripted::new(vec![Approval::ApproveForRun, Approval::ApproveForRun]);
    let run = run(&fx, asking("echo*"), &approver);
    let byte = corral::OsText::from(b"\xff".as_slice());
    // The four characters `\xff`, then the one byte 0xff, shown as `\xff`.
    run.exec(&ExecRequest::new(["echo", "\\xff"])).unwrap();
    run.exec(&ExecRequest::new([
        corral::OsText::from("echo"),
        byte.clone(),
    ]))
    .unwrap();
    assert_eq!(
        approver.asked().len(),
        2,
        "the bytes rode on the text's approval"
    );
    // Each is remembered as itself.
    run.exec(&ExecRequest::new([corral::OsText::from("echo"), byte]))
        .unwrap();
    run.exec(&ExecRequest::new(["echo", "\\xff"])).unwrap();
    assert_eq!(approver.asked().len(), 2);
}

#[test]
fn approve_a_prefix_covers_what_starts_with_it() {
    let fx = Fixture::new();
    let approver = Scripted::new(vec![Approval::ApprovePrefix(vec!["echo".into()])]);
    let run = run(&fx, asking("echo*"), &approver);
    run.exec(&ExecRequest::new(["echo", "a"])).unwrap();
    run.shell(&ShellRequest::new("echo b; echo c d")).unwrap();
    assert_eq!(approver.asked().len(), 1);
}

#[test]
fn a_denial_refuses_and_is_recorded_with_who_answered() {
    let fx = Fixture::new();
    let approver = Scripted::new(vec![Approval::Deny(Some("not today".into()))]);
    let run = run(&fx, asking("touch*"), &approver);
    let err = run.exec(&ExecRequest::new(["touch", "made"])).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Refused);
    assert!(err.to_string().contains("not today"), "{err}");
    assert!(!fx.workspace().join("made").exists());
    let store = Store::open_existing(&fx.store()).unwrap();
    let e = &store.policy_events(Some(run.id()), true, 10).unwrap()[0];
    assert_eq!(
        (e.decision.as_str(), e.answered_by.as_deref()),
        ("denied", Some("scripted"))
    );
}

#[test]
fn abort_ends_the_run() {
    let fx = Fixture::new();
    let approver = Scripted::new(vec![Approval::Abort(None)]);
    let run = run(&fx, asking("echo*"), &approver);
    assert!(run.exec(&ExecRequest::new(["echo", "x"])).is_err());
    let err = run.exec(&ExecRequest::new(["true"])).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Closed);
}

#[test]
fn a_deny_never_reaches_the_approver() {
    let fx = Fixture::new();
    let approver = Scripted::new(vec![]);
    let policy = asking("echo*")
        .layer("operator")
        .rule(Act::Exec, "rm", Effect::Deny);
    let run = run(&fx, policy, &approver);
    assert!(run.shell(&ShellRequest::new("echo a; rm -f x")).is_err());
    assert!(approver.asked().is_empty());
}

#[test]
fn the_library_default_asks_and_nobody_answers() {
    let fx = Fixture::new();
    let run = Run::builder(fx.workspace())
        .store(fx.store())
        .open()
        .unwrap();
    let err = run.exec(&ExecRequest::new(["true"])).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Refused);
    assert!(
        err.to_string().contains("no one is there to approve it"),
        "{err}"
    );
}

#[test]
fn unless_trusted_lets_known_safe_commands_through() {
    let fx = Fixture::new();
    std::fs::write(fx.workspace().join("f"), "x\n").unwrap();
    let approver = Scripted::new(vec![Approval::Deny(None)]);
    let run = Run::builder(fx.workspace())
        .store(fx.store())
        .policy(Policy::default())
        .approval(ApprovalMode::UnlessTrusted)
        .approver(approver.clone())
        .open()
        .unwrap();
    assert!(
        run.shell(&ShellRequest::new("ls && cat f | wc -l"))
            .unwrap()
            .status
            .success()
    );
    assert!(approver.asked().is_empty());
    assert!(run.exec(&ExecRequest::new(["touch", "g"])).is_err());
    assert_eq!(approver.asked(), ["Allow `touch g` in the workspace root?"]);
}

#[test]
fn approval_mode_never_refuses_without_asking() {
    let fx = Fixture::new();
    let approver = Scripted::new(vec![]);
    let run = Run::builder(fx.workspace())
        .store(fx.store())
        .policy(asking("echo*"))
        .approval(ApprovalMode::Never)
        .approver(approver.clone())
        .open()
        .unwrap();
    let err = run.exec(&ExecRequest::new(["echo"])).unwrap_err();
    assert!(
        err.to_string().contains("approval mode is `never`"),
        "{err}"
    );
    assert!(approver.asked().is_empty());
}

/// A destructive command the person declined comes back with advice that does not invite
/// a way around it: not again, not by another command to the same effect; tell the person,
/// or ask them.
#[test]
fn a_declined_destructive_command_is_not_to_be_worked_around() {
    let fx = Fixture::new();
    let ws = fx.workspace();
    std::fs::write(ws.join("kept.txt"), "work\n").unwrap();
    let posture = corral::Posture::new(
        corral::Surface::Mcp,
        &ws,
        corral::Config::default(),
        &corral::Overrides {
            sandbox: Some(corral::sandbox::SandboxMode::Full),
            approval: Some(ApprovalMode::OnRequest),
            ..corral::Overrides::default()
        },
    )
    .unwrap();
    let approver = Scripted::new(vec![Approval::Deny(None)]);
    let run = run(&fx, posture.policy, &approver);
    let line = format!("rm -rf {}", ws.display());
    let err = run.shell(&ShellRequest::new(&line)).unwrap_err();
    assert_eq!(approver.asked().len(), 1, "{err}");
    assert_eq!(err.kind(), ErrorKind::Refused);
    assert!(ws.join("kept.txt").exists());
    let hint = &err.denial().unwrap().hint;
    for said in [&err.to_string(), hint] {
        assert!(
            said.contains("Do not run it again, nor another command to the same effect")
                && said.contains("tell the person what it was for, or ask them"),
            "{said}"
        );
        assert!(!said.contains("another way"), "{said}");
    }
}
