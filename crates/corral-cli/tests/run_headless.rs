//! `corral run` and `corral verify` as a CI job runs them: stdin from /dev/null, no
//! terminal, no `--yes`. The gate the person gave is the person's and runs without a
//! question; a gate nobody trusted, or one that cannot run, ends the run at once with the
//! verdict instead of paying for model turns that cannot help.

use crate::common;
use crate::task_common;

use common::{Scratch, text};
use serde_json::json;
use task_common::*;

fn script(s: &Scratch, turns: &[Vec<Call>]) -> String {
    script_model(s.dir.path(), turns)
}

/// `corral run --yes` with the gate `verify`, whose model runs `sh -c LINE` and says done.
fn one_command_then_done(s: &Scratch, line: &str, verify: &str) -> std::process::Output {
    let model = script(
        s,
        &[
            vec![("exec", json!({"argv": ["sh", "-c", line]}))],
            vec![("done", json!({}))],
        ],
    );
    s.output(&[
        "run",
        "x",
        "--verify",
        verify,
        "--model",
        &model,
        "--yes",
        "--max-steps",
        "2",
    ])
}

#[test]
fn a_fix_run_verifies_without_yes() {
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
    ]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("corral: verified"), "{err}");
}

#[test]
fn the_verify_command_runs_a_persons_gate_without_asking() {
    let s = Scratch::new();
    failing_repo(&s.workspace());
    let out = s.output(&["verify", "--verify", "python3 -c 'print(1)'"]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("gate passed"), "{err}");
}

#[test]
fn a_gate_from_an_untrusted_file_is_refused_headless_before_any_turn() {
    let s = Scratch::new();
    failing_repo(&s.workspace());
    // As a model's earlier run could have planted it: a gate that always passes.
    std::fs::write(
        s.workspace().join("corral.toml"),
        "[verify]\ncommands = [\"true\"]\n",
    )
    .unwrap();
    let model = script(&s, &[vec![("done", json!({}))]]);
    for args in [&["run", "fix it", "--model", &model][..], &["verify"][..]] {
        let out = s.output(args);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains("the gate could not run"), "{err}");
        assert!(err.contains("corral policy trust"), "{err}");
        assert!(!err.contains("verified ·"), "{err}");
        assert!(!err.contains("[1]"), "a model turn was paid for: {err}");
    }
    // Trusted, it is the person's.
    let trust = s.output(&["policy", "trust"]);
    assert!(trust.status.success(), "{}", text(&trust.stderr));
    let out = s.output(&["verify"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
}

#[test]
fn a_file_written_during_the_run_does_not_change_the_pinned_gate() {
    let s = Scratch::new();
    failing_repo(&s.workspace());
    let plant = "printf '[verify]\\ncommands = [\"true\"]\\n' > corral.toml";
    let out = one_command_then_done(&s, plant, "sh test.sh");
    let err = text(&out.stderr);
    assert!(
        s.workspace().join("corral.toml").exists(),
        "the model's write did not happen: {err}"
    );
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("(sh test.sh): exit 1, expected 0"), "{err}");
}

#[test]
fn a_refused_gate_ends_the_run_in_one_turn() {
    let s = Scratch::new();
    failing_repo(&s.workspace());
    let policy = s.dir.path().join("operator.toml");
    std::fs::write(&policy, "[exec]\ndeny = [\"sh\"]\n").unwrap();
    let turns: Vec<Vec<Call>> = (0..5).map(|_| vec![("done", json!({}))]).collect();
    let model = script(&s, &turns);
    let out = s
        .corral(&["run", "fix it", "--verify", "sh test.sh", "--model", &model])
        .env("CORRAL_POLICY", &policy)
        .output()
        .unwrap();
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("the gate could not run"), "{err}");
    assert!(err.contains("refused by policy"), "{err}");
    assert!(err.contains("· 1 turns"), "{err}");
}

#[test]
fn a_gate_program_that_is_not_installed_costs_no_turn() {
    let s = Scratch::new();
    let model = script(&s, &[vec![("done", json!({}))]]);
    let out = s.output(&[
        "run",
        "x",
        "--verify",
        "no-such-test-runner --all",
        "--model",
        &model,
    ]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("the gate could not run"), "{err}");
    assert!(err.contains("no-such-test-runner"), "{err}");
    assert!(err.contains("0 turns"), "{err}");
}

