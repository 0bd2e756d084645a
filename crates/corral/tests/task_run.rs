//! A task run end to end: a provider on 127.0.0.1 answers from a script in its own wire
//! format; the model reads, runs the failing test, patches, says done; the gate decides.

use crate::common;
use crate::task_common;

use std::time::Duration;

use common::Fixture;
use corral::task::{
    Anthropic, Ending, HttpSettings, Model, OpenAiCompatible, ScriptedModel, TaskContract,
    Verification, drive,
};
use corral::trace::Store;
use corral::{Policy, Run, approve::ApproveAll};
use serde_json::{Value, json};
use task_common::*;

fn contract(fx: &Fixture) -> TaskContract {
    TaskContract::workspace(
        "the test suite is failing; find out why and fix it",
        fx.workspace(),
    )
    .with_verification(Verification::command(["sh", "test.sh"]))
    .max_steps(10)
}

fn open(fx: &Fixture, policy: Policy) -> Run {
    Run::builder(fx.workspace())
        .store(fx.store())
        .policy(policy)
        .approver(ApproveAll)
        .open()
        .unwrap()
}

fn quick() -> HttpSettings {
    HttpSettings {
        timeout: Duration::from_secs(30),
        retries: 2,
        backoff: Duration::from_millis(10),
        stream: false,
    }
}

/// The text of every tool result the model was sent, in order, from the last request.
fn tool_results(body: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for m in body["messages"].as_array().unwrap() {
        if m["role"] == "tool" {
            out.push(m["content"].as_str().unwrap().to_string());
        }
        if let Some(blocks) = m["content"].as_array() {
            for b in blocks.iter().filter(|b| b["type"] == "tool_result") {
                out.push(b["content"].as_str().unwrap().to_string());
            }
        }
    }
    out
}

fn verified_through(fx: &Fixture, model: &dyn Model, server: &Server) {
    let run = open(fx, Policy::permissive());
    let mut lines = Vec::new();
    let outcome = drive(&run, &contract(fx), model, &mut |e| {
        lines.push(format!("{e:?}"))
    })
    .unwrap();
    run.close().unwrap();
    assert!(outcome.verified, "{outcome:?}");
    assert_eq!(outcome.ending, Ending::Verified);
    assert_eq!(outcome.turns, 5);
    assert_eq!(
        outcome.summary.as_deref(),
        Some("add subtracted; it adds now")
    );
    assert_eq!(outcome.usage.input_tokens, 5 * 120);
    assert_eq!(
        std::fs::read_to_string(fx.workspace().join("lib.sh")).unwrap(),
        LIB.replace('-', "+")
    );
    let received = server.received();
    assert_eq!(received.len(), 5);
    // What the model read came back to it: the file, and the failing test's output.
    let results = tool_results(&received[4].body);
    assert!(results[1].contains("echo $(( $1 - $2 ))"), "{results:?}");
    assert!(results[2].contains("FAIL: add 2 3 = -1"), "{results:?}");
    assert!(results[3].contains("M lib.sh (+1 -1)"), "{results:?}");

    // The trace: five model turns, the tool calls as steps, the gate as a verify step.
    let store = Store::open(&fx.store()).unwrap();
    let turns = store.model_turns(&outcome.run_id).unwrap();
    assert_eq!(turns.len(), 5);
    assert!(turns.iter().all(|t| t.error.is_none()));
    let steps = store.steps(Some(&outcome.run_id), 20).unwrap();
    let tools: Vec<&str> = steps.iter().rev().map(|s| s.tool.as_str()).collect();
    assert_eq!(
        tools,
        ["list_dir", "read_file", "exec", "apply_patch", "verify"]
    );
    assert_eq!(steps[0].exit_code, Some(0));
}

#[test]
fn openai_compatible_provider_fixes_the_failing_test() {
    let fx = Fixture::new();
    failing_repo(&fx.workspace());
    let replies = fixing_script()
        .iter()
        .map(|calls| Reply::json(openai(None, calls)))
        .collect();
    let server = Server::start(replies);
    let model = OpenAiCompatible::new(
        "openai",
        format!("{}/v1", server.base),
        Some("sk-test".into()),
        "gpt-test",
    )
    .with_settings(quick());
    verified_through(&fx, &model, &server);
    let first = &server.received()[0];
    assert_eq!(first.path, "/v1/chat/completions");
    assert_eq!(first.header("authorization"), Some("Bearer sk-test"));
    assert_eq!(first.body["model"], "gpt-test");
    let names: Vec<&str> = first.body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    for tool in [
        "exec",
        "shell",
        "read_file",
        "write_file",
        "list_dir",
        "apply_patch",
        "done",
    ] {
        assert!(names.contains(&tool), "{tool} missing from {names:?}");
    }
}

