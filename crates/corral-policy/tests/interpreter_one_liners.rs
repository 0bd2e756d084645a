//! Inline programs cannot be checked inside: a setting decides.

use corral_policy::{CommandCheck, Effect, Policy, Verdict, Why};

fn check(policy: &Policy, argv: &[&str]) -> Verdict {
    let argv: Vec<String> = argv.iter().map(|s| s.to_string()).collect();
    policy.check_command(&CommandCheck {
        argv: &argv,
        program_path: None,
    })
}

const ONE_LINERS: &[&[&str]] = &[
    &["python", "-c", "print(1)"],
    &["python3", "-c", "import os"],
    &["/usr/bin/python3.12", "-Bc", "x"],
    &["python3", "-u", "-c", "x"],
    &["node", "-e", "x"],
    &["node", "--eval", "x"],
    &["node", "-p", "1+1"],
    &["perl", "-e", "x"],
    &["perl", "-E", "say 1"],
    &["perl", "-ne", "print"],
    &["ruby", "-e", "x"],
    &["php", "-r", "x"],
    &["deno", "eval", "x"],
    &["osascript", "-e", "x"],
    &["pwsh", "-c", "x"],
    &["pwsh", "-Command", "x"],
    &["powershell", "-Command", "x"],
    &["powershell.exe", "-enc", "AAAA"],
    &["env", "python3", "-c", "x"],
    &["bash", "-c", "python3 -c pass"],
    &["awk", "BEGIN{system(\"id\")}"],
];

#[test]
fn one_liners_ask_by_default() {
    let p = Policy::permissive();
    for argv in ONE_LINERS {
        let v = check(&p, argv);
        assert_eq!(v.effect, Effect::Ask, "{argv:?}\n{v}");
        assert!(
            v.decisions
                .iter()
                .any(|d| d.why == Why::InterpreterOneLiner),
            "{argv:?}"
        );
    }
}

#[test]
fn the_setting_decides() {
    for effect in [Effect::Allow, Effect::Deny] {
        let p = Policy::permissive().interpreter_one_liner(effect);
        for argv in ONE_LINERS {
            assert_eq!(check(&p, argv).effect, effect, "{argv:?}");
        }
    }
}

#[test]
fn a_deny_on_the_interpreter_still_wins() {
    let p = Policy::permissive()
        .interpreter_one_liner(Effect::Allow)
        .deny_exec("python*");
    assert_eq!(check(&p, &["python3", "-c", "x"]).effect, Effect::Deny);
}

#[test]
fn scripts_and_plain_runs_are_not_one_liners() {
    let p = Policy::permissive();
    for argv in [
        &["python3", "script.py"][..],
        &["python3", "-m", "pytest"],
        &["node", "server.js"],
        &["perl", "x.pl"],
        &["awk", "{print $1}", "f"],
        &["python3", "--version"],
    ] {
        assert_eq!(check(&p, argv).effect, Effect::Allow, "{argv:?}");
    }
}

#[test]
fn script_files_are_decided_by_their_setting_when_set() {
    let p = Policy::permissive();
    assert_eq!(check(&p, &["bash", "script.sh"]).effect, Effect::Allow);
    let p = p.script_file(Some(Effect::Ask));
    for argv in [
        &["bash", "script.sh"][..],
        &["sh", "-s"],
        &["python3", "x.py"],
        &["sh", "-e", "x.sh"],
    ] {
        let v = check(&p, argv);
        assert_eq!(v.effect, Effect::Ask, "{argv:?}");
        assert!(matches!(v.decisive().why, Why::ScriptFile { .. }));
    }
    assert_eq!(check(&p, &["bash", "-c", "ls"]).effect, Effect::Allow);
}
