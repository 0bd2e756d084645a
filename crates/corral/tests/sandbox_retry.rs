//! A write the sandbox denied, in the `on-failure` approval mode: the approver is offered a
//! rerun in the sandbox with exactly that path added, never a run without the sandbox, and
//! the answer is recorded. Without approval the result says what a person would allow.

use crate::common;

use std::path::{Path, PathBuf};

use common::Fixture;
use corral::{
    ApprovalMode, Config, ExecRequest, Run, ShellRequest, approve::Approval,
    approve::ApprovalRequest, approve::ApproveAll, approve::Approver, approve::DenyAll,
    sandbox::SandboxConfig, sandbox::SandboxMode,
};

/// Approves for the rest of the run.
#[derive(Debug)]
struct ForTheRun;

impl Approver for ForTheRun {
    fn name(&self) -> &str {
        "for-the-run"
    }
    fn approve(&self, _: &ApprovalRequest, _: &Path) -> Approval {
        Approval::ApproveForRun
    }
}

fn run(fx: &Fixture, mode: SandboxMode, approver: impl Approver + 'static) -> Run {
    Run::builder(fx.workspace())
        .store(fx.store())
        .config(Config {
            sandbox: SandboxConfig::mode(mode),
            ..Config::default()
        })
        .policy(corral::Policy::permissive())
        .approval(ApprovalMode::OnFailure)
        .approver(approver)
        .open()
        .unwrap()
}