#[test]
fn anthropic_provider_fixes_the_failing_test() {
    let fx = Fixture::new();
    failing_repo(&fx.workspace());
    let replies = fixing_script()
        .iter()
        .map(|calls| Reply::json(anthropic(Some("Looking."), calls)))
        .collect();
    let server = Server::start(replies);
    let model = Anthropic::new(&server.base, "ak-test", "claude-test").with_settings(quick());
    verified_through(&fx, &model, &server);
    let first = &server.received()[0];
    assert_eq!(first.path, "/v1/messages");
    assert_eq!(first.header("x-api-key"), Some("ak-test"));
    assert_eq!(first.header("anthropic-version"), Some("2023-06-01"));
    // Roles alternate: tool results travel in user messages.
    let received = server.received();
    let roles: Vec<&str> = received[4].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(
        roles,
        [
            "user",
            "assistant",
            "user",
            "assistant",
            "user",
            "assistant",
            "user",
            "assistant",
            "user"
        ]
    );
}

#[test]
fn streamed_answers_are_read_as_they_come() {
    let fx = Fixture::new();
    failing_repo(&fx.workspace());
    // The same script, streamed in OpenAI's chunks, tool-call arguments split in two.
    let replies = fixing_script()
        .iter()
        .map(|calls| {
            let (name, args) = &calls[0];
            let args = args.to_string();
            let (a, b) = args.split_at(args.len() / 2);
            Reply::sse(&[
                json!({"choices": [{"index": 0, "delta": {"role": "assistant", "tool_calls": [
                    {"index": 0, "id": "c1", "type": "function", "function": {"name": name, "arguments": a}}]}}]}),
                json!({"choices": [{"index": 0, "delta": {"tool_calls": [
                    {"index": 0, "function": {"arguments": b}}]}}]}),
                json!({"choices": [], "usage": {"prompt_tokens": 120, "completion_tokens": 30}}),
            ])
        })
        .collect();
    let server = Server::start(replies);
    let model = OpenAiCompatible::new("openai", format!("{}/v1", server.base), None, "local")
        .with_settings(HttpSettings {
            stream: true,
            ..quick()
        });
    verified_through(&fx, &model, &server);
    assert_eq!(server.received()[0].body["stream"], true);
    assert_eq!(server.received()[0].header("authorization"), None);
}

#[test]
fn anthropic_streams_too() {
    let fx = Fixture::new();
    failing_repo(&fx.workspace());
    let replies = fixing_script()
        .iter()
        .map(|calls| {
            let (name, args) = &calls[0];
            let args = args.to_string();
            let (a, b) = args.split_at(args.len() / 2);
            Reply::sse(&[
                json!({"type": "message_start", "message": {"usage": {"input_tokens": 120}}}),
                json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "t1", "name": name, "input": {}}}),
                json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": a}}),
                json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": b}}),
                json!({"type": "content_block_stop", "index": 0}),
                json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 30}}),
                json!({"type": "message_stop"}),
            ])
        })
        .collect();
    let server = Server::start(replies);
    let model = Anthropic::new(&server.base, "k", "claude").with_settings(HttpSettings {
        stream: true,
        ..quick()
    });
    verified_through(&fx, &model, &server);
}

