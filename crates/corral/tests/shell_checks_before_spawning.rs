//! Everything in a line is checked before anything starts: a line whose later stage is
//! refused runs no stage, writes no file, starts no process.

mod common;

use common::Fixture;
use corral::{ErrorKind, ShellRequest};

fn refused(line: &str) -> (corral::Error, Fixture) {
    let fx = Fixture::new();
    let run = fx.run();
    let err = run.shell(&ShellRequest::new(line)).unwrap_err();
    (err, fx)
}

#[test]
fn a_refused_later_stage_runs_no_earlier_stage() {
    for line in [
        "touch made && ls $(pwd)",
        "touch made; echo hi > out.txt; cat $HOME",
        "touch made | wc -l && echo a &",
        "touch made\nif true; then ls; fi",
    ] {
        let (err, fx) = refused(line);
        assert_eq!(err.kind(), ErrorKind::Refused, "{line}: {err}");
        assert!(err.line_refusal().is_some());
        assert!(
            !fx.workspace().join("made").exists(),
            "{line}: an earlier stage ran"
        );
        assert!(
            !fx.workspace().join("out.txt").exists(),
            "{line}: a redirect was opened"
        );
    }
}

#[test]
fn a_later_stage_that_cannot_be_planned_runs_nothing() {
    let line = "touch made; ls > /proc/self/environ";
    let (err, fx) = refused(line);
    assert_eq!(err.kind(), ErrorKind::InvalidRequest, "{line}: {err}");
    assert!(
        !fx.workspace().join("made").exists(),
        "{line}: an earlier stage ran"
    );
}

/// `cd` into a directory that is not there fails when it runs, as in bash: what came
/// before it ran, what `&&` joins to it does not.
#[test]
fn a_cd_that_fails_ends_its_and_list_as_bash_does() {
    let fx = Fixture::new();
    let run = fx.run();
    let outcome = run
        .shell(&ShellRequest::new(
            "touch made; cd no-such-dir && touch after",
        ))
        .unwrap();
    assert_eq!(outcome.status, corral::Status::Exited { code: 1 });
    assert!(fx.workspace().join("made").exists());
    assert!(!fx.workspace().join("after").exists());
    assert!(
        outcome
            .observation
            .contains("cd: no-such-dir: No such file or directory"),
        "{}",
        outcome.observation
    );
}

#[test]
fn a_refused_line_keeps_its_step_row() {
    let fx = Fixture::new();
    let run = fx.run();
    run.shell(&ShellRequest::new("ls $(pwd)")).unwrap_err();
    let store = corral::trace::Store::open_existing(&fx.store()).unwrap();
    let row = &store.steps(Some(run.id()), 1).unwrap()[0];
    assert_eq!(row.tool, "shell");
    assert_eq!(row.outcome.as_deref(), Some("refused"));
    assert!(row.call_json.contains("ls $(pwd)"));
    assert!(
        row.error
            .as_deref()
            .unwrap()
            .contains("command substitution"),
        "{:?}",
        row.error
    );
}

#[test]
fn the_plan_is_the_argv_that_runs() {
    let fx = Fixture::new();
    std::fs::create_dir(fx.workspace().join("web")).unwrap();
    let run = fx.run();
    let request = ShellRequest::new("cd web && printf '%s\\n' 'a b' \"c\\\"d\" e\\ f | sort -r");
    let plan = run.plan_shell(&request).unwrap();
    let planned: Vec<Vec<String>> = plan.stages().map(|s| s.argv.clone()).collect();
    assert_eq!(
        planned,
        [
            vec!["printf", "%s\\n", "a b", "c\"d", "e f"],
            vec!["sort", "-r"]
        ]
    );
    assert!(plan.stages().all(|s| s.cwd.ends_with("ws/web")));
    let outcome = run.shell(&request).unwrap();
    let ran: Vec<Vec<String>> = outcome.stages.iter().map(|s| s.argv.clone()).collect();
    assert_eq!(ran, planned);
    assert_eq!(outcome.stdout.window.head, "e f\nc\"d\na b\n");
}
