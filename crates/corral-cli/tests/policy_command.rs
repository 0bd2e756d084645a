//! `corral policy check` answers without running anything (exit 0 allow, 1 ask, 2 deny);
//! `exec`/`shell` refuse what the policy denies (exit 2, the decision on stderr), and
//! `corral trace refused` lists it.

mod common;

use common::{Scratch, text};

#[test]
fn check_exits_by_effect_and_names_the_rule() {
    let s = Scratch::new();
    let allow = s.output(&["policy", "check", "--", "ls", "-l"]);
    assert_eq!(allow.status.code(), Some(0));
    let ask = s.output(&[
        "policy",
        "check",
        "--ask",
        "cargo publish*",
        "--",
        "cargo",
        "publish",
        "--dry-run",
    ]);
    assert_eq!(ask.status.code(), Some(1));
    assert!(
        text(&ask.stdout).contains(r#"rule "cargo publish*" in layer flags, flag --ask"#),
        "{}",
        text(&ask.stdout)
    );
    let deny = s.output(&[
        "policy",
        "check",
        "--deny",
        "rm",
        "--line",
        "ls && bash -c 'xargs rm < list'",
    ]);
    assert_eq!(deny.status.code(), Some(2));
    assert!(
        text(&deny.stdout).contains("via bash -c > xargs"),
        "{}",
        text(&deny.stdout)
    );
}

#[test]
fn a_denied_command_runs_nothing_and_is_listed_as_refused() {
    let s = Scratch::new();
    let out = s.output(&["shell", "--deny", "rm", "touch made; timeout 5 rm -f made"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains(r#"rule "rm" in layer flags, flag --deny"#),
        "{}",
        text(&out.stderr)
    );
    assert!(!s.workspace().join("made").exists());
    let refused = text(&s.output(&["trace", "refused"]).stdout);
    assert!(refused.contains("timeout 5 rm -f made"), "{refused}");
}

#[test]
fn the_project_file_applies_and_show_lists_it() {
    let s = Scratch::new();
    std::fs::write(
        s.workspace().join("corral.toml"),
        "[exec]\ndeny = [\"git push*\"]\n",
    )
    .unwrap();
    let out = s.output(&["exec", "--", "git", "push", "origin", "main"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("corral.toml:2"),
        "{}",
        text(&out.stderr)
    );
    let shown = text(&s.output(&["policy", "show"]).stdout);
    assert!(
        shown.contains("project: ") && shown.contains("git push*"),
        "{shown}"
    );
}

#[test]
fn conflicting_or_unknown_options_are_refused() {
    let s = Scratch::new();
    let out = s.output(&["exec", "--yes", "--approval", "never", "--", "true"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("conflict"),
        "{}",
        text(&out.stderr)
    );
    let out = s.output(&["exec", "--approval", "sometimes", "--", "true"]);
    assert_eq!(out.status.code(), Some(2));
    let out = s.output(&["exec", "--deny", "", "--", "true"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("empty"), "{}", text(&out.stderr));
}

#[test]
fn yes_approves_what_a_rule_asks_about_without_a_terminal() {
    let s = Scratch::new();
    // A new session has no controlling terminal, so the terminal approver has nobody to
    // ask even when the tests run in one.
    let asked = std::process::Command::new("setsid")
        .args([
            "-w",
            env!("CARGO_BIN_EXE_corral"),
            "exec",
            "--ask",
            "true",
            "--",
            "true",
        ])
        .current_dir(s.workspace())
        .env("CORRAL_STORE", s.store())
        .output()
        .unwrap();
    assert_eq!(
        asked.status.code(),
        Some(2),
        "with nobody to ask, an ask is refused"
    );
    assert!(
        text(&asked.stderr).contains("no terminal to ask on"),
        "{}",
        text(&asked.stderr)
    );
    let yes = s.output(&["exec", "--ask", "true", "--yes", "--", "true"]);
    assert_eq!(yes.status.code(), Some(0), "{}", text(&yes.stderr));
}
