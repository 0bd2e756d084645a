//! Output passes through as the command prints it; `--json` prints the result instead.

use crate::common;

use common::{Scratch, testbin, text};

#[test]
fn stdout_and_stderr_pass_through_unchanged() {
    let s = Scratch::new();
    let out = s.output(&["exec", "--", &testbin(), "spew", "100000", "6400"]);
    assert!(out.status.success());
    assert_eq!(out.stdout.len(), 100_000);
    assert_eq!(out.stderr.len(), 6400);
}

#[test]
fn json_prints_the_structured_result() {
    let s = Scratch::new();
    let out = s.output(&["exec", "--json", "--", &testbin(), "argv", "a b", "$x"]);
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["status"]["kind"], "exited");
    assert_eq!(v["status"]["code"], 0);
    assert_eq!(v["stdout"]["window"]["head"], "[\"a b\", \"$x\"]\n");
    assert!(v["wall_ms"].as_f64().unwrap() >= 0.0);
    assert!(v["observation"].as_str().unwrap().starts_with("exit 0 · "));
}

#[test]
fn cwd_is_relative_to_the_workspace() {
    let s = Scratch::new();
    std::fs::create_dir(s.workspace().join("sub")).unwrap();
    let out = s.output(&["exec", "--cwd", "sub", "--", &testbin(), "pwd"]);
    assert!(
        text(&out.stdout).trim_end().ends_with("/ws/sub"),
        "{}",
        text(&out.stdout)
    );
}
