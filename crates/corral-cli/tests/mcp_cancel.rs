//! A client's cancellation of a call ends the command's whole tree, and the trace says so.

use std::time::Duration;

use crate::mcp_common;
use mcp_common::*;
use serde_json::json;

#[tokio::test(flavor = "multi_thread")]
async fn cancelling_a_call_kills_its_tree() {
    let session = Session::start(Some(PERMISSIVE), None).await;
    let marker = marker(43);
    // Two stages, one of them a grandchild (under `timeout`), all carrying the marker.
    let line = format!("timeout 600 sleep {marker} | sleep {marker}");
    let call = session.call("shell", json!({"line": line}));
    // Dropping the call sends notifications/cancelled for it.
    assert!(
        tokio::time::timeout(Duration::from_millis(700), call)
            .await
            .is_err()
    );
    let left = survivors_after(&marker, Duration::from_secs(5));
    assert!(left.is_empty(), "still running: {left:?}");

    // The next call is served, and the trace records the cancelled one.
    let next = session.call("exec", json!({"argv": ["true"]})).await;
    assert_eq!(field(&next, "exit_code"), 0);
    let steps = session.trace(&["steps"]);
    let outcomes: Vec<&str> = steps
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["outcome"].as_str())
        .collect();
    assert!(outcomes.contains(&"cancelled"), "{steps:#}");
    session.client.cancel().await.unwrap();
}
