//! Files stack as layers; rules remember their file and line.

use corral_policy::config::parse;
use corral_policy::{Act, ApprovalMode, Effect, Origin, Policy, Tier};

const OPERATOR: &str = r#"
tier = "default"
approval = "unless-trusted"

[effects]
unparsable_inner_line = "deny"

[exec]
allow = ["cargo*", "npm*"]
deny = ["rm", "cargo publish*"]

[write]
deny = ["**/.git/hooks/**"]
"#;

const PROJECT: &str = r#"
tier = "permissive"

[effects]
unparsable_inner_line = "allow"

[[rule]]
act = "exec"
pattern = "cargo publish --dry-run*"
effect = "allow"

[[rule]]
act = "exec"
pattern = "curl*"
effect = "ask"
"#;

fn policy() -> Policy {
    let op = parse(OPERATOR, "/etc/corral/policy.toml", "operator").unwrap();
    let project = parse(PROJECT, "/work/repo/.corral.toml", "project").unwrap();
    Policy::default().with_file(op).with_file(project)
}

#[test]
fn rules_keep_their_origin() {
    let p = policy();
    let d = p.check(Act::Exec, "rm -rf x");
    assert_eq!(d.effect, Effect::Deny);
    let rule = d.rule.unwrap();
    assert_eq!(rule.layer(), "operator");
    assert_eq!(
        rule.origin(),
        &Origin::File {
            path: "/etc/corral/policy.toml".into(),
            line: 10
        }
    );
    let d = p.check(Act::Exec, "curl x");
    assert_eq!(d.effect, Effect::Ask);
    assert_eq!(
        d.rule.unwrap().origin().to_string(),
        "/work/repo/.corral.toml:14"
    );
}

#[test]
fn a_project_cannot_take_back_an_operator_deny() {
    let p = policy();
    assert_eq!(
        p.check(Act::Exec, "cargo publish --dry-run").effect,
        Effect::Deny
    );
    assert_eq!(p.check(Act::Exec, "cargo test").effect, Effect::Allow);
    assert_eq!(
        p.check(Act::Write, "/work/repo/.git/hooks/pre-commit")
            .effect,
        Effect::Deny
    );
}

#[test]
fn later_files_only_tighten_settings() {
    let p = policy();
    assert_eq!(p.current_tier(), Tier::Default);
    assert_eq!(p.effects().unparsable_inner_line, Effect::Deny);
    assert_eq!(p.approval_mode(), Some(ApprovalMode::UnlessTrusted));
    let strict = parse("tier = \"strict\"\n", "p.toml", "project").unwrap();
    let p = p.with_file(strict);
    assert_eq!(p.current_tier(), Tier::Strict);
}

#[test]
fn the_first_file_sets_the_base() {
    let op = parse("tier = \"permissive\"\n", "op.toml", "operator").unwrap();
    let p = Policy::strict().with_file(op);
    assert_eq!(p.current_tier(), Tier::Permissive);
}

#[test]
fn rules_keep_file_order_within_a_layer() {
    let file = parse(
        "[[rule]]\nact = \"exec\"\npattern = \"b\"\neffect = \"deny\"\n[exec]\ndeny = [\"a\"]\n",
        "f.toml",
        "user",
    )
    .unwrap();
    let patterns: Vec<&str> = file.rules.iter().map(|r| r.pattern()).collect();
    assert_eq!(patterns, ["b", "a"]);
}

#[test]
fn describe_lists_the_effective_policy() {
    let text = policy().describe();
    assert!(text.contains("tier: default"), "{text}");
    assert!(text.contains("approval: unless-trusted"), "{text}");
    assert!(text.contains("unparsable_inner_line: deny"), "{text}");
    assert!(text.contains("layer operator (5 rules)"), "{text}");
    assert!(text.contains("layer project (2 rules)"), "{text}");
    assert!(
        text.contains("  deny  exec  \"rm\"  (/etc/corral/policy.toml:10)"),
        "{text}"
    );
}

#[test]
fn interactive_lists_merge() {
    let f = parse(
        "[interactive]\nprograms = [\"my-tui\"]\nallow = [\"psql\"]\n",
        "f.toml",
        "user",
    )
    .unwrap();
    let p = Policy::default().with_file(f);
    assert!(p.needs_terminal(&["my-tui".to_string()]).is_some());
    assert!(p.needs_terminal(&["psql".to_string()]).is_none());
}
