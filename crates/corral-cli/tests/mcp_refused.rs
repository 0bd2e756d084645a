//! A refused request is a tool error whose text says what to do instead; nothing runs.

mod mcp_common;
use mcp_common::*;
use serde_json::json;

#[tokio::test(flavor = "multi_thread")]
async fn grammar_and_policy_refusals_are_tool_errors() {
    let policy = format!("{PERMISSIVE}[exec]\ndeny = [\"rm\"]\n");
    let session = Session::start(Some(&policy), None).await;

    let expansion = session.call("shell", json!({"line": "echo $HOME"})).await;
    assert_eq!(expansion.is_error, Some(true));
    assert!(text(&expansion).contains("refused"), "{}", text(&expansion));

    std::fs::write(session.workspace().join("keep"), "").unwrap();
    let denied = session.call("exec", json!({"argv": ["rm", "keep"]})).await;
    assert_eq!(denied.is_error, Some(true));
    assert!(text(&denied).contains("rm"), "{}", text(&denied));
    assert!(session.workspace().join("keep").exists());

    let bad = session.call("exec", json!({"argv": []})).await;
    assert_eq!(bad.is_error, Some(true));
    assert!(text(&bad).contains("argv"), "{}", text(&bad));
    session.client.cancel().await.unwrap();
}
