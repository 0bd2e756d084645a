//! Small truths of the command line: every flag's help line says what it does, help is
//! wrapped to the terminal, a policy file is `--config FILE` everywhere (`--policy` too),
//! `corral sandbox report` reports the protected paths of the workspace it is given, and
//! `policy check` never prints an empty `via :`.

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
        for flag in ["-h", "--help"] {
            let mut args = command.to_vec();
            args.push(flag);
            let help = text(&s.output(&args).stdout);
            let lines: Vec<&str> = help.lines().collect();
            for (i, line) in lines.iter().enumerate() {
                if !line.trim_start().starts_with('-') {
                    continue;
                }
                // `  --flag <VALUE>  What it does`, or what it does on the next line,
                // further in: a flag with neither says nothing.
                let beside = line.trim().split("  ").filter(|p| !p.is_empty()).count() > 1;
                let indent = |l: &str| l.len() - l.trim_start().len();
                let below = lines.get(i + 1).is_some_and(|next| {
                    !next.trim().is_empty()
                        && !next.trim_start().starts_with('-')
                        && indent(next) > indent(line)
                });
                assert!(beside || below, "{command:?} {flag}: {line:?}");
            }
            // The store's variable is named, never shown as if it had to be set.
            assert!(!help.contains("[env: CORRAL_STORE"), "{command:?}: {help}");
        }
    }
}

/// `corral mcp --help` (and `-h`) as text of `width` columns, with no terminal.
fn mcp_help(s: &Scratch, flag: &str, width: Option<usize>) -> String {
    let mut corral = s.corral(&["mcp", flag]);
    corral.env_remove("COLUMNS");
    if let Some(width) = width {
        corral.env("COLUMNS", width.to_string());
    }
    let out = corral.output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    text(&out.stdout)
}

/// Help is wrapped to the terminal's width (100 columns with none), even a terminal
/// narrower than 40 columns: only a word longer than the line, or a flag with its
/// value's name, is left longer. Nothing is lost in the wrapping, and `-h` is the short
/// form of `--help`.
#[test]
fn help_is_wrapped_to_the_terminal() {
    let s = Scratch::new();
    let words = |t: &str| t.split_whitespace().map(str::to_string).collect::<Vec<_>>();
    for flag in ["-h", "--help"] {
        let unwrapped = mcp_help(&s, flag, Some(10_000));
        for width in [None, Some(80), Some(40), Some(30)] {
            let help = mcp_help(&s, flag, width);
            let columns = width.unwrap_or(100);
            for line in help.lines() {
                let unbreakable =
                    line.split_whitespace().count() == 1 || line.trim_start().starts_with('-');
                assert!(
                    line.chars().count() <= columns || unbreakable,
                    "{flag} at {width:?} columns: {line:?}"
                );
            }
            assert_eq!(words(&help), words(&unwrapped), "{flag} at {width:?}");
        }
    }
    let (short, long) = (mcp_help(&s, "-h", None), mcp_help(&s, "--help", None));
    assert!(
        short.len() * 3 < long.len() * 2,
        "-h is not much shorter than --help:\n{short}"
    );
    // The protocol's paragraphs come with --help only.
    assert!(
        long.contains("Connect a client: claude mcp add corral"),
        "{long}"
    );
    assert!(!short.contains("Connect a client"), "{short}");
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
    // `.git` (what of it runs programs), `corral.toml` and `.corral`.
    assert!(
        protected(&full_report).contains("bind-mounted read-only"),
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
