//! The host shell: a line outside the grammar runs through `bash -c` only in a fully
//! enforced sandbox or with a person's approval, and every command a bash parser finds in
//! it is checked first, so a deny rule holds inside a loop, a substitution, `eval`, a
//! function or a nested `bash -c`.

use crate::common;

use common::Fixture;
use corral::{
    Config, ErrorKind, Policy, Run, ShellRequest, approve::ApproveAll, approve::DenyAll,
    config::host_shell::HostShell, sandbox::SandboxConfig, sandbox::SandboxMode,
};

fn run(fx: &Fixture, host_shell: HostShell, policy: Policy, approve: bool) -> Run {
    let config = Config {
        host_shell,
        ..Config::default()
    };
    let builder = Run::builder(fx.workspace())
        .store(fx.store())
        .config(config)
        .policy(policy);
    let builder = if approve {
        builder.approver(ApproveAll)
    } else {
        builder.approver(DenyAll)
    };
    builder.open().unwrap()
}

fn stdout(outcome: &corral::Outcome) -> String {
    match &outcome.stdout.capture {
        Some(path) => String::from_utf8_lossy(&std::fs::read(path).unwrap()).into_owned(),
        None => String::new(),
    }
}

const LOOP: &str = "for i in 1 2; do echo \"n$i\"; done";

#[test]
fn by_default_a_line_outside_the_grammar_is_refused_by_the_grammar() {
    let fx = Fixture::new();
    let run = run(
        &fx,
        Config::default().host_shell,
        Policy::permissive(),
        true,
    );
    let err = run.shell(&ShellRequest::new(LOOP)).unwrap_err();
    assert!(err.line_refusal().is_some(), "{err}");
}

#[test]
fn with_approval_a_loop_runs_under_the_host_shell_and_says_so() {
    let fx = Fixture::new();
    let run = run(&fx, HostShell::Ask, Policy::permissive(), true);
    let outcome = run.shell(&ShellRequest::new(LOOP)).unwrap();
    assert_eq!(stdout(&outcome), "n1\nn2\n");
    assert!(
        outcome
            .observation
            .starts_with("[ran under the host shell (bash -c), sandbox: full"),
        "{}",
        outcome.observation
    );
    assert_eq!(outcome.stages[0].argv, ["bash", "-c", LOOP]);
}

#[test]
fn outside_a_sandbox_a_person_who_declines_stops_it() {
    let fx = Fixture::new();
    let run = run(&fx, HostShell::Ask, Policy::permissive(), false);
    let line = "for i in 1; do touch made; done";
    let err = run.shell(&ShellRequest::new(line)).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Refused, "{err}");
    assert!(!fx.workspace().join("made").exists());
}

#[test]
fn sandboxed_mode_runs_only_in_a_sandbox_this_host_enforces() {
    let fx = Fixture::new();
    let unboxed = run(&fx, HostShell::Sandboxed, Policy::permissive(), true);
    let err = unboxed.shell(&ShellRequest::new(LOOP)).unwrap_err();
    assert!(err.to_string().contains("only in a sandbox"), "{err}");

    let config = Config {
        host_shell: HostShell::Sandboxed,
        sandbox: SandboxConfig::mode(SandboxMode::WorkspaceWrite),
        ..Config::default()
    };
    let boxed = Run::builder(fx.workspace())
        .store(fx.dir.path().join("state2/trace.db"))
        .config(config)
        .policy(Policy::permissive())
        .approver(DenyAll)
        .open()
        .unwrap();
    // Every confinement layer: a resource limit (`pids.max` without a delegated cgroup)
    // confines nothing a command reaches.
    let every_layer = corral::sandbox::enforcement::host_report()
        .unenforced(corral::CONFINEMENT)
        .is_empty();
    match boxed.shell(&ShellRequest::new(LOOP)) {
        Ok(outcome) => {
            assert!(every_layer, "ran though a layer is not enforced");
            assert_eq!(stdout(&outcome), "n1\nn2\n");
            assert!(
                outcome.observation.contains("sandbox: workspace-write"),
                "{}",
                outcome.observation
            );
        }
        Err(err) => {
            assert!(
                !every_layer,
                "refused though every layer is enforced: {err}"
            );
            assert!(err.to_string().contains("only in a sandbox"), "{err}");
        }
    }
}

