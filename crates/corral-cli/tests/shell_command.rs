//! `corral shell 'LINE'` behaves like `bash -c 'LINE'` for an admitted line, and a refused
//! line exits 2 with the construct, where it is, and why.

use crate::common;

use common::{Scratch, text};

#[test]
fn output_files_and_status_match_bash() {
    let line = "printf '%s\\n' b a c | sort > sorted; cat sorted | head -n 2; false || exit_code_is_127_here";
    let ours = Scratch::new();
    let out = ours.output(&["shell", line]);
    let bash = Scratch::new();
    let theirs = std::process::Command::new("bash")
        .args(["-c", line])
        .current_dir(bash.workspace())
        .output()
        .unwrap();
    assert_eq!(text(&out.stdout), text(&theirs.stdout));
    assert_eq!(out.status.code(), theirs.status.code());
    assert_eq!(
        std::fs::read(ours.workspace().join("sorted")).unwrap(),
        std::fs::read(bash.workspace().join("sorted")).unwrap()
    );
}

#[test]
fn a_refused_line_exits_2_and_points_at_the_construct() {
    let s = Scratch::new();
    let out = s.output(&["shell", "touch x && ls -l $(pwd)"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("command substitution `$( )` at 17..23"),
        "{stderr}"
    );
    assert!(
        stderr.contains("run the inner command as its own call first"),
        "{stderr}"
    );
    let caret = format!("  touch x && ls -l $(pwd)\n  {}^^^^^^\n", " ".repeat(17));
    assert!(stderr.contains(&caret), "{stderr}");
    assert!(!s.workspace().join("x").exists());
}

#[test]
fn json_lists_every_stage() {
    let s = Scratch::new();
    let out = s.output(&["shell", "--json", "echo one | wc -c"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["stages"].as_array().unwrap().len(), 2);
    assert_eq!(v["stages"][1]["argv"], serde_json::json!(["wc", "-c"]));
    assert_eq!(v["stdout"]["window"]["head"], "4\n");
}
