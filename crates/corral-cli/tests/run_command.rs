//! `corral run`, `corral verify`, `corral patch` and `corral init` as a person and a
//! script use them: exit statuses, live lines, the verdict, and the model reached through
//! the environment without its key reaching a command.

use crate::common;
use crate::task_common;

use std::io::Write;
use std::process::Stdio;

use common::{Scratch, text};
use serde_json::json;
use task_common::*;

/// A JSON Lines script of `calls` turns.
fn script(s: &Scratch, turns: &[Vec<Call>]) -> String {
    script_model(s.dir.path(), turns)
}

#[test]
fn a_scripted_run_is_verified_and_shows_each_step() {
    let s = Scratch::new();
    failing_repo(&s.workspace());
    let model = script(&s, &fixing_script());
    let out = s.output(&[
        "run",
        "fix the failing test",
        "--verify",
        "sh test.sh",
        "--model",
        &model,
        "--yes",
    ]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    for line in [
        "  read_file    lib.sh  ok · ",
        "  exec         sh test.sh  exit 1 · ",
        "  apply_patch  lib.sh  ok · ",
        "  gate         passed (1 phase)",
        "corral: verified · gate passed (1 phase) · 5 turns",
    ] {
        assert!(err.contains(line), "missing {line:?} in:\n{err}");
    }
    assert!(
        err.lines()
            .last()
            .unwrap()
            .contains("add subtracted; it adds now"),
        "{err}"
    );
}

#[test]
fn a_patch_in_a_here_document_fixes_the_run_as_it_would_in_a_shell() {
    // The model writes the patch as it would type it into a shell, as Codex's models do.
    let s = Scratch::new();
    failing_repo(&s.workspace());
    let wrapped = format!("apply_patch <<'EOF'\n{FIX}\nEOF\n");
    let model = script(
        &s,
        &[
            vec![("apply_patch", json!({"patch": wrapped}))],
            vec![("done", json!({}))],
        ],
    );
    let out = s.output(&[
        "run",
        "fix it",
        "--verify",
        "sh test.sh",
        "--model",
        &model,
        "--yes",
    ]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("  apply_patch  lib.sh  ok · "), "{err}");
    assert!(err.contains("corral: verified"), "{err}");
    assert_eq!(
        std::fs::read_to_string(s.workspace().join("lib.sh")).unwrap(),
        LIB.replace("$1 - $2", "$1 + $2")
    );
}

#[test]
fn a_run_that_never_passes_its_gate_exits_1() {
    let s = Scratch::new();
    failing_repo(&s.workspace());
    let model = script(&s, &[vec![("done", json!({}))], vec![("done", json!({}))]]);
    let out = s.output(&[
        "run",
        "fix it",
        "--verify",
        "sh test.sh",
        "--model",
        &model,
        "--yes",
        "--max-steps",
        "2",
    ]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("  gate         failed at phase 1 of 1 (sh test.sh): exit 1, expected 0"),
        "{err}"
    );
    assert!(
        err.contains("corral: not verified: the step limit (2 model turns) was reached"),
        "{err}"
    );
}

#[test]
fn bad_requests_exit_2_and_say_what_to_do() {
    let s = Scratch::new();
    failing_repo(&s.workspace());
    for (args, says) in [
        (
            vec!["run", "x", "--verify", "sh test.sh"],
            "no model: pass --model",
        ),
        (
            vec!["run", "x", "--verify", "sh test.sh", "--model", "gpt"],
            "PROVIDER:MODEL",
        ),
        (
            vec![
                "run",
                "x",
                "--verify",
                "make && make test",
                "--model",
                "script:x",
            ],
            "gate command",
        ),
        (
            vec!["run", "x", "--model", "script:/no/such.jsonl"],
            "no verification gate",
        ),
        (vec!["verify"], "no verification gate"),
    ] {
        let out = s.corral(&args).env_remove("CORRAL_MODEL").output().unwrap();
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

#[test]
fn verify_runs_only_the_gate() {
    let s = Scratch::new();
    failing_repo(&s.workspace());
    let out = s.output(&["verify", "--verify", "sh test.sh"]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("FAIL: add 2 3 = -1"), "{err}");
    assert!(
        err.contains("corral: gate failed at phase 1 of 1 (sh test.sh): exit 1, expected 0"),
        "{err}"
    );

    std::fs::write(s.workspace().join("lib.sh"), LIB.replace('-', "+")).unwrap();
    std::fs::write(
        s.workspace().join("corral.toml"),
        "[verify]\ncommands = [\"sh test.sh\"]\n",
    )
    .unwrap();
    // The person who wrote the file trusts it; until then its gate is nobody's.
    assert!(s.output(&["policy", "trust"]).status.success());
    let out = s.output(&["verify"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("corral: gate passed (1 phase)"));
}

fn patch(s: &Scratch, input: &str) -> std::process::Output {
    let mut child = s
        .corral(&["patch"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn patch_reads_stdin_and_applies_all_or_nothing() {
    let s = Scratch::new();
    failing_repo(&s.workspace());
    let out = patch(&s, FIX);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "applied the patch: 1 file changed\nM lib.sh (+1 -1)\n"
    );
    let again = patch(&s, FIX);
    assert_eq!(again.status.code(), Some(2));
    assert!(
        text(&again.stderr).contains("nothing was changed"),
        "{}",
        text(&again.stderr)
    );
    let empty = patch(&s, "");
    assert_eq!(empty.status.code(), Some(2));
    assert!(text(&empty.stderr).contains("no patch on stdin"));
}

#[test]
fn init_writes_corral_toml_once() {
    let s = Scratch::new();
    std::fs::write(
        s.workspace().join("Cargo.toml"),
        "[package]\nname = \"x\"\n",
    )
    .unwrap();
    let out = s.output(&["init"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("found cargo (Cargo.toml) · gate: cargo test"));
    assert!(text(&out.stderr).contains("trusted as written"));
    let written = std::fs::read_to_string(s.workspace().join("corral.toml")).unwrap();
    assert!(
        written.contains("[verify]\ncommands = [\n  \"cargo test\",\n]"),
        "{written}"
    );
    let again = s.output(&["init"]);
    assert_eq!(again.status.code(), Some(2));
    assert!(text(&again.stderr).contains("--force"));
    // The policy loader reads what init wrote.
    let check = s.output(&["policy", "check", "--", "git", "push"]);
    assert_eq!(check.status.code(), Some(2), "{}", text(&check.stdout));
    // Its allow rules apply: the person who ran init trusts what it wrote.
    let allowed = s.output(&[
        "policy",
        "check",
        "--surface",
        "library",
        "--",
        "cargo",
        "test",
    ]);
    assert_eq!(allowed.status.code(), Some(0), "{}", text(&allowed.stdout));
}

#[test]
fn a_local_openai_compatible_server_is_reached_and_keys_stay_out_of_commands() {
    let s = Scratch::new();
    failing_repo(&s.workspace());
    let mut turns = vec![vec![("exec", json!({"argv": ["env"]}))]];
    turns.extend(fixing_script());
    let server = Server::start(turns.iter().map(|c| Reply::json(openai(None, c))).collect());
    let out = s
        .corral(&[
            "run",
            "fix the failing test",
            "--verify",
            "sh test.sh",
            "--model",
            "openai:local-model",
            "--yes",
        ])
        .env("OPENAI_BASE_URL", format!("{}/v1", server.base))
        .env("OPENAI_API_KEY", "sk-very-secret-123")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let received = server.received();
    assert_eq!(received.len(), 6);
    assert_eq!(
        received[0].header("authorization"),
        Some("Bearer sk-very-secret-123")
    );
    assert_eq!(received[0].body["model"], "local-model");
    let env_output = received[1].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(env_output.contains("PATH="), "{env_output}");
    assert!(!env_output.contains("sk-very-secret-123"), "{env_output}");
    assert!(!env_output.contains("OPENAI_"), "{env_output}");
}

#[test]
fn trace_show_tells_the_whole_run() {
    let s = Scratch::new();
    failing_repo(&s.workspace());
    let model = script(
        &s,
        &[
            vec![("exec", json!({"argv": ["sh", "test.sh"]}))],
            vec![("done", json!({}))],
            vec![("apply_patch", json!({"patch": FIX}))],
            vec![("done", json!({}))],
        ],
    );
    let out = s.output(&[
        "run",
        "fix it",
        "--verify",
        "sh test.sh",
        "--model",
        &model,
        "--yes",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let show = s.output(&["trace", "show"]);
    let shown = text(&show.stdout);
    assert_eq!(show.status.code(), Some(0), "{}", text(&show.stderr));
    let lines: Vec<&str> = shown.lines().collect();
    assert!(lines[0].contains("4 steps, 4 model turns"), "{shown}");
    let kinds: Vec<&str> = lines[1..]
        .iter()
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "turn", "step", "turn", "step", "gate:", "turn", "step", "modified", "turn", "step"
        ],
        "{shown}"
    );
    assert!(
        shown.contains("gate: phase 1 of 1 (sh test.sh): exit 1, expected 0"),
        "{shown}"
    );
    assert!(shown.contains("script:"), "{shown}");
    let json = s.output(&["trace", "show", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(v["model_turns"].as_array().unwrap().len(), 4);
    assert_eq!(v["gate"][1]["kind"], "gate_phase_failed");
}

#[test]
fn init_leaves_the_gate_to_the_person_when_the_test_script_is_npms_placeholder() {
    let s = Scratch::new();
    std::fs::write(
        s.workspace().join("package.json"),
        r#"{"name": "x", "scripts": {"test": "echo \"Error: no test specified\" && exit 1"}}"#,
    )
    .unwrap();
    let out = s.output(&["init"]);
    let err = text(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("npm's placeholder"), "{err}");
    let toml = std::fs::read_to_string(s.workspace().join("corral.toml")).unwrap();
    assert!(!toml.contains("\"npm test\""), "{toml}");
    let verify = s.output(&["verify"]);
    assert_eq!(verify.status.code(), Some(2), "{}", text(&verify.stderr));
    assert!(text(&verify.stderr).contains("no verification gate"));
}