#[test]
fn a_failing_gate_is_the_models_next_observation() {
    let fx = Fixture::new();
    failing_repo(&fx.workspace());
    let script: Vec<Vec<Call>> = vec![
        vec![("done", json!({"summary": "nothing to do"}))],
        vec![("apply_patch", json!({"patch": FIX}))],
        vec![("done", json!({}))],
    ];
    let server = Server::start(
        script
            .iter()
            .map(|c| Reply::json(openai(None, c)))
            .collect(),
    );
    let model = OpenAiCompatible::new("openai", format!("{}/v1", server.base), None, "m")
        .with_settings(quick());
    let run = open(&fx, Policy::permissive());
    let outcome = drive(&run, &contract(&fx), &model, &mut |_| {}).unwrap();
    run.close().unwrap();
    assert!(outcome.verified, "{outcome:?}");
    assert_eq!(outcome.turns, 3);

    let told = tool_results(&server.received()[1].body);
    assert_eq!(told.len(), 1);
    insta::assert_snapshot!(told[0].lines().next().unwrap(), @"The verification gate failed at phase 1 of 1 (sh test.sh): exit 1, expected 0. The run is not done.");
    assert!(told[0].contains("FAIL: add 2 3 = -1"), "{}", told[0]);
    assert!(told[0].ends_with("Find out why, fix it, and call done again."));

    // The failed phase left its two rows.
    let store = Store::open(&fx.store()).unwrap();
    let gate = store
        .sandbox_events_of_run(&outcome.run_id, "gate_")
        .unwrap();
    let kinds: Vec<&str> = gate.iter().map(|(_, k)| k.as_str()).collect();
    assert_eq!(kinds, ["gate_output", "gate_phase_failed"]);
    assert!(gate[0].0.detail.contains("FAIL: add 2 3 = -1"));
    assert_eq!(
        gate[1].0.detail,
        "phase 1 of 1 (sh test.sh): exit 1, expected 0"
    );
    assert_eq!(gate[1].0.mode, "workspace-write");
    assert!(!gate[1].0.network);
}

#[test]
fn a_denied_command_is_in_the_transcript_not_a_crash() {
    let fx = Fixture::new();
    failing_repo(&fx.workspace());
    let script: Vec<Vec<Call>> = vec![
        vec![("exec", json!({"argv": ["rm", "-f", "test.sh"]}))],
        vec![("exec", json!({"argv": ["sh", "-c", "rm -f test.sh"]}))],
        vec![("apply_patch", json!({"patch": FIX}))],
        vec![("done", json!({}))],
    ];
    let server = Server::start(
        script
            .iter()
            .map(|c| Reply::json(openai(None, c)))
            .collect(),
    );
    let model = OpenAiCompatible::new("openai", format!("{}/v1", server.base), None, "m")
        .with_settings(quick());
    let policy = Policy::permissive().layer("app").deny_exec("rm");
    let run = open(&fx, policy);
    let outcome = drive(&run, &contract(&fx), &model, &mut |_| {}).unwrap();
    run.close().unwrap();
    assert!(outcome.verified, "{outcome:?}");
    assert!(fx.workspace().join("test.sh").exists());
    let told = tool_results(&server.received()[2].body);
    assert_eq!(told.len(), 2);
    for t in &told {
        assert!(t.starts_with("error: refused by policy"), "{t}");
    }
}

#[test]
fn limits_end_a_run_unverified_and_say_which() {
    let fx = Fixture::new();
    failing_repo(&fx.workspace());
    let model = ScriptedModel::new(
        (0..5)
            .map(|_| {
                serde_json::from_value(
                    json!({"tool_calls": [{"name": "list_dir", "arguments": {}}]}),
                )
                .unwrap()
            })
            .collect(),
    );
    let run = open(&fx, Policy::permissive());
    let outcome = drive(&run, &contract(&fx).max_steps(3), &model, &mut |_| {}).unwrap();
    assert!(!outcome.verified);
    assert_eq!(outcome.ending, Ending::StepLimit { max_steps: 3 });
    assert!(outcome.verdict.is_none());
    assert_eq!(model.used(), 3);
}

