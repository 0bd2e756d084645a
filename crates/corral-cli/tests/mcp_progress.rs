//! A foreground call sends progress notifications: elapsed time, bytes, the last line.

use crate::mcp_common;
use mcp_common::*;
use serde_json::json;

#[tokio::test(flavor = "multi_thread")]
async fn progress_arrives_while_a_call_runs() {
    let session = Session::start(Some(PERMISSIVE), None).await;
    let result = session
        .call(
            "shell",
            json!({"line": "echo first-line && sleep 1.3 && echo done"}),
        )
        .await;
    assert_eq!(field(&result, "exit_code"), 0, "{}", text(&result));
    let progress = session.seen.lock().unwrap().progress.clone();
    assert!(
        (1..=4).contains(&progress.len()),
        "about two a second: {:?}",
        progress
    );
    let first = &progress[0];
    let message = first.message.as_deref().unwrap_or("");
    assert!(
        message.contains("bytes") && message.contains("first-line"),
        "{message}"
    );
    assert!(progress.windows(2).all(|w| w[0].progress < w[1].progress));
    session.client.cancel().await.unwrap();
}