fn outside(fx: &Fixture) -> PathBuf {
    let dir = fx.dir.path().join("outside");
    std::fs::create_dir_all(&dir).unwrap();
    dir.canonicalize().unwrap()
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

fn sh(run: &Run, script: &str) -> corral::Outcome {
    run.exec(&ExecRequest::new(["sh", "-c", script])).unwrap()
}

#[test]
fn an_approved_rerun_adds_exactly_the_denied_path() {
    let fx = Fixture::new();
    let out = outside(&fx);
    let run = run(&fx, SandboxMode::WorkspaceWrite, ApproveAll);
    let o = sh(&run, &format!("echo x > {}/written", out.display()));
    assert!(o.status.success(), "{}", o.observation);
    assert!(out.join("written").exists());
    let report = o.sandbox.unwrap();
    assert_eq!(report.rerun_with.as_deref(), Some(out.as_path()));
    assert_eq!(report.mode, SandboxMode::WorkspaceWrite, "still sandboxed");
    assert!(o.observation.contains("rerun with"), "{}", o.observation);
    assert_eq!(decisions(&fx, &run), ["rerun_sandboxed_approved"]);
    // Approved once: the next call is denied (and offered) again.
    let again = sh(&run, &format!("echo y > {}/again", out.display()));
    assert!(again.status.success(), "{}", again.observation);
    assert_eq!(decisions(&fx, &run).len(), 2);
}

/// A call made with `yield_ms` that ends within its wait ends as a foreground call does:
/// the write the box denied is offered as a rerun.
#[test]
fn a_yielded_call_that_ends_in_its_wait_is_offered_the_rerun_too() {
    let fx = Fixture::new();
    let out = outside(&fx);
    let run = run(&fx, SandboxMode::WorkspaceWrite, ApproveAll);
    let script = format!("echo x > {}/written", out.display());
    let mut request = ExecRequest::new(["sh", "-c", &script]);
    request.yield_ms = Some(20_000);
    let o = run.exec(&request).unwrap();
    assert!(o.status.success(), "{}", o.observation);
    assert!(out.join("written").exists());
    let report = o.sandbox.unwrap();
    assert_eq!(report.rerun_with.as_deref(), Some(out.as_path()));
    assert_eq!(decisions(&fx, &run), ["rerun_sandboxed_approved"]);
}

#[test]
fn a_denied_rerun_keeps_the_failure_and_says_what_to_allow() {
    let fx = Fixture::new();
    let out = outside(&fx);
    let run = run(&fx, SandboxMode::WorkspaceWrite, DenyAll);
    let o = sh(&run, &format!("echo x > {}/written", out.display()));
    assert!(!o.status.success());
    assert!(!out.join("written").exists());
    let report = o.sandbox.unwrap();
    assert!(
        report
            .denied_write
            .unwrap()
            .contains("inferred from stderr")
    );
    assert!(
        o.observation
            .contains(&format!("--writable {}", out.display())),
        "{}",
        o.observation
    );
    assert_eq!(decisions(&fx, &run), ["rerun_sandboxed_denied"]);
}

#[test]
fn approved_for_the_run_the_path_stays_writable() {
    let fx = Fixture::new();
    let out = outside(&fx);
    let run = run(&fx, SandboxMode::WorkspaceWrite, ForTheRun);
    assert!(
        sh(&run, &format!("echo x > {}/a", out.display()))
            .status
            .success()
    );
    let second = sh(&run, &format!("echo y > {}/b", out.display()));
    assert!(second.status.success(), "{}", second.observation);
    assert!(
        second.sandbox.unwrap().rerun_with.is_none(),
        "no rerun needed"
    );
    assert_eq!(decisions(&fx, &run), ["rerun_sandboxed_approved_for_run"]);
}

#[test]
fn without_a_named_path_nothing_is_offered_and_nothing_runs_unsandboxed() {
    let fx = Fixture::new();
    let run = run(&fx, SandboxMode::ReadOnly, ApproveAll);
    // A relative path in the error: no evidence of which path to add.
    let o = sh(&run, "echo x > written");
    assert!(!o.status.success());
    assert!(!fx.workspace().join("written").exists());
    assert!(o.sandbox.unwrap().suspected_denial.is_some());
    assert!(decisions(&fx, &run).is_empty());
}

#[test]
fn a_redirect_outside_the_box_is_held_before_anything_starts() {
    let fx = Fixture::new();
    let out = outside(&fx);
    let target = out.join("r");
    let refused = run(&fx, SandboxMode::WorkspaceWrite, DenyAll);
    let err = refused
        .shell(&ShellRequest::new(format!("echo x > {}", target.display())))
        .unwrap_err();
    assert_eq!(err.kind(), corral::ErrorKind::Refused);
    assert!(err.to_string().contains("Nothing ran"), "{err}");
    assert!(!target.exists());
    let approved = run(&fx, SandboxMode::WorkspaceWrite, ApproveAll);
    let o = approved
        .shell(&ShellRequest::new(format!("echo x > {}", target.display())))
        .unwrap();
    assert!(o.status.success(), "{}", o.observation);
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "x\n");
}

/// Ends the run at the first question.
#[derive(Debug)]
struct Aborts;

impl Approver for Aborts {
    fn name(&self) -> &str {
        "aborts"
    }
    fn approve(&self, _: &ApprovalRequest, _: &Path) -> Approval {
        Approval::Abort(Some("stop here".into()))
    }
}

#[test]
fn an_aborted_rerun_question_ends_the_run_as_any_aborted_question_does() {
    let fx = Fixture::new();
    let out = outside(&fx);
    let run = run(&fx, SandboxMode::WorkspaceWrite, Aborts);
    let err = run
        .exec(&ExecRequest::new([
            "sh",
            "-c",
            &format!("echo x > {}/written", out.display()),
        ]))
        .unwrap_err();
    assert_eq!(err.kind(), corral::ErrorKind::Closed, "{err}");
    assert!(err.to_string().contains("stop here"), "{err}");
    assert!(!out.join("written").exists(), "nothing ran unsandboxed");
    assert_eq!(decisions(&fx, &run), ["rerun_sandboxed_aborted"]);
    let next = run.exec(&ExecRequest::new(["true"])).unwrap_err();
    assert_eq!(
        next.kind(),
        corral::ErrorKind::Closed,
        "the run has ended: {next}"
    );
}

