//! Over MCP, a change a call made to a file a host program runs is asked of the session
//! that made the call, once, at the call's end, with its diff: accepted, it is applied;
//! declined, the workspace keeps the person's version and the change waits for `corral
//! review`; too long to show, it is not offered at all.

use crate::mcp_common;
use mcp_common::*;
use serde_json::json;

/// A session answering every question with `answer` writes `content` to `.mcp.json`,
/// which holds the person's version: what the file holds after, and what was asked.
async fn write_mcp_json(answer: Answer, content: &str) -> (String, Vec<String>, tempfile::TempDir) {
    let session = Session::start(Some(PERMISSIVE), Some(answer)).await;
    let ws = session.workspace();
    std::fs::write(ws.join(".mcp.json"), "person\n").unwrap();
    let line = format!("printf '{content}' > .mcp.json");
    session.call("shell", json!({ "line": line })).await;
    let questions = session.seen.lock().unwrap().questions.clone();
    let dir = session.end().await;
    let now = std::fs::read_to_string(dir.path().join("ws/.mcp.json")).unwrap();
    (now, questions, dir)
}

#[tokio::test(flavor = "multi_thread")]
async fn an_accepted_held_change_is_applied_and_a_declined_one_waits() {
    let (now, questions, _dir) = write_mcp_json(Answer::Accept, "box\\n").await;
    let held: Vec<&String> = questions
        .iter()
        .filter(|q| q.contains("Apply the call's change to .mcp.json"))
        .collect();
    assert_eq!(held.len(), 1, "{questions:?}");
    assert!(held[0].contains("+box"), "the diff is shown: {}", held[0]);
    assert_eq!(now, "box\n");

    let (now, questions, dir) = write_mcp_json(Answer::Decline, "box\\n").await;
    assert_eq!(now, "person\n");
    assert!(
        questions.iter().any(|q| q.contains(".mcp.json")),
        "{questions:?}"
    );
    let held = corral::HeldStore::beside_trace(&store(dir.path()))
        .list()
        .unwrap();
    assert_eq!(held.len(), 1, "{held:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_diff_too_long_to_show_is_not_offered() {
    let long: String = (0..400).map(|i| format!("line {i}\\n")).collect();
    let (now, questions, dir) = write_mcp_json(Answer::Accept, &long).await;
    assert_eq!(now, "person\n");
    assert!(
        !questions.iter().any(|q| q.contains(".mcp.json")),
        "{questions:?}"
    );
    let held = corral::HeldStore::beside_trace(&store(dir.path()))
        .list()
        .unwrap();
    assert_eq!(held.len(), 1, "{held:?}");
}
