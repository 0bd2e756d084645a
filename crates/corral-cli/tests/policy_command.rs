//! `corral policy check` answers without running anything (exit 0 allow, 1 ask, 2 deny);
//! `exec`/`shell` refuse what the policy denies (exit 2, the decision on stderr), and
//! `corral trace refused` lists it.

use crate::common;

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
    assert_eq!(out.status.code(), Some(123));
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
    assert_eq!(out.status.code(), Some(123));
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
        .env("XDG_CACHE_HOME", s.dir.path().join("cache"))
        .output()
        .unwrap();
    assert_eq!(
        asked.status.code(),
        Some(123),
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

#[test]
fn check_honours_the_approval_mode_in_its_exit_status_and_text() {
    let s = Scratch::new();
    let never = s.output(&[
        "policy",
        "check",
        "--approval",
        "never",
        "--ask",
        "cargo",
        "--",
        "cargo",
        "build",
    ]);
    assert_eq!(never.status.code(), Some(2), "{}", text(&never.stdout));
    assert!(
        text(&never.stdout).contains("-> refused (cli, approval never)"),
        "{}",
        text(&never.stdout)
    );
    // unless-trusted asks about what only a default allowed, unless it is known safe.
    let unknown = s.output(&[
        "policy",
        "check",
        "--approval",
        "unless-trusted",
        "--",
        "make",
    ]);
    assert_eq!(unknown.status.code(), Some(1), "{}", text(&unknown.stdout));
    assert!(text(&unknown.stdout).contains("-> asks the approver"));
    let safe = s.output(&[
        "policy",
        "check",
        "--approval",
        "unless-trusted",
        "--",
        "ls",
    ]);
    assert_eq!(safe.status.code(), Some(0), "{}", text(&safe.stdout));
}

#[test]
fn each_surface_shows_the_posture_it_runs_with() {
    let s = Scratch::new();
    let cli = text(&s.output(&["policy", "show"]).stdout);
    assert!(cli.contains("# surface: cli"), "{cli}");
    assert!(cli.contains("# approval mode: on-request"), "{cli}");
    assert!(cli.contains("# sandbox full"), "{cli}");
    let library = text(&s.output(&["policy", "show", "--surface", "library"]).stdout);
    assert!(library.contains("tier: default"), "{library}");
    let mcp = text(&s.output(&["policy", "show", "--surface", "mcp"]).stdout);
    assert!(
        mcp.contains("# sandbox workspace-write, network off"),
        "{mcp}"
    );
    assert!(mcp.contains("layer built-in: destroys work"), "{mcp}");
    let report = text(&s.output(&["sandbox", "report", "--json"]).stdout);
    let whole = mcp.contains("Every confinement layer is enforced on this host");
    if whole {
        assert!(mcp.contains("# approval mode: on-failure"), "{mcp}");
        assert!(mcp.contains("tier: permissive"), "{mcp}");
    } else {
        assert!(
            mcp.contains("# approval mode: unless-trusted"),
            "{mcp}\n{report}"
        );
        assert!(
            mcp.contains("ot every confinement layer is enforced"),
            "{mcp}"
        );
    }
    // The MCP server's own flags change it the same way.
    let off = text(
        &s.output(&["policy", "show", "--surface", "mcp", "--sandbox", "full"])
            .stdout,
    );
    assert!(off.contains("# approval mode: unless-trusted"), "{off}");
    assert!(off.contains("the sandbox is off"), "{off}");

    // And check agrees: what undo cannot put back asks, through a wrapper too (the
    // remote's history; ignored files, which the undo record leaves out).
    for argv in [
        &["git", "push", "--force"][..],
        &["env", "git", "push", "--force"],
        &["bash", "-c", "git clean -fdx"],
    ] {
        let mut args = vec!["policy", "check", "--surface", "mcp", "--"];
        args.extend_from_slice(argv);
        let out = s.output(&args);
        assert_eq!(
            out.status.code(),
            Some(1),
            "{argv:?}: {}",
            text(&out.stdout)
        );
        // By the layer's rule, or by effect (`git clean -x`: ignored files, which the
        // undo record leaves out).
        assert!(
            text(&out.stdout).contains("built-in"),
            "{}",
            text(&out.stdout)
        );
    }
    let edit = s.output(&[
        "policy",
        "check",
        "--surface",
        "mcp",
        "--",
        "python3",
        "-c",
        "1",
    ]);
    assert_eq!(
        edit.status.code(),
        Some(if whole { 0 } else { 1 }),
        "{}",
        text(&edit.stdout)
    );
}

/// What a person types is theirs: their one-liner and their `NAME=value` run without a
/// question, also with no terminal. An agent driving the command line says so and gets
/// exactly what `corral mcp` gives the line (a one-liner runs where the box is the
/// boundary, else is asked); with no one to ask, a refusal exits 123.
#[test]
fn a_persons_own_one_liner_runs_and_a_models_is_asked_about() {
    let s = Scratch::new();
    for args in [
        &["exec", "--", "python3", "-c", "print(1)"][..],
        &[
            "exec",
            "--env",
            "PYTHONPATH=.",
            "--",
            "python3",
            "-c",
            "print(1)",
        ],
        &["shell", "PYTHONPATH=. python3 -c 'print(1)'"],
    ] {
        let out = s.output(args);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?}: {}",
            text(&out.stderr)
        );
        assert_eq!(text(&out.stdout), "1\n", "{args:?}");
    }
    // What `corral mcp` would do with the one-liner: 0 runs, 1 asks.
    let mcp = s.output(&[
        "policy",
        "check",
        "--surface",
        "mcp",
        "--",
        "python3",
        "-c",
        "print(1)",
    ]);
    let runs = mcp.status.code() == Some(0);
    let model = s.output(&[
        "exec", "--caller", "model", "--", "python3", "-c", "print(1)",
    ]);
    if runs {
        assert_eq!(model.status.code(), Some(0), "{}", text(&model.stderr));
        assert_eq!(text(&model.stdout), "1\n");
    } else {
        assert_eq!(model.status.code(), Some(123), "{}", text(&model.stderr));
        assert!(
            text(&model.stderr).contains("not approved"),
            "{}",
            text(&model.stderr)
        );
        assert_eq!(text(&model.stdout), "");
    }
    // `PYTHONPATH=.` runs code of the workspace's: asked wherever a model sends it.
    let env = s
        .corral(&["shell", "PYTHONPATH=. python3 -c 'print(1)'"])
        .env("CORRAL_CALLER", "model")
        .output()
        .unwrap();
    assert_eq!(env.status.code(), Some(123), "{}", text(&env.stderr));
}