/// A denied write in corral's own state directory (its trace, captures and trust) is not
/// offered as a rerun, however willing the approver: approved, the command could rewrite
/// what records it and what decides for it.
#[test]
fn a_write_into_corral_s_own_state_is_never_offered() {
    let fx = Fixture::new();
    let run = run(&fx, SandboxMode::WorkspaceWrite, ApproveAll);
    let state = fx.store().parent().unwrap().canonicalize().unwrap();
    for target in [state.join("planted"), state.join("captures").join("x")] {
        let o = sh(&run, &format!("echo x > {}", target.display()));
        assert!(!o.status.success(), "{}", o.observation);
        assert!(!target.exists(), "{}", o.observation);
        assert!(
            o.observation
                .contains("holds corral's own policy, trust or trace"),
            "{}",
            o.observation
        );
        assert!(o.sandbox.unwrap().rerun_with.is_none(), "no rerun was made");
    }
    assert!(
        decisions(&fx, &run).is_empty(),
        "{:?}",
        decisions(&fx, &run)
    );
}

/// A directory that only lies beside corral's store holds none of corral's files: a write
/// there is offered as any other, and the approved rerun makes it (it was refused as
/// "corral's own" when the store's parent held the workspace's parent).
#[test]
fn a_directory_beside_the_store_is_offered_and_the_rerun_works() {
    // Not under /tmp, which the box has a directory of its own over.
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(dir.path().join("outside")).unwrap();
    std::fs::create_dir(&ws).unwrap();
    let run = Run::builder(&ws)
        .store(dir.path().join("trace.db"))
        .config(Config {
            sandbox: SandboxConfig::mode(SandboxMode::WorkspaceWrite),
            ..Config::default()
        })
        .policy(corral::Policy::permissive())
        .approval(ApprovalMode::OnFailure)
        .approver(ApproveAll)
        .open()
        .unwrap();
    let target = dir.path().canonicalize().unwrap().join("outside/x");
    let o = sh(&run, &format!("mkdir {}", target.display()));
    assert!(o.status.success(), "{}", o.observation);
    assert!(dir.path().join("outside/x").is_dir(), "{}", o.observation);
    assert!(!o.observation.contains("corral's own"), "{}", o.observation);
}

/// A directory on corral's PATH is never offered, whoever would approve: a program the
/// rerun left there would run on the person's machine in place of the one they meant.
#[test]
fn a_directory_on_the_path_is_never_offered() {
    if !rustix::process::geteuid().is_root() {
        eprintln!("skipped: as an ordinary user the PATH's directories are not writable anyway");
        return;
    }
    let Some(bin) =
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()).find(|p| {
            // Not a home's (the box shows homes read-only, and says less) nor /tmp's.
            let home = std::env::var_os("HOME").map(PathBuf::from);
            p.is_absolute()
                && p.is_dir()
                && !p.starts_with("/tmp")
                && !p.starts_with("/root")
                && !p.starts_with("/home")
                && !home.is_some_and(|h| p.starts_with(h))
        })
    else {
        eprintln!("skipped: no absolute directory on PATH");
        return;
    };
    let fx = Fixture::new();
    let run = run(&fx, SandboxMode::WorkspaceWrite, DenyAll);
    let planted = bin.join(format!("corral-never-planted-{}", std::process::id()));
    let o = sh(&run, &format!("echo x > '{}'", planted.display()));
    assert!(!o.status.success(), "{}", o.observation);
    assert!(!planted.exists(), "{}", o.observation);
    assert!(o.observation.contains("on your PATH"), "{}", o.observation);
    assert!(
        o.observation.contains("no rerun is offered"),
        "{}",
        o.observation
    );
    assert!(
        decisions(&fx, &run).is_empty(),
        "{:?}",
        decisions(&fx, &run)
    );
}
