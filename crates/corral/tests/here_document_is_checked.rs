//! A here-document fed to a shell or an interpreter is the program it runs, and is
//! checked as one: a deny rule holds inside `bash <<'EOF'`, `cat <<'EOF' | sh` and
//! `sh -s`, and a body fed to `python3 -` is an interpreter one-liner.

use crate::common;

use common::Fixture;
use corral::{ErrorKind, Policy, Run, ShellRequest, approve::DenyAll};

fn run(fx: &Fixture) -> Run {
    Run::builder(fx.workspace())
        .store(fx.store())
        .policy(Policy::permissive().layer("test").deny_exec("rm"))
        .approver(DenyAll)
        .open()
        .unwrap()
}

#[test]
fn a_deny_rule_holds_inside_a_body_a_shell_runs() {
    let fx = Fixture::new();
    let victim = fx.workspace().join("victim");
    let run = run(&fx);
    for line in [
        "bash <<'EOF'\nrm -f victim\nEOF",
        "sh -s <<'EOF'\necho hi && rm -f victim\nEOF",
        "cat <<'EOF' | sh\nrm -f victim\nEOF",
        "bash <<< 'rm -f victim'",
        "bash <<'EOF'\nfor f in victim; do rm -f $f; done\nEOF",
    ] {
        std::fs::write(&victim, "x").unwrap();
        let err = run
            .shell(&ShellRequest::new(line))
            .expect_err(&format!("{line:?} ran"));
        assert_eq!(err.kind(), ErrorKind::Refused, "{line:?}: {err}");
        assert!(victim.exists(), "{line:?} removed the file");
    }
}

#[test]
fn a_body_an_interpreter_runs_is_a_one_liner() {
    let fx = Fixture::new();
    std::fs::write(fx.workspace().join("victim"), "x").unwrap();
    let run = run(&fx);
    // One-liners are asked about by default, and this approver declines.
    let err = run
        .shell(&ShellRequest::new(
            "python3 - <<'EOF'\nimport os\nos.remove('victim')\nEOF",
        ))
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Refused, "{err}");
    assert!(err.to_string().contains("python3 -"), "{err}");
    assert!(fx.workspace().join("victim").exists());
}

#[test]
fn a_body_that_is_only_data_is_not_a_program() {
    let fx = Fixture::new();
    let run = run(&fx);
    let outcome = run
        .shell(&ShellRequest::new("cat <<'EOF'\nrm -rf /\nEOF"))
        .unwrap();
    assert_eq!(outcome.status.cli_exit_code(), 0, "{}", outcome.observation);
}
