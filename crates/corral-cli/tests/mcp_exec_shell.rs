//! `exec` and `shell` through MCP: the observation as text, the fields as structured
//! content, each field there only when it says something.

use crate::mcp_common;
use mcp_common::*;
use serde_json::json;

#[tokio::test(flavor = "multi_thread")]
async fn exec_and_shell_run_and_report() {
    let session = Session::start(Some(PERMISSIVE), None).await;

    let exec = session
        .call("exec", json!({"argv": ["echo", "a;b && c"]}))
        .await;
    assert_eq!(exec.is_error, Some(false));
    assert!(text(&exec).contains("a;b && c"), "{}", text(&exec));
    assert_eq!(field(&exec, "status"), "exited");
    assert_eq!(field(&exec, "exit_code"), 0);
    assert!(field(&exec, "wall_ms").as_u64().is_some());
    // What says nothing is left out: every call would carry it.
    assert_eq!(field(&exec, "timed_out"), &serde_json::Value::Null);
    assert_eq!(field(&exec, "omitted_bytes"), &serde_json::Value::Null);
    let mut beside = exec.structured_content.clone().unwrap();
    beside.as_object_mut().unwrap().remove("observation");
    let beside = beside.to_string();
    assert!(
        beside.len() <= 60,
        "{} bytes beside the text: {beside}",
        beside.len()
    );

    std::fs::write(session.workspace().join("f.txt"), "x\ny\nz\n").unwrap();
    let shell = session
        .call(
            "shell",
            json!({"line": "cat f.txt | wc -l > n.txt && cat n.txt"}),
        )
        .await;
    assert_eq!(shell.is_error, Some(false), "{}", text(&shell));
    assert!(text(&shell).contains('3'), "{}", text(&shell));
    assert_eq!(field(&shell, "exit_code"), 0);

    let timed = session
        .call("exec", json!({"argv": ["sleep", "5"], "timeout": "200ms"}))
        .await;
    assert_eq!(field(&timed, "status"), "timed_out");
    assert_eq!(field(&timed, "timed_out"), true);

    // A result that left output out says how much.
    let long = session
        .call("exec", json!({"argv": ["seq", "1", "100000"]}))
        .await;
    assert!(
        field(&long, "omitted_bytes")
            .as_u64()
            .is_some_and(|n| n > 0),
        "{:?}",
        long.structured_content
    );
    session.client.cancel().await.unwrap();
}
