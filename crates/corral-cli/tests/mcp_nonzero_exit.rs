//! A command that fails is a normal result, not a tool error.

use crate::mcp_common;
use mcp_common::*;
use serde_json::json;

#[tokio::test(flavor = "multi_thread")]
async fn a_non_zero_exit_is_not_a_tool_error() {
    let session = Session::start(Some(PERMISSIVE), None).await;
    let result = session
        .call("exec", json!({"argv": ["ls", "no-such-file"]}))
        .await;
    assert_eq!(result.is_error, Some(false), "{}", text(&result));
    assert_eq!(field(&result, "status"), "exited");
    assert_eq!(field(&result, "exit_code"), 2);
    assert!(text(&result).contains("no-such-file"), "{}", text(&result));
    session.client.cancel().await.unwrap();
}
