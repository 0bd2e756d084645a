//! When the client goes away, every live handle is killed and the run is closed.

use std::time::Duration;

use crate::mcp_common;
use mcp_common::*;
use serde_json::json;

#[tokio::test(flavor = "multi_thread")]
async fn disconnecting_kills_every_handle_and_closes_the_run() {
    let session = Session::start(Some(PERMISSIVE), None).await;
    let marker = marker(44);
    for _ in 0..2 {
        let started = session
            .call("shell_start", json!({"line": format!("sleep {marker}")}))
            .await;
        assert_eq!(started.is_error, Some(false), "{}", text(&started));
    }
    // A start returns at once; its processes follow.
    assert_eq!(
        corral_test_support::wait_for(&marker, 2, Duration::from_secs(5)),
        2
    );

    let Session { dir, client, .. } = session;
    client.cancel().await.unwrap();
    let left = survivors_after(&marker, Duration::from_secs(10));
    assert!(left.is_empty(), "still running: {left:?}");

    // The server recorded the run's end.
    wait_for_trace(dir.path(), "runs", |runs| runs[0]["ended_how"] == "closed");
}

/// Wait, bounded, until `corral trace WHAT --json` of the store in `dir` satisfies `done`.
fn wait_for_trace(dir: &std::path::Path, what: &str, done: impl Fn(&serde_json::Value) -> bool) {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let out = std::process::Command::new(corral_bin())
            .args(["trace", what, "--json"])
            .env("CORRAL_STORE", store(dir))
            .env("XDG_CACHE_HOME", dir.join("cache"))
            .output()
            .unwrap();
        let rows: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
        if done(&rows) {
            return;
        }
        assert!(std::time::Instant::now() < deadline, "{rows:#}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A client that closes its stdin in the middle of a 400 s foreground call: the call's
/// whole tree is killed within 200 ms (a command that ignores SIGTERM too), not left for
/// the server's drain time, and the step is recorded as cancelled.
#[tokio::test(flavor = "multi_thread")]
async fn a_client_that_leaves_mid_call_takes_the_call_with_it() {
    // Where this host's box is not whole (an ordinary user's) the call is asked about.
    let session = Session::start(Some(PERMISSIVE), Some(Answer::Accept)).await;
    let marker = marker(401);
    let line = format!("trap '' TERM; sleep {marker}; sleep {marker}");
    let Session { dir, client, .. } = session;
    let client = std::sync::Arc::new(client);
    let calling = {
        let client = client.clone();
        tokio::spawn(async move {
            let args = json!({"argv": ["sh", "-c", line]});
            client
                .call_tool(
                    rmcp::model::CallToolRequestParams::new("exec".to_string())
                        .with_arguments(args.as_object().unwrap().clone()),
                )
                .await
        })
    };
    // `sh` and its `sleep` carry the marker.
    assert_eq!(
        corral_test_support::wait_for(&marker, 2, Duration::from_secs(10)),
        2,
        "the call did not start"
    );
    calling.abort();
    let _ = calling.await;
    let client = std::sync::Arc::into_inner(client).expect("the call's task let go of it");
    let left_at = std::time::Instant::now();
    client.cancel().await.unwrap();
    let left = survivors_after(&marker, Duration::from_secs(3));
    let took = left_at.elapsed();
    assert!(left.is_empty(), "still running: {left:?}");
    // Not the drain time, nor the kill grace: the tree went with the client.
    assert!(
        took < Duration::from_millis(200),
        "the call outlived its client by {took:?}"
    );
    wait_for_trace(dir.path(), "steps", |steps| {
        steps[0]["outcome"] == "cancelled"
    });
}
