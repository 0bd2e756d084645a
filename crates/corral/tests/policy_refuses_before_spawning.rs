//! A request the policy refuses runs nothing, and the refusal is recorded with the rule,
//! the layer and where the rule came from.

use crate::common;

use common::Fixture;
use corral::policy::{Act, Effect};
use corral::trace::Store;
use corral::{ErrorKind, ExecRequest, Policy, Run, ShellRequest};

fn run_with(fx: &Fixture, policy: Policy) -> Run {
    Run::builder(fx.workspace())
        .store(fx.store())
        .policy(policy)
        .open()
        .unwrap()
}

#[test]
fn a_denied_later_stage_refuses_the_whole_line() {
    let fx = Fixture::new();
    let run = run_with(
        &fx,
        Policy::permissive()
            .layer("operator")
            .rule(Act::Exec, "rm", Effect::Deny),
    );
    let err = run
        .shell(&ShellRequest::new("touch made && env nice rm -rf x"))
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Refused);
    assert!(
        err.to_string().contains(r#"rule "rm" in layer operator"#),
        "{err}"
    );
    assert!(!fx.workspace().join("made").exists(), "the first stage ran");

    let store = Store::open_existing(&fx.store()).unwrap();
    let events = store.policy_events(Some(run.id()), true, 10).unwrap();
    assert_eq!(events.len(), 1);
    let e = &events[0];
    assert_eq!(
        (e.act.as_str(), e.effect.as_str(), e.decision.as_str()),
        ("exec", "deny", "refused")
    );
    assert_eq!(e.rule.as_deref(), Some("rm"));
    assert_eq!(e.layer.as_deref(), Some("operator"));
    assert_eq!(e.origin.as_deref(), Some("library"));
    let step = store.step(e.step_id.unwrap()).unwrap().unwrap();
    assert_eq!(step.outcome.as_deref(), Some("refused"));
}

#[test]
fn a_denied_write_redirect_refuses_the_line() {
    let fx = Fixture::new();
    let run = run_with(
        &fx,
        Policy::permissive()
            .layer("project")
            .rule(Act::Write, "**/.env", Effect::Deny),
    );
    let err = run
        .shell(&ShellRequest::new("echo SECRET=1 > .env"))
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Refused, "{err}");
    assert!(!fx.workspace().join(".env").exists());
}

#[test]
fn a_silent_allow_writes_no_policy_event() {
    let fx = Fixture::new();
    let run = run_with(&fx, Policy::permissive());
    assert!(
        run.exec(&ExecRequest::new(["true"]))
            .unwrap()
            .status
            .success()
    );
    let store = Store::open_existing(&fx.store()).unwrap();
    assert!(
        store
            .policy_events(Some(run.id()), false, 10)
            .unwrap()
            .is_empty()
    );
}

#[test]
fn programs_that_need_a_terminal_are_refused_with_a_pointer() {
    let fx = Fixture::new();
    let run = run_with(&fx, Policy::permissive());
    for argv in [
        vec!["vim", "notes.txt"],
        vec!["less", "log"],
        vec!["sudo", "ls"],
    ] {
        let err = run.exec(&ExecRequest::new(argv.clone())).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Refused, "{argv:?}");
        assert!(
            err.to_string().contains("needs a terminal"),
            "{argv:?}: {err}"
        );
    }
}

/// A REPL given its input (a here-document, a file, a pipe) runs it and ends: it needs no
/// terminal. Bare, it still does; a pager still does whatever its stdin.
#[test]
fn a_repl_given_its_input_is_not_interactive() {
    let fx = Fixture::new();
    std::fs::write(fx.workspace().join("script.py"), "print(6 * 7)\n").unwrap();
    let run = Run::builder(fx.workspace())
        .store(fx.store())
        .policy(Policy::permissive())
        .approver(corral::approve::ApproveAll)
        .open()
        .unwrap();
    for line in [
        "python3 <<'EOF'\nprint(6 * 7)\nEOF",
        "python3 < script.py",
        "cat script.py | python3",
    ] {
        let outcome = run
            .shell(&ShellRequest::new(line))
            .unwrap_or_else(|e| panic!("{line:?}: {e}"));
        assert!(
            outcome.status.success(),
            "{line:?}: {}",
            outcome.observation
        );
        assert_eq!(outcome.stdout.window.head, "42\n", "{line:?}");
    }
    for line in ["python3", "less < script.py"] {
        let err = run.shell(&ShellRequest::new(line)).unwrap_err();
        assert!(
            err.to_string().contains("needs a terminal"),
            "{line:?}: {err}"
        );
    }
}

/// A line the grammar refuses (and an empty one) is a refusal in the trace like the
/// policy's: a `policy_events` row of its step, by `grammar`, with the line.
#[test]
fn a_grammar_refusal_is_recorded_as_a_refusal() {
    let fx = Fixture::new();
    let run = run_with(&fx, Policy::permissive());
    for line in ["ls $(pwd)", ""] {
        let err = run.shell(&ShellRequest::new(line)).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Refused, "{err}");
    }
    let store = Store::open_existing(&fx.store()).unwrap();
    let mut events = store.policy_events(Some(run.id()), true, 10).unwrap();
    events.sort_by_key(|e| e.step_id);
    let seen: Vec<(&str, Option<&str>, Option<&str>)> = events
        .iter()
        .map(|e| {
            (
                e.target.as_str(),
                e.layer.as_deref(),
                e.answered_by.as_deref(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            ("ls $(pwd)", Some("grammar"), Some("grammar")),
            ("", Some("grammar"), Some("grammar"))
        ]
    );
    for e in &events {
        assert_eq!(e.decision, "refused");
        let step = store.step(e.step_id.unwrap()).unwrap().unwrap();
        assert_eq!(step.outcome.as_deref(), Some("refused"));
    }
}
