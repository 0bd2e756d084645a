//! A workspace corral.toml loosens nothing until a person trusts its exact content.

use crate::common;

use common::{Scratch, text};

fn corral(s: &Scratch, args: &[&str]) -> std::process::Output {
    s.corral(args)
        .env("CORRAL_POLICY", s.dir.path().join("operator.toml"))
        .env("CORRAL_TRUST_STORE", s.dir.path().join("state/trusted"))
        .output()
        .unwrap()
}

#[test]
fn an_untrusted_file_tightens_but_does_not_loosen_until_trusted() {
    let s = Scratch::new();
    std::fs::write(s.dir.path().join("operator.toml"), "tier = \"strict\"\n").unwrap();
    let project = s.workspace().join("corral.toml");
    std::fs::write(&project, "[exec]\nallow = [\"touch*\"]\ndeny = [\"rm\"]\n").unwrap();

    // New: its deny applies at once, its allow does not.
    let out = corral(&s, &["policy", "check", "--", "touch", "x"]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "{stdout}");
    assert!(stdout.contains("is not trusted"), "{stdout}");
    assert!(stdout.contains("ignoring its 1 allow rule"), "{stdout}");
    let out = corral(&s, &["policy", "check", "--", "rm", "x"]);
    assert!(
        text(&out.stdout).contains("corral.toml:3"),
        "{}",
        text(&out.stdout)
    );
    let shown = text(&corral(&s, &["policy", "show"]).stdout);
    assert!(
        shown.contains("note: ") && shown.contains("corral policy trust"),
        "{shown}"
    );
    assert!(shown.contains("# what this policy relies on"), "{shown}");
    // Running something says so too.
    let out = corral(&s, &["exec", "--", "true"]);
    assert!(
        text(&out.stderr).contains("is not trusted"),
        "{}",
        text(&out.stderr)
    );

    // Trusted: the allow applies.
    let out = corral(&s, &["policy", "trust"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("sha256"),
        "{}",
        text(&out.stdout)
    );
    let out = corral(&s, &["policy", "check", "--", "touch", "x"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    assert!(!text(&out.stdout).contains("not trusted"));

    // Changed by anyone: untrusted again.
    std::fs::write(&project, "[exec]\nallow = [\"*\"]\n").unwrap();
    let out = corral(&s, &["policy", "check", "--", "touch", "x"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stdout));
    assert!(text(&out.stdout).contains("is not trusted"));
}

#[test]
fn trusting_a_file_that_does_not_parse_is_refused() {
    let s = Scratch::new();
    std::fs::write(s.dir.path().join("operator.toml"), "").unwrap();
    std::fs::write(s.workspace().join("corral.toml"), "[exec\n").unwrap();
    let out = corral(&s, &["policy", "trust"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("does not parse"),
        "{}",
        text(&out.stderr)
    );
    let out = corral(&s, &["policy", "trust", "--workspace", "/nonexistent-dir"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
}

/// A command in the box may write the workspace's corral.toml: one nobody trusted that
/// does not parse, or is huge, is left out with a notice, and the run goes on; a broken
/// operator file still stops it.
#[test]
fn an_untrusted_file_that_cannot_be_read_is_left_out_not_fatal() {
    let s = Scratch::new();
    std::fs::write(
        s.dir.path().join("operator.toml"),
        "[exec]\ndeny = [\"rm\"]\n",
    )
    .unwrap();
    let project = s.workspace().join("corral.toml");
    for (content, why) in [
        ("[exec\nallow = [".to_string(), "unclosed table"),
        (format!("# {}\n", "x".repeat(2 << 20)), "over the 1048576"),
    ] {
        std::fs::write(&project, &content).unwrap();
        let out = corral(&s, &["exec", "--", "echo", "still runs"]);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{err}");
        assert_eq!(text(&out.stdout), "still runs\n", "{err}");
        let out = corral(&s, &["policy", "show"]);
        let shown = text(&out.stdout);
        assert!(out.status.success(), "{}", text(&out.stderr));
        assert!(shown.contains("was left out"), "{shown}");
        assert!(shown.contains(why), "{shown}");
        // The operator's deny still holds.
        let out = corral(&s, &["exec", "--", "rm", "-f", "nothing"]);
        assert_eq!(out.status.code(), Some(123), "{}", text(&out.stderr));
    }
    std::fs::write(s.dir.path().join("operator.toml"), "[exec\n").unwrap();
    let out = corral(&s, &["exec", "--", "true"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
}

/// A command cannot empty the policy that binds it: a redirect to the operator's file or
/// the trust store is refused, whoever drives the command line, and the files stay.
#[test]
fn a_command_cannot_write_the_policy_files_that_bind_it() {
    let s = Scratch::new();
    let operator = s.dir.path().join("operator.toml");
    std::fs::write(&operator, "[exec]\ndeny = [\"rm\"]\n").unwrap();
    std::fs::create_dir_all(s.dir.path().join("state")).unwrap();
    let trusted = s.dir.path().join("state/trusted");
    std::fs::write(&trusted, "").unwrap();
    for target in [&operator, &trusted] {
        let line = format!(
            "printf '[exec]\\nallow = [\"*\"]\\n' > {}",
            target.display()
        );
        let out = corral(&s, &["shell", "--caller", "model", &line]);
        assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
        assert!(
            text(&out.stderr).contains("corral's own state or policy"),
            "{}",
            text(&out.stderr)
        );
    }
    assert_eq!(
        std::fs::read_to_string(&operator).unwrap(),
        "[exec]\ndeny = [\"rm\"]\n"
    );
    assert_eq!(std::fs::read_to_string(&trusted).unwrap(), "");
}