#[test]
fn a_deny_rule_holds_inside_every_construct_a_bash_parser_sees() {
    let fx = Fixture::new();
    let victim = fx.workspace().join("victim");
    let policy = Policy::permissive().layer("test").deny_exec("rm");
    let run = run(&fx, HostShell::Ask, policy, true);
    for line in [
        "for f in victim; do rm -f \"$f\"; done",
        "echo \"$(rm -f victim)\"",
        "echo `rm -f victim`",
        "eval 'rm -f victim'",
        "f() { rm -f victim; }; f",
        "bash -c 'for i in 1; do rm -f victim; done'",
        "if true; then rm -f victim; fi",
        "ls * && rm -f victim",
        "cat <(rm -f victim)",
        "cmd=rm; $cmd -f victim",
        "$(echo rm) -f victim",
        "command rm -f victim &",
        // A here-document or here-string fed to a shell inside a host line is its program.
        "for i in 1; do bash <<'EOF'\nrm -f victim\nEOF\ndone",
        "for i in 1; do sh <<< 'rm -f victim'; done",
        // A denied program under another name is still the denied program.
        "for i in 1; do ./del -f victim; done",
    ] {
        let del = fx.workspace().join("del");
        if !del.exists() {
            std::os::unix::fs::symlink(which("rm"), &del).unwrap();
        }
        std::fs::write(&victim, "x").unwrap();
        let err = run
            .shell(&ShellRequest::new(line))
            .expect_err(&format!("{line:?} ran"));
        assert_eq!(err.kind(), ErrorKind::Refused, "{line:?}: {err}");
        assert!(victim.exists(), "{line:?} removed the file");
    }
}

fn which(name: &str) -> std::path::PathBuf {
    std::env::var("PATH")
        .unwrap()
        .split(':')
        .map(|dir| std::path::Path::new(dir).join(name))
        .find(|p| p.is_file())
        .unwrap()
}

/// Assignments in a host line are decided as the `[env]` rules say, whether written in
/// front of a command or exported before it: `PATH=./evil ls` inside a loop asks, and with
/// nobody to ask it does not run.
#[test]
fn assignments_in_a_host_line_are_env_decisions() {
    let fx = Fixture::new();
    let run = run(&fx, HostShell::Ask, Policy::permissive(), false);
    // Approved host shell, but not the variables: an approver that says no to both.
    for line in [
        "for i in 1; do PATH=./evil ls; done",
        "export LD_PRELOAD=/tmp/x.so; for i in 1; do ls; done",
        "for i in 1; do BASH_ENV=./evil.sh bash -c true; done",
    ] {
        let err = run
            .shell(&ShellRequest::new(line))
            .expect_err(&format!("{line:?} ran"));
        assert_eq!(err.kind(), ErrorKind::Refused, "{line:?}: {err}");
        assert!(
            err.to_string().contains("PATH")
                || err.to_string().contains("LD_PRELOAD")
                || err.to_string().contains("BASH_ENV"),
            "{line:?}: {err}"
        );
    }
}

#[test]
fn a_background_job_ends_with_the_call() {
    let fx = Fixture::new();
    let run = run(&fx, HostShell::Ask, Policy::permissive(), true);
    let outcome = run
        .shell(
            &ShellRequest::new("sleep 300 & echo started")
                .timeout(std::time::Duration::from_secs(60)),
        )
        .unwrap();
    assert_eq!(stdout(&outcome), "started\n");
    assert_eq!(outcome.status.cli_exit_code(), 0, "{}", outcome.observation);
}
