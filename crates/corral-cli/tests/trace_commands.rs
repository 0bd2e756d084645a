//! `corral trace` reads back what ran and what it printed.

use crate::common;

use common::{Scratch, testbin, text};

#[test]
fn steps_and_full_output_can_be_read_back() {
    let s = Scratch::new();
    assert!(
        s.output(&["exec", "--", &testbin(), "lines", "5000"])
            .status
            .success()
    );
    assert_eq!(
        s.output(&["exec", "--", "corral-no-such-program"])
            .status
            .code(),
        Some(127)
    );

    let runs = text(&s.output(&["trace", "runs"]).stdout);
    assert_eq!(runs.lines().count(), 2, "{runs}");
    assert!(runs.lines().all(|l| l.contains("closed")), "{runs}");

    let steps: serde_json::Value =
        serde_json::from_slice(&s.output(&["trace", "steps", "--json"]).stdout).unwrap();
    let steps = steps.as_array().unwrap();
    assert_eq!(steps.len(), 2);
    assert_eq!(steps[0]["outcome"], "unavailable");
    assert_eq!(steps[1]["outcome"], "exited");
    let id = steps[1]["id"].as_i64().unwrap().to_string();

    // The observation was elided; the capture has every line.
    assert!(
        steps[1]["observation"]
            .as_str()
            .unwrap()
            .contains(&format!("corral trace output {id} --stream stdout"))
    );
    let full = s.output(&["trace", "output", &id]);
    assert!(full.status.success());
    assert_eq!(text(&full.stdout).lines().count(), 5000);
    assert_eq!(text(&full.stdout).lines().last(), Some("line 5000"));
}

#[test]
fn prune_removes_old_captures_and_says_so() {
    let s = Scratch::new();
    for _ in 0..3 {
        s.output(&["exec", "--", &testbin(), "lines", "10"]);
    }
    let out = s.output(&["trace", "prune", "--keep-runs", "1"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("pruned the captures of 2 runs"),
        "{}",
        text(&out.stdout)
    );
    let steps: serde_json::Value =
        serde_json::from_slice(&s.output(&["trace", "steps", "--json"]).stdout).unwrap();
    let oldest = steps.as_array().unwrap().last().unwrap()["id"]
        .as_i64()
        .unwrap()
        .to_string();
    let out = s.output(&["trace", "output", &oldest]);
    assert_ne!(out.status.code(), Some(0));
    assert!(
        text(&out.stderr).contains("pruned"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn an_unknown_step_says_how_to_list_them() {
    let s = Scratch::new();
    s.output(&["exec", "--", "true"]);
    let out = s.output(&["trace", "output", "999"]);
    assert!(
        text(&out.stderr).contains("corral trace steps"),
        "{}",
        text(&out.stderr)
    );
}

/// A step's line in `corral trace steps` shows the start of a long command and how much
/// more there is; `--json` keeps all of it.
#[test]
fn a_long_command_is_clipped_on_its_line_and_whole_in_json() {
    let s = Scratch::new();
    let long = "x".repeat(100_000);
    assert!(s.output(&["exec", "--", "true", &long]).status.success());
    let lines = text(&s.output(&["trace", "steps"]).stdout);
    assert!(lines.len() < 1000, "{} bytes", lines.len());
    assert!(lines.contains("--json shows all"), "{lines}");
    let steps: serde_json::Value =
        serde_json::from_slice(&s.output(&["trace", "steps", "--json"]).stdout).unwrap();
    assert!(steps[0]["argv_json"].as_str().unwrap().contains(&long));
}