/// The wall time holds while a call runs: a command that would outlast it is ended
/// (`cancelled`) when it runs out, and so is a gate that hangs.
#[test]
fn the_wall_time_ends_a_call_or_a_gate_in_flight() {
    let fx = Fixture::new();
    failing_repo(&fx.workspace());
    let limit = Duration::from_millis(1500);
    let sleeping: corral::task::ModelResponse = serde_json::from_value(
        json!({"tool_calls": [{"name": "exec", "arguments": {"argv": ["sleep", "300"]}}]}),
    )
    .unwrap();
    let run = open(&fx, Policy::permissive());
    let began = std::time::Instant::now();
    let mut events = Vec::new();
    let outcome = drive(
        &run,
        &contract(&fx).wall_time(limit),
        &ScriptedModel::new(vec![sleeping]),
        &mut |e| events.push(format!("{e:?}")),
    )
    .unwrap();
    assert_eq!(outcome.ending, Ending::WallTime { limit });
    assert!(
        began.elapsed() < Duration::from_secs(60),
        "{:?}",
        began.elapsed()
    );
    assert!(
        events.iter().any(|e| e.contains("cancelled")),
        "{events:#?}"
    );
    run.close().unwrap();

    let done: corral::task::ModelResponse =
        serde_json::from_value(json!({"tool_calls": [{"name": "done", "arguments": {}}]})).unwrap();
    let run = open(&fx, Policy::permissive());
    let began = std::time::Instant::now();
    let contract = TaskContract::workspace("wait", fx.workspace())
        .with_verification(Verification::command(["sleep", "300"]))
        .wall_time(limit);
    let outcome = drive(
        &run,
        &contract,
        &ScriptedModel::new(vec![done]),
        &mut |_| {},
    )
    .unwrap();
    assert_eq!(outcome.ending, Ending::WallTime { limit });
    assert!(
        began.elapsed() < Duration::from_secs(60),
        "{:?}",
        began.elapsed()
    );
    run.close().unwrap();
}

#[test]
fn a_provider_failure_ends_the_run_and_is_in_the_trace() {
    let fx = Fixture::new();
    failing_repo(&fx.workspace());
    let server = Server::start(vec![Reply::raw(
        401,
        r#"{"error":{"message":"Invalid API key"}}"#,
    )]);
    let model = OpenAiCompatible::new(
        "openrouter",
        format!("{}/api/v1", server.base),
        Some("bad".into()),
        "m",
    )
    .with_settings(quick());
    let run = open(&fx, Policy::permissive());
    let outcome = drive(&run, &contract(&fx), &model, &mut |_| {}).unwrap();
    run.close().unwrap();
    let Ending::ModelFailed { error } = &outcome.ending else {
        panic!("{outcome:?}");
    };
    assert_eq!(error.status, Some(401));
    let store = Store::open(&fx.store()).unwrap();
    let turns = store.model_turns(&outcome.run_id).unwrap();
    assert_eq!(turns.len(), 1);
    assert!(
        turns[0]
            .error
            .as_deref()
            .unwrap()
            .contains("Invalid API key")
    );
}

#[test]
fn a_contract_without_a_gate_is_refused() {
    let fx = Fixture::new();
    let run = open(&fx, Policy::permissive());
    let contract = TaskContract::workspace("anything", fx.workspace());
    let err = drive(&run, &contract, &ScriptedModel::new(vec![]), &mut |_| {}).unwrap_err();
    assert!(err.to_string().contains("no verification gate"), "{err}");
}

#[test]
fn the_gate_runs_sandboxed_whatever_the_runs_own_posture() {
    let fx = Fixture::new();
    let outside = fx.dir.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    // The run's own commands are not sandboxed (the default), the gate is.
    let run = open(&fx, Policy::permissive());
    let escape = format!("echo x > {}/f", outside.display());
    let phases = [
        Verification::command(["sh", "-c", "echo built > built.txt"]),
        Verification::command(["sh", "-c", escape.as_str()]),
        Verification::command(["sh", "-c", "echo never > never.txt"]),
    ];
    let c = contract(&fx);
    let verdict = run
        .verify(&phases, &c.gate_sandbox, c.gate_timeout)
        .unwrap();
    assert!(!verdict.passed);
    assert_eq!(
        verdict.phases.len(),
        2,
        "the phase after a failure does not run"
    );
    assert!(verdict.phases[0].passed);
    assert_eq!(verdict.failed().unwrap().phase, 2);
    assert!(
        fx.workspace().join("built.txt").exists(),
        "writes in the workspace are fine"
    );
    assert!(!outside.join("f").exists(), "writes outside it are not");
    assert!(!fx.workspace().join("never.txt").exists());
    assert!(
        verdict.summary().starts_with("failed at phase 2 of 3"),
        "{}",
        verdict.summary()
    );
    // The same command as a run's own call is not confined.
    let own = run
        .exec(&corral::ExecRequest::new(["sh", "-c", escape.as_str()]))
        .unwrap();
    assert!(own.status.success());
    assert!(outside.join("f").exists());
}
