//! `corral exec` exits like `timeout(1)`: the command's status, 124 on timeout, 127 when
//! the program is unavailable, 128+N for signal N, 2 for a bad request.

use crate::common;

use common::{Scratch, testbin, text};

fn code(args: &[&str]) -> (i32, String) {
    let s = Scratch::new();
    let out = s.output(args);
    (
        out.status.code().expect("corral exits, it is not killed"),
        text(&out.stderr),
    )
}

#[test]
fn the_commands_own_status() {
    assert_eq!(code(&["exec", "--", "true"]).0, 0);
    assert_eq!(code(&["exec", "--", &testbin(), "exit", "3"]).0, 3);
}

#[test]
fn timeout_is_124() {
    let (code, stderr) = code(&["exec", "--timeout", "200ms", "--", "sleep", "30"]);
    assert_eq!(code, 124);
    assert!(stderr.contains("timed out after 200ms"), "{stderr}");
}

#[test]
fn unavailable_is_127() {
    let (code, stderr) = code(&["exec", "--", "corral-no-such-program"]);
    assert_eq!(code, 127);
    assert!(
        stderr.contains("`corral-no-such-program` was not found on PATH"),
        "{stderr}"
    );
}

#[test]
fn a_signal_is_128_plus_n() {
    assert_eq!(code(&["exec", "--", &testbin(), "signal", "15"]).0, 143);
}

#[test]
fn bad_requests_are_2_with_a_reason() {
    for (args, says) in [
        (
            vec!["exec", "--timeout", "soon", "--", "true"],
            "malformed duration",
        ),
        (
            vec!["exec", "--env", "PATH=/tmp", "--", "true"],
            "overriding PATH",
        ),
        (
            vec!["exec", "--env", "LD_PRELOAD=/x.so", "--", "true"],
            "LD_PRELOAD",
        ),
        (
            vec!["exec", "--cwd", "missing", "--", "true"],
            "does not exist",
        ),
        (vec!["exec", "--env", "novalue", "--", "true"], "NAME=VALUE"),
        (
            vec!["exec", "--frobnicate", "--", "true"],
            "unexpected argument",
        ),
        (vec!["exec"], "required"),
        (
            vec!["exec", "--sandbox", "bogus", "--", "true"],
            "not a sandbox mode",
        ),
        (
            vec!["exec", "--network", "maybe", "--", "true"],
            "on or off",
        ),
        (vec!["exec", "--", "echo", "a\u{0}b"], ""),
    ] {
        if args.iter().any(|a| a.contains('\0')) {
            continue; // an OS argv cannot carry NUL; the library test covers it.
        }
        let (code, stderr) = code(&args);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
    }
}

#[test]
fn a_reader_that_stops_reading_gets_141_and_no_complaint() {
    let s = Scratch::new();
    let mut child = s
        .corral(&["exec", "--json", "--", "seq", "1", "50000"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The reader goes away before corral writes its result, as `| head -c 0` would.
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(141), "{}", text(&out.stderr));
    assert_eq!(text(&out.stderr), "");
}
