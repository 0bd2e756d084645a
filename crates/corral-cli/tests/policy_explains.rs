//! `corral policy check` names the variable, flag, launcher or file identity behind each
//! decision; `policy show` says what the policy relies on.

use crate::common;

use common::{Scratch, text};

fn check(s: &Scratch, args: &[&str]) -> (Option<i32>, String) {
    let mut all = vec!["policy", "check"];
    all.extend_from_slice(args);
    let out = s
        .corral(&all)
        .env("CORRAL_POLICY", "")
        .env("CORRAL_TRUST_STORE", s.dir.path().join("trusted"))
        .output()
        .unwrap();
    (out.status.code(), text(&out.stdout))
}

#[test]
fn each_decision_names_what_caused_it() {
    let s = Scratch::new();
    // A model's line: a person's own `PATH=` is theirs to set.
    let (code, out) = check(
        &s,
        &["--caller", "model", "--line", "bash -c 'PATH=./x ls'"],
    );
    assert_eq!(code, Some(1), "{out}");
    assert!(
        out.contains("ask   env   PATH=./x  (PATH: changes which program a name runs"),
        "{out}"
    );
    let (_, out) = check(&s, &["--", "sort", "--compress-program=./x", "f"]);
    assert!(
        out.contains("not known-safe: --compress-program=./x: runs a program"),
        "{out}"
    );
    let (code, out) = check(&s, &["--deny", "rm", "--", "strace", "-f", "rm", "x"]);
    assert_eq!(code, Some(2), "{out}");
    assert!(out.contains("via strace: deny  exec  rm x"), "{out}");
    std::os::unix::fs::symlink("/bin/rm", s.workspace().join("del")).unwrap();
    let (code, out) = check(&s, &["--deny", "rm", "--", "./del", "x"]);
    assert_eq!(code, Some(2), "{out}");
    assert!(out.contains("the program is the same file as"), "{out}");
    assert!(out.contains("device") && out.contains("inode"), "{out}");
}

#[test]
fn show_says_what_the_policy_relies_on() {
    let s = Scratch::new();
    let out = s
        .corral(&[
            "policy",
            "show",
            "--deny",
            "rm",
            "--approval",
            "unless-trusted",
        ])
        .env("CORRAL_POLICY", "")
        .output()
        .unwrap();
    let shown = text(&out.stdout);
    for needle in [
        "# what this policy relies on",
        "its ask/deny rules on programs (rm)",
        "file identity",
        "unless-trusted runs known-safe commands",
        "commands typed into an interactive shell",
    ] {
        assert!(shown.contains(needle), "{needle:?} missing:\n{shown}");
    }
}

#[test]
fn a_known_safe_name_that_finds_a_workspace_program_asks() {
    use std::os::unix::fs::PermissionsExt;
    let s = Scratch::new();
    let bin = s.workspace().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let pwned = s.workspace().join("pwned");
    std::fs::write(
        bin.join("ls"),
        format!("#!/bin/sh\ntouch '{}'\n", pwned.display()),
    )
    .unwrap();
    std::fs::set_permissions(bin.join("ls"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let run = |path: &str| {
        s.corral(&["shell", "--approval", "unless-trusted", "bash -c 'ls'"])
            .env("CORRAL_POLICY", "")
            .env("PATH", path)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap()
    };
    let out = run(&path);
    assert_ne!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(!pwned.exists(), "the workspace's ls ran without asking");
    // The same line with the system's ls is known-safe and runs.
    let out = run(&std::env::var("PATH").unwrap());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let (_, checked) = {
        let out = s
            .corral(&[
                "policy",
                "check",
                "--approval",
                "unless-trusted",
                "--",
                "bash",
                "-c",
                "ls",
            ])
            .env("CORRAL_POLICY", "")
            .env("PATH", &path)
            .output()
            .unwrap();
        (out.status.code(), text(&out.stdout))
    };
    assert!(
        checked.contains("not known-safe: ls resolves to")
            && checked.contains("outside the system directories"),
        "{checked}"
    );
}
