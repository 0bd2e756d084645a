//! Under `deny rm`, every way of reaching `rm` through a launcher is denied,
//! and harmless commands are not.

use std::path::Path;

use corral_policy::{CommandCheck, Effect, Policy};

fn policy() -> Policy {
    Policy::permissive().layer("operator").deny_exec("rm")
}

fn check(policy: &Policy, argv: &[&str]) -> corral_policy::Verdict {
    let argv: Vec<String> = argv.iter().map(|s| s.to_string()).collect();
    policy.check_command(&CommandCheck {
        argv: &argv,
        program_path: None,
    })
}

const CORPUS: &[&[&str]] = &[
    &["rm", "x"],
    &["/bin/rm", "x"],
    &["env", "rm", "x"],
    &["env", "-i", "FOO=1", "rm", "x"],
    &["nice", "-n", "5", "rm", "x"],
    &["timeout", "5", "rm", "x"],
    &["timeout", "-s", "KILL", "5", "rm", "x"],
    &["xargs", "rm"],
    &["xargs", "-0", "-n1", "rm"],
    &["sudo", "rm", "x"],
    &["sudo", "-u", "root", "rm", "x"],
    &["command", "rm", "x"],
    &["find", ".", "-exec", "rm", "{}", "+"],
    &["find", ".", "-name", "x", "-execdir", "rm", "{}", ";"],
    &["busybox", "rm", "x"],
    &["bash", "-c", "rm -rf x"],
    &["sh", "-c", "ls && rm x"],
    &["bash", "-lc", "cd /tmp; rm x"],
    &["env", "bash", "-c", "nice rm x"],
    &["nohup", "setsid", "rm", "x"],
    &["stdbuf", "-oL", "rm", "x"],
];

#[test]
fn every_launcher_of_rm_is_denied() {
    let policy = policy();
    for argv in CORPUS {
        let verdict = check(&policy, argv);
        assert_eq!(verdict.effect, Effect::Deny, "{argv:?}:\n{verdict}");
        let decisive = verdict.decisive();
        assert_eq!(decisive.rule.as_ref().unwrap().pattern(), "rm", "{argv:?}");
        assert_eq!(decisive.rule.as_ref().unwrap().layer(), "operator");
    }
}

#[test]
fn more_launchers_are_denied() {
    let policy = policy();
    for argv in [
        &["/usr/bin/env", "rm", "x"][..],
        &["sudo", "-nu", "root", "--", "rm", "x"],
        &["doas", "rm", "x"],
        &["su", "-c", "rm x"],
        &["su", "root", "-c", "rm x"],
        &["toybox", "rm", "x"],
        &["find", ".", "-delete"],
        &["find", ".", "-ok", "rm", "{}", ";"],
        &["watch", "rm", "x"],
        &["watch", "-x", "rm", "x"],
        &["flock", "/tmp/l", "rm", "x"],
        &["flock", "/tmp/l", "-c", "rm x"],
        &["chroot", "/", "rm", "x"],
        &["ionice", "-c3", "rm", "x"],
        &["taskset", "-c", "0", "rm", "x"],
        &["chrt", "-f", "10", "rm", "x"],
        &["unbuffer", "rm", "x"],
        &["time", "-p", "rm", "x"],
        &["exec", "rm", "x"],
        &["env", "-S", "rm x"],
        &["bash", "-o", "pipefail", "-c", "ls | rm x"],
        &["bash", "-c", "echo $HOME; rm -rf x"],
        &["sh", "-c", "sh -c 'bash -c \"rm x\"'"],
        &["python3", "-c", "x"],
    ] {
        let verdict = check(&policy, argv);
        let expected = if argv[0] == "python3" {
            Effect::Ask
        } else {
            Effect::Deny
        };
        assert_eq!(verdict.effect, expected, "{argv:?}:\n{verdict}");
    }
}

#[test]
fn the_resolved_path_is_checked_too() {
    let policy = Policy::permissive().deny_exec("/usr/bin/rm");
    let argv = vec!["rm".to_string(), "x".to_string()];
    let verdict = policy.check_command(&CommandCheck {
        argv: &argv,
        program_path: Some(Path::new("/usr/bin/rm")),
    });
    assert_eq!(verdict.effect, Effect::Deny);
    let verdict = policy.check_command(&CommandCheck {
        argv: &argv,
        program_path: Some(Path::new("/bin/rm")),
    });
    assert_eq!(verdict.effect, Effect::Allow);
}

#[test]
fn harmless_commands_are_not_denied() {
    let policy = policy();
    for argv in [
        &["ls"][..],
        &["env", "ls"],
        &["bash", "-c", "ls | wc -l"],
        &["rmdir", "x"],
        &["echo", "rm"],
        &["find", ".", "-name", "rm"],
        &["xargs", "echo"],
    ] {
        let verdict = check(&policy, argv);
        assert_eq!(verdict.effect, Effect::Allow, "{argv:?}:\n{verdict}");
    }
}

#[test]
fn inner_decisions_say_how_they_were_reached() {
    let verdict = check(&policy(), &["env", "bash", "-c", "nice rm x"]);
    let d = verdict.decisive();
    assert_eq!(d.target, "rm x");
    assert_eq!(d.via, ["env", "bash -c", "nice"]);
    assert_eq!(
        d.to_string(),
        "deny  exec  rm x  (rule \"rm\" in layer operator, library; via env > bash -c > nice)"
    );
}
