//! A shell line the grammar refuses cannot be checked inside; a setting
//! decides, and the decision says why.

use corral_policy::{CommandCheck, Effect, Policy, Verdict, Why};

fn check(policy: &Policy, argv: &[&str]) -> Verdict {
    let argv: Vec<String> = argv.iter().map(|s| s.to_string()).collect();
    policy.check_command(&CommandCheck {
        argv: &argv,
        program_path: None,
    })
}

#[test]
fn a_refused_line_asks_by_default() {
    let p = Policy::permissive();
    let v = check(&p, &["bash", "-c", "echo $(whoami)"]);
    assert_eq!(v.effect, Effect::Ask);
    let d = v.decisive();
    let Why::UnparsableInnerLine { line, refusal } = &d.why else {
        panic!("{d:?}");
    };
    assert_eq!(line, "echo $(whoami)");
    assert!(refusal.contains("command substitution"), "{refusal}");
    let shown = d.to_string();
    assert!(
        shown.starts_with("ask   exec  echo $(whoami)  (inner line not checkable: "),
        "{shown}"
    );
    assert!(
        shown.ends_with("unparsable_inner_line = ask; via bash -c)"),
        "{shown}"
    );
}

#[test]
fn the_setting_is_configurable() {
    let argv = ["sh", "-c", "ls $HOME"];
    for effect in [Effect::Allow, Effect::Ask, Effect::Deny] {
        let p = Policy::permissive().unparsable_inner_line(effect);
        assert_eq!(check(&p, &argv).effect, effect);
    }
}

#[test]
fn a_refused_line_naming_a_denied_program_is_denied() {
    let p = Policy::permissive().layer("operator").deny_exec("rm");
    let v = check(&p, &["bash", "-c", "rm -rf $HOME"]);
    assert_eq!(v.effect, Effect::Deny);
    assert_eq!(v.decisive().rule.as_ref().unwrap().pattern(), "rm");
    assert!(matches!(v.decisive().why, Why::UnparsableInnerLine { .. }));
}

#[test]
fn a_parsable_line_is_checked_stage_by_stage() {
    let p = Policy::strict()
        .allow_exec("bash")
        .allow_exec("ls")
        .allow_exec("wc");
    assert_eq!(
        check(&p, &["bash", "-c", "ls | wc -l"]).effect,
        Effect::Allow
    );
    assert_eq!(check(&p, &["bash", "-c", "ls | sort"]).effect, Effect::Deny);
}

#[test]
fn redirects_inside_a_line_are_checked() {
    let p = Policy::permissive().deny_write("**/.bashrc");
    let v = check(&p, &["sh", "-c", "echo x >> /home/u/.bashrc"]);
    assert_eq!(v.effect, Effect::Deny);
    assert_eq!(v.decisive().target, "/home/u/.bashrc");
}

#[test]
fn nesting_is_bounded() {
    let mut line = "true".to_string();
    for _ in 0..40 {
        line = format!("env {line}");
    }
    let argv: Vec<&str> = line.split(' ').collect();
    let v = check(&Policy::permissive(), &argv);
    assert_eq!(v.effect, Effect::Ask);
    assert!(v.decisions.iter().any(|d| d.why == Why::DepthLimit));
}
