//! Small truths of the command line: every flag's help line says what it does, a policy
//! file is `--config FILE` everywhere (`--policy` too), `corral sandbox report` reports the
//! protected paths of the workspace it is given, and `policy check` never prints an empty
//! `via :`.

use crate::common;

use common::{Scratch, text};

const COMMANDS: &[&[&str]] = &[
    &["exec"],
    &["shell"],
    &["trace", "runs"],
    &["trace", "steps"],
    &["trace", "refused"],
    &["trace", "handles"],
    &["trace", "output"],
    &["trace", "prune"],
    &["policy", "check"],
    &["policy", "show"],
    &["sandbox", "report"],
    &["mcp"],
];

#[test]
fn every_flag_has_a_help_line() {
    let s = Scratch::new();
    for command in COMMANDS {
        let mut args = command.to_vec();
        args.push("--help");
        let help = text(&s.output(&args).stdout);
        for line in help.lines().filter(|l| l.trim_start().starts_with('-')) {
            // `  --flag <VALUE>  What it does`: a flag alone on its line says nothing.
            let described = line.trim().split("  ").filter(|p| !p.is_empty()).count() > 1;
            assert!(described, "{command:?}: {line:?}");
        }
        // The store's variable is named, never shown as if it had to be set.
        assert!(!help.contains("[env: CORRAL_STORE"), "{command:?}: {help}");
    }
}

#[test]
fn a_policy_file_is_config_everywhere_and_policy_too() {
    let s = Scratch::new();
    std::fs::write(
        s.workspace().join("deny.toml"),
        "[exec]\ndeny = [\"touch\"]\n",
    )
    .unwrap();
    for flag in ["--config", "--policy"] {
        let out = s.output(&["exec", flag, "deny.toml", "--", "touch", "x"]);
        assert_eq!(
            out.status.code(),
            Some(123),
            "{flag}: {}",
            text(&out.stderr)
        );
        let out = s.output(&["policy", "check", flag, "deny.toml", "--", "touch", "x"]);
        assert_eq!(out.status.code(), Some(2), "{flag}: {}", text(&out.stderr));
    }
}

#[test]
fn policy_check_never_prints_an_empty_via() {
    let s = Scratch::new();
    for argv in [
        &["rm", "-rf", "x"][..],
        &["env", "rm", "x"],
        &["bash", "-c", "ls | xargs rm"],
        &["timeout", "5", "sudo", "rm", "x"],
    ] {
        let mut args = vec!["policy", "check", "--deny", "rm", "--"];
        args.extend_from_slice(argv);
        let said = text(&s.output(&args).stdout);
        assert!(!said.contains("via :"), "{argv:?}: {said}");
    }
}

#[test]
fn the_sandbox_report_is_about_the_workspace_it_is_given() {
    let s = Scratch::new();
    let bare = s.workspace();
    let full = s.dir.path().join("full");
    std::fs::create_dir_all(full.join(".git/hooks")).unwrap();
    std::fs::write(full.join(".git/config"), "").unwrap();
    std::fs::write(full.join("corral.toml"), "").unwrap();
    std::fs::create_dir(full.join(".corral")).unwrap();
    let report = |ws: &std::path::Path| {
        let out = s.output(&["sandbox", "report", "--workspace", ws.to_str().unwrap()]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        text(&out.stdout)
    };
    let (bare_report, full_report) = (report(&bare), report(&full));
    assert!(
        bare_report.contains(bare.to_str().unwrap()),
        "{bare_report}"
    );
    let protected = |r: &str| {
        r.lines()
            .find(|l| l.contains("protected paths"))
            .unwrap_or_default()
            .to_string()
    };
    if protected(&bare_report).contains("no mount namespace") {
        eprintln!("skipped: protected paths need a mount namespace (root)");
        return;
    }
    assert!(protected(&bare_report).contains("absent"), "{bare_report}");
    assert!(
        protected(&bare_report).contains("corral.toml"),
        "{bare_report}"
    );
    assert!(!protected(&full_report).contains("absent"), "{full_report}");
    // The whole `.git`, `corral.toml` and `.corral`.
    assert!(
        protected(&full_report).contains("3 bind-mounted"),
        "{full_report}"
    );
}

/// An empty listing says so, rather than printing nothing.
#[test]
fn empty_listings_say_they_are_empty() {
    let s = Scratch::new();
    let ran = s.output(&["exec", "--", "true"]);
    assert_eq!(ran.status.code(), Some(0), "{}", text(&ran.stderr));
    let refused = text(&s.output(&["trace", "refused"]).stdout);
    assert_eq!(refused.trim(), "nothing refused or declined");
    let handles = text(&s.output(&["trace", "handles"]).stdout);
    assert!(handles.starts_with("no handles in run "), "{handles}");
}
