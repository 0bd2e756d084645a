//! Background handles: start, poll with wait_ms, kill; and a call that yields into a handle.

use crate::mcp_common;
use mcp_common::*;
use serde_json::json;

#[tokio::test(flavor = "multi_thread")]
async fn start_poll_kill() {
    let session = Session::start(Some(PERMISSIVE), None).await;
    let marker = marker(41);

    let started = session
        .call(
            "shell_start",
            json!({"line": format!("echo ready && sleep {marker}")}),
        )
        .await;
    assert_eq!(started.is_error, Some(false), "{}", text(&started));
    let handle = field(&started, "handle").as_u64().unwrap();
    assert_eq!(field(&started, "state"), "running");

    let polled = session
        .call("shell_poll", json!({"handle": handle, "wait_ms": 3000}))
        .await;
    assert!(text(&polled).contains("ready"), "{}", text(&polled));
    assert_eq!(field(&polled, "state"), "running");

    let killed = session.call("shell_kill", json!({"handle": handle})).await;
    assert_eq!(field(&killed, "state"), "killed", "{}", text(&killed));
    assert!(survivors_after(&marker, std::time::Duration::from_secs(5)).is_empty());

    // The handle's end is announced to the client as a log message.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        let logs = session.seen.lock().unwrap().logs.clone();
        if let Some(log) = logs.iter().find(|l| l["handle"] == handle) {
            assert_eq!(log["state"], "killed", "{log}");
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no announcement: {logs:?}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }

    let unknown = session.call("shell_poll", json!({"handle": 999})).await;
    assert_eq!(unknown.is_error, Some(true));
    assert!(text(&unknown).contains("999"), "{}", text(&unknown));
    session.client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_call_that_yields_becomes_a_handle() {
    let session = Session::start(Some(PERMISSIVE), None).await;
    let marker = marker(42);
    let result = session
        .call("exec", json!({"argv": ["sleep", marker], "yield_ms": 200}))
        .await;
    assert_eq!(result.is_error, Some(false), "{}", text(&result));
    assert_eq!(field(&result, "status"), "running", "{}", text(&result));
    let handle = field(&result, "handle").as_u64().unwrap();
    let killed = session.call("shell_kill", json!({"handle": handle})).await;
    assert_eq!(field(&killed, "state"), "killed");
    assert!(survivors_after(&marker, std::time::Duration::from_secs(5)).is_empty());
    session.client.cancel().await.unwrap();
}

/// `shell_signal` over MCP: Ctrl-C's INT reaches a handle's trap and the handle goes on.
#[tokio::test(flavor = "multi_thread")]
async fn a_signal_reaches_a_handle_and_it_goes_on() {
    let session = Session::start(Some(PERMISSIVE), None).await;
    let started = session
        .call(
            "shell_start",
            json!({"line": "bash -c 'trap \"echo got INT\" INT; echo ready; while :; do sleep 0.05; done'"}),
        )
        .await;
    let handle = field(&started, "handle").as_u64().unwrap();
    let ready = session
        .call("shell_poll", json!({"handle": handle, "wait_ms": 5000}))
        .await;
    assert!(text(&ready).contains("ready"), "{}", text(&ready));
    let signalled = session
        .call("shell_signal", json!({"handle": handle, "signal": "INT"}))
        .await;
    let mut seen = text(&signalled);
    if !seen.contains("got INT") {
        let more = session
            .call("shell_poll", json!({"handle": handle, "wait_ms": 5000}))
            .await;
        seen.push_str(&text(&more));
    }
    assert!(seen.contains("got INT"), "{seen}");
    assert_eq!(
        field(&signalled, "state"),
        "running",
        "{}",
        text(&signalled)
    );
    session.call("shell_kill", json!({"handle": handle})).await;
    session.client.cancel().await.unwrap();
}
