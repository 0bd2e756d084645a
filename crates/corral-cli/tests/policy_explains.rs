//! `corral policy check` names the variable, flag, launcher or file identity behind each
//! decision; `policy show` says what the policy relies on.

mod common;

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
    let (code, out) = check(&s, &["--line", "bash -c 'PATH=./x ls'"]);
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