#[test]
fn the_models_commands_run_in_the_sandbox() {
    let s = Scratch::new();
    failing_repo(&s.workspace());
    let outside = s.dir.path().join("outside.txt");
    let write = format!(
        "echo planted > {}; echo inside > inside.txt",
        outside.display()
    );
    let out = one_command_then_done(&s, &write, "true");
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        !outside.exists(),
        "the model wrote outside the workspace: {err}"
    );
    assert!(s.workspace().join("inside.txt").exists(), "{err}");
}

/// The fixing script in each wire format a provider speaks, streamed (`--stream`) or not.
fn replies(provider: &str, stream: bool) -> Vec<Reply> {
    fixing_script()
        .iter()
        .map(|calls| {
            let (name, args) = &calls[0];
            let args = args.to_string();
            let (a, b) = args.split_at(args.len() / 2);
            match (provider, stream) {
                ("openai", false) => Reply::json(openai(None, calls)),
                ("anthropic", false) => Reply::json(anthropic(None, calls)),
                ("openai", true) => Reply::sse(&[
                    json!({"choices": [{"index": 0, "delta": {"role": "assistant", "tool_calls": [
                        {"index": 0, "id": "c1", "type": "function", "function": {"name": name, "arguments": a}}]}}]}),
                    json!({"choices": [{"index": 0, "delta": {"tool_calls": [
                        {"index": 0, "function": {"arguments": b}}]}}]}),
                ]),
                _ => Reply::sse(&[
                    json!({"type": "message_start", "message": {"usage": {"input_tokens": 1}}}),
                    json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "t1", "name": name, "input": {}}}),
                    json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": a}}),
                    json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": b}}),
                    json!({"type": "content_block_stop", "index": 0}),
                    json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 1}}),
                    json!({"type": "message_stop"}),
                ]),
            }
        })
        .collect()
}

#[test]
fn a_fix_run_over_each_wire_format_verifies_headless() {
    for provider in ["openai", "anthropic"] {
        for stream in [false, true] {
            let s = Scratch::new();
            failing_repo(&s.workspace());
            let server = Server::start(replies(provider, stream));
            let model = format!("{provider}:local-model");
            let mut args = vec![
                "run",
                "fix the failing test",
                "--verify",
                "sh test.sh",
                "--model",
                &model,
            ];
            if stream {
                args.push("--stream");
            }
            let out = s
                .corral(&args)
                .env("OPENAI_BASE_URL", format!("{}/v1", server.base))
                .env("OPENAI_API_KEY", "sk-test")
                .env("ANTHROPIC_BASE_URL", &server.base)
                .env("ANTHROPIC_API_KEY", "sk-ant-test")
                .stdin(std::process::Stdio::null())
                .output()
                .unwrap();
            let err = text(&out.stderr);
            assert_eq!(
                out.status.code(),
                Some(0),
                "{provider} stream={stream}: {err}"
            );
            assert!(
                err.contains("corral: verified"),
                "{provider} stream={stream}: {err}"
            );
            assert_eq!(server.received().len(), 5, "{provider} stream={stream}");
        }
    }
}

/// A task run is a surface a model drives: with a working undo record, what undo puts
/// back runs (`rm src -rf`) and what it cannot (the remote's history) is asked, refused
/// with nobody at a terminal.
#[test]
fn a_task_run_asks_by_effect_what_undo_cannot_put_back() {
    let s = Scratch::new();
    let ws = s.workspace();
    std::fs::create_dir(ws.join("src")).unwrap();
    std::fs::write(ws.join("src/lib.rs"), "work\n").unwrap();
    let model = script(
        &s,
        &[
            vec![("exec", json!({"argv": ["git", "push", "--force"]}))],
            vec![("exec", json!({"argv": ["rm", "src", "-rf"]}))],
            vec![("done", json!({}))],
        ],
    );
    let out = s.output(&[
        "run",
        "x",
        "--verify",
        "true",
        "--model",
        &model,
        "--max-steps",
        "3",
    ]);
    let err = text(&out.stderr);
    assert!(
        !ws.join("src").exists(),
        "the removal undo puts back ran: {err}"
    );
    let refused = text(&s.output(&["trace", "refused"]).stdout);
    assert!(refused.contains("git push --force"), "{refused}\n{err}");
}
