//! Every kind of hint a refusal gives works when followed literally: the rules it quotes,
//! written to the policy file it names, or the flag it names, given to `corral mcp`; then
//! the same call runs. Where no rule can lift a refusal, the hint says so and who decides,
//! and that one (a person, asked) does.

use crate::mcp_common;
use mcp_common::*;
use serde_json::{Value, json};

/// The TOML a hint ends with (`[exec]` then `allow = ["touch made"]`, on lines of their
/// own after a blank line), up to the next blank line; `None` where it gives none.
fn snippet(hint: &str) -> Option<String> {
    let lines: Vec<&str> = hint.lines().collect();
    let start = (1..lines.len()).find(|&i| {
        lines[i - 1].trim().is_empty()
            && lines[i].starts_with('[')
            && lines[i].ends_with(']')
            && lines.get(i + 1).is_some_and(|l| l.contains(" = "))
    })?;
    let end = (start..lines.len())
        .find(|&i| lines[i].trim().is_empty())
        .unwrap_or(lines.len());
    Some(lines[start..end].join("\n") + "\n")
}

/// The policy file a hint names: after "the user's ", up to the comma.
fn named_user_file(hint: &str) -> std::path::PathBuf {
    let after = hint
        .split_once("the user's ")
        .unwrap_or_else(|| panic!("no user file named: {hint}"))
        .1;
    after.split(',').next().unwrap().trim().into()
}

/// Paste `snippet` into `file`, which has none of its tables, as a person pastes it.
fn follow_rules(file: &std::path::Path, snippet: &str) {
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(file, snippet).unwrap();
}

fn status(result: &rmcp::model::CallToolResult) -> String {
    field(result, "status").as_str().unwrap_or("").to_string()
}

/// The call, refused with a hint giving rules; the rules written where the hint says; the
/// call again in a new session, where it runs.
async fn follow(policy: &str, tool: &str, args: Value, check: impl Fn(&std::path::Path)) {
    let session = Session::start(Some(policy), None).await;
    let refused = session.call(tool, args.clone()).await;
    let hint = text(&refused);
    assert!(
        matches!(status(&refused).as_str(), "refused" | "declined"),
        "{hint}"
    );
    let rules = snippet(&hint).unwrap_or_else(|| panic!("no rule given: {hint}"));
    let file = named_user_file(&hint);
    let dir = session.end().await;
    follow_rules(&file, &rules);
    let session = Session::start_in(dir, None, &[], None).await;
    let ran = session.call(tool, args).await;
    assert_eq!(status(&ran), "exited", "after {rules}: {}", text(&ran));
    check(&session.workspace());
    session.client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_default_that_asks_is_lifted_by_the_exact_rule_quoted() {
    let policy = "tier = \"default\"\napproval = \"on-request\"\n";
    follow(policy, "exec", json!({"argv": ["touch", "made*"]}), |ws| {
        assert!(ws.join("made*").exists())
    })
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_risky_variable_is_lifted_by_its_env_rule_not_an_exec_rule() {
    follow(
        PERMISSIVE,
        "shell",
        json!({"line": "PYTHONPATH=. python3 -c 'open(\"env_ran\", \"w\")'"}),
        |ws| assert!(ws.join("env_ran").exists()),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_sandbox_write_denial_is_lifted_by_the_flag_it_names() {
    let session = Session::start(Some(PERMISSIVE), None).await;
    let outside = session.dir.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    let line = format!("echo hi > {}/out", outside.display());
    let refused = session.call("shell", json!({ "line": line })).await;
    let hint = text(&refused);
    assert!(!outside.join("out").exists(), "{hint}");
    let flag = hint
        .split('`')
        .find(|q| q.starts_with("--writable "))
        .unwrap_or_else(|| panic!("no --writable flag named: {hint}"))
        .to_string();
    let (name, value) = flag.split_once(' ').unwrap();
    let dir = session.end().await;
    let session = Session::start_in(dir, None, &[name, value], None).await;
    let ran = session.call("shell", json!({ "line": line })).await;
    assert_eq!(status(&ran), "exited", "with {flag}: {}", text(&ran));
    assert!(outside.join("out").exists(), "with {flag}: {}", text(&ran));
    session.client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_program_that_needs_a_terminal_runs_as_its_hint_says() {
    let session = Session::start(Some(PERMISSIVE), None).await;
    std::fs::write(session.workspace().join("notes"), "a page\n").unwrap();
    let refused = session
        .call("exec", json!({"argv": ["less", "notes"]}))
        .await;
    let hint = text(&refused);
    assert_eq!(status(&refused), "refused", "{hint}");
    assert!(
        hint.contains("shell_start") && hint.contains("tty: true"),
        "{hint}"
    );
    let started = session
        .call("shell_start", json!({"line": "less notes", "tty": true}))
        .await;
    assert_eq!(status(&started), "running", "{}", text(&started));
    let handle = field(&started, "handle").as_u64().unwrap();
    session
        .call("shell_kill", json!({ "handle": handle }))
        .await;
    session.client.cancel().await.unwrap();
}

/// A built-in ask is lifted by no rule: the hint says so, gives none, and names who
/// decides; the person, asked, lets it run.
#[tokio::test(flavor = "multi_thread")]
async fn a_built_in_ask_names_who_decides_and_quotes_no_rule() {
    let session = Session::start(Some(PERMISSIVE), None).await;
    let ws = session.workspace();
    let init = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(&ws)
        .status()
        .unwrap();
    assert!(init.success());
    // An ignored file: the undo record leaves it out, so removing it stays asked.
    std::fs::write(ws.join(".gitignore"), "untracked\n").unwrap();
    std::fs::write(ws.join("untracked"), "work\n").unwrap();
    let line = "git clean -fdx";
    let declined = session.call("shell", json!({ "line": line })).await;
    let hint = text(&declined);
    assert_eq!(status(&declined), "declined", "{hint}");
    assert!(snippet(&hint).is_none(), "{hint}");
    assert!(hint.contains("no rule lifts that"), "{hint}");
    assert!(hint.contains("a person approves it"), "{hint}");
    assert!(ws.join("untracked").exists());
    let dir = session.end().await;
    let session = Session::start_in(dir, Some(Answer::Accept), &[], None).await;
    let ran = session.call("shell", json!({ "line": line })).await;
    assert_eq!(status(&ran), "exited", "{}", text(&ran));
    assert!(!ws.join("untracked").exists(), "{}", text(&ran));
    session.client.cancel().await.unwrap();
}
