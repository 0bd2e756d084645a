//! `corral exec` passes arguments, paths and environment values that are not UTF-8 to the
//! program as their bytes, and `corral trace` shows them escaped; `corral shell` says a
//! line is text and what to use instead.

use crate::common;

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};

use common::{Scratch, testbin, text};

fn os(b: &[u8]) -> &OsStr {
    OsStr::from_bytes(b)
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

#[test]
fn arguments_reach_the_program_as_their_bytes_and_the_trace_shows_them_escaped() {
    let s = Scratch::new();
    let args: [&[u8]; 3] = [b"\xff", b"a\\\xfeb", "é".as_bytes()];
    let out = s
        .corral(&["exec", "--", &testbin(), "hex-argv"])
        .args(args.iter().map(|a| os(a)))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let want: String = args.iter().map(|a| hex(a) + "\n").collect();
    assert_eq!(text(&out.stdout), want);

    let steps = s.output(&["trace", "steps"]);
    let listed = text(&steps.stdout);
    assert!(listed.contains(r"hex-argv '\xff' 'a\\\xfeb' é"), "{listed}");
}

#[test]
fn a_workspace_and_cwd_that_are_not_utf8_are_entered_as_their_bytes() {
    let s = Scratch::new();
    let ws = s.dir.path().join(os(b"w\xff"));
    let sub = OsString::from_vec(b"d\xfe".to_vec());
    std::fs::create_dir_all(ws.join(&sub)).unwrap();
    let out = s
        .corral(&["exec", "--workspace"])
        .arg(&ws)
        .arg("--cwd")
        .arg(&sub)
        .args(["--", &testbin(), "hex-pwd"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let want = ws.canonicalize().unwrap().join(&sub);
    assert_eq!(text(&out.stdout), hex(want.as_os_str().as_bytes()) + "\n");
}

#[test]
fn environment_values_and_names_that_are_not_utf8_pass_through_and_secrets_still_go() {
    let s = Scratch::new();
    let out = s
        .corral(&["exec", "--env"])
        .arg(os(b"GIVEN=g\xfe"))
        .args(["--", &testbin(), "hex-env", "INHERITED", "GIVEN"])
        .env("INHERITED", os(b"i\xff"))
        .env(os(b"ODD\xffNAME"), "kept")
        .env(os(b"MY_TOKEN\xff"), "secret")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let lines: Vec<String> = text(&out.stdout).lines().map(String::from).collect();
    assert_eq!(lines[0], hex(b"i\xff"), "{lines:?}");
    assert_eq!(lines[1], hex(b"g\xfe"), "{lines:?}");
    let names = &lines[lines.iter().position(|l| l == "names:").unwrap() + 1..];
    assert!(
        names.contains(&hex(b"ODD\xffNAME")),
        "a name with a byte is kept: {names:?}"
    );
    assert!(
        !names.contains(&hex(b"MY_TOKEN\xff")),
        "a secret's name with a byte is still stripped: {names:?}"
    );
}

#[test]
fn a_shell_line_that_is_not_utf8_is_refused_with_what_to_use_instead() {
    let s = Scratch::new();
    let out = s
        .corral(&["shell"])
        .arg(os(b"printf %s \xff"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains(r"LINE is not UTF-8 (printf %s \xff)"), "{err}");
    assert!(err.contains("corral exec"), "{err}");
}

#[test]
fn policy_check_takes_an_argv_as_bytes_and_a_deny_rule_holds_for_them() {
    let s = Scratch::new();
    let out = s
        .corral(&["policy", "check", "--deny", "rm", "--", "rm"])
        .arg(os(b"\xff"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let shown = text(&out.stdout);
    assert!(shown.starts_with(r"deny  exec  rm \xff"), "{shown}");
}
