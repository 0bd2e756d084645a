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
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let out = std::process::Command::new(corral_bin())
            .args(["trace", "runs", "--json"])
            .env("CORRAL_STORE", store(dir.path()))
            .output()
            .unwrap();
        let runs: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        if runs[0]["ended_how"] == "closed" {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "{runs:#}");
        std::thread::sleep(Duration::from_millis(50));
    }
}
