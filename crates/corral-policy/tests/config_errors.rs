//! Every bad input names its file, line and column.

use corral_policy::config::{ConfigErrorKind, parse};

fn err(text: &str) -> corral_policy::ConfigError {
    parse(text, "/etc/corral/policy.toml", "operator").unwrap_err()
}

#[test]
fn malformed_toml() {
    let e = err("tier = \"default\"\n[exec\nallow = []\n");
    assert_eq!(
        (e.file.as_str(), e.line, e.column),
        ("/etc/corral/policy.toml", 2, 6)
    );
    assert!(matches!(e.kind, ConfigErrorKind::Syntax(_)));
    assert!(
        e.to_string().starts_with("/etc/corral/policy.toml:2:6: "),
        "{e}"
    );
}

#[test]
fn unknown_act() {
    let e = err("[[rule]]\nact = \"run\"\npattern = \"x\"\neffect = \"deny\"\n");
    assert_eq!((e.line, e.column), (2, 7));
    assert_eq!(
        e.to_string(),
        "/etc/corral/policy.toml:2:7: unknown act \"run\"; expected one of: exec, read, write, env"
    );
}

#[test]
fn unknown_effect() {
    let e = err("[[rule]]\nact = \"exec\"\npattern = \"x\"\neffect = \"forbid\"\n");
    assert_eq!((e.line, e.column), (4, 10));
    assert_eq!(
        e.to_string(),
        "/etc/corral/policy.toml:4:10: unknown effect \"forbid\"; expected one of: allow, ask, deny"
    );
    let e = err("[effects]\ninterpreter_one_liner = \"maybe\"\n");
    assert_eq!((e.line, e.column), (2, 25));
}

#[test]
fn unknown_tier_and_approval() {
    let e = err("tier = \"lax\"\n");
    assert_eq!(
        e.to_string(),
        "/etc/corral/policy.toml:1:8: unknown tier \"lax\"; expected one of: permissive, default, strict"
    );
    let e = err("\napproval = \"sometimes\"\n");
    assert_eq!((e.line, e.column), (2, 12));
    assert!(
        e.to_string()
            .contains("never, on-request, unless-trusted, on-failure")
    );
}

#[test]
fn empty_pattern() {
    let e = err("[exec]\ndeny = [\"rm\", \"\"]\n");
    assert_eq!((e.line, e.column), (2, 15));
    assert_eq!(e.kind, ConfigErrorKind::EmptyPattern);
    assert_eq!(e.to_string(), "/etc/corral/policy.toml:2:15: empty pattern");
}

#[test]
fn invalid_glob() {
    let e = err("[write]\n\ndeny = [\"/work/[abc\"]\n");
    assert_eq!((e.line, e.column), (3, 9));
    let ConfigErrorKind::BadGlob { pattern, .. } = &e.kind else {
        panic!("{e:?}");
    };
    assert_eq!(pattern, "/work/[abc");
    assert!(
        e.to_string()
            .starts_with("/etc/corral/policy.toml:3:9: invalid glob \"/work/[abc\": "),
        "{e}"
    );
}

#[test]
fn unknown_keys() {
    let e = err("tier = \"strict\"\ncolour = \"blue\"\n");
    assert_eq!((e.line, e.column), (2, 1));
    assert!(e.to_string().contains("colour"), "{e}");
    let e = err("[exec]\nalow = [\"x\"]\n");
    assert_eq!(e.line, 2);
    assert!(e.to_string().contains("alow"), "{e}");
    let e = err("[[rule]]\nact = \"exec\"\npattern = \"x\"\neffect = \"deny\"\nwhy = \"no\"\n");
    assert_eq!(e.line, 5);
    assert!(e.to_string().contains("why"), "{e}");
}

#[test]
fn missing_and_mistyped_fields() {
    let e = err("[[rule]]\nact = \"exec\"\neffect = \"deny\"\n");
    assert!(e.to_string().contains("pattern"), "{e}");
    let e = err("[exec]\ndeny = \"rm\"\n");
    assert_eq!(e.line, 2);
}

#[test]
fn an_output_budget_out_of_range_says_what_to_give() {
    for (text, column) in [
        ("[output]\nbudget = 0\n", 10),
        ("[output]\nbudget = 1048576\n", 10),
    ] {
        let e = err(text);
        assert_eq!((e.line, e.column), (2, column), "{e}");
        assert!(matches!(e.kind, ConfigErrorKind::OutOfRange { .. }), "{e}");
        assert!(e.to_string().contains("from 1024 to 65536"), "{e}");
    }
    let file = parse("[output]\nbudget = 16384\n", "corral.toml", "project").unwrap();
    assert_eq!(file.output_budget, Some(16384));
}
