//! `corral mcp` takes the same sandbox flags as `corral exec`, and they hold for every
//! call it serves.

use crate::mcp_common;
use mcp_common::*;
use serde_json::json;

#[tokio::test(flavor = "multi_thread")]
async fn a_read_only_server_writes_nothing() {
    let session = Session::start_with(Some(PERMISSIVE), None, &["--sandbox", "read-only"]).await;
    let result = session
        .call("exec", json!({"argv": ["touch", "made-by-the-model"]}))
        .await;
    assert_eq!(result.is_error, Some(false), "{}", text(&result));
    assert_ne!(field(&result, "exit_code"), 0, "{}", text(&result));
    assert!(text(&result).contains("read-only"), "{}", text(&result));
    assert!(!session.workspace().join("made-by-the-model").exists());
    session.client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_bad_sandbox_flag_stops_the_server_before_it_serves() {
    let out = std::process::Command::new(corral_bin())
        .args(["mcp", "--sandbox", "sometimes"])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("read-only, workspace-write, full or external"),
        "{err}"
    );
}

/// The parent of a command's first process, as the command sees it.
async fn parent_seen(session: &Session) -> String {
    let result = session
        .call("exec", json!({"argv": ["cat", "/proc/self/stat"]}))
        .await;
    let stat = text(&result);
    let after = &stat[stat.rfind(')').unwrap() + 1..];
    after.split_whitespace().nth(1).unwrap().to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_pid_namespace_can_be_turned_off() {
    let on = Session::start_with(Some(PERMISSIVE), None, &[]).await;
    let off = Session::start_with(Some(PERMISSIVE), None, &["--pid-namespace", "off"]).await;
    let (with, without) = (parent_seen(&on).await, parent_seen(&off).await);
    // Outside a namespace of its own the command's parent is the server, never 0.
    assert_ne!(without, "0");
    if host_gives_pid_namespaces() {
        assert_eq!(with, "0", "the command's parent is outside its namespace");
    }
    on.client.cancel().await.unwrap();
    off.client.cancel().await.unwrap();
}

/// Whether calls on this host get a PID namespace, as `corral exec --json` reports it.
fn host_gives_pid_namespaces() -> bool {
    let dir = scratch(Some(PERMISSIVE));
    let out = std::process::Command::new(corral_bin())
        .args(["exec", "--yes", "--json", "--workspace"])
        .arg(dir.path().join("ws"))
        .args(["--", "true"])
        .env("CORRAL_STORE", store(dir.path()))
        .env("XDG_CACHE_HOME", dir.path().join("cache"))
        .env("CORRAL_TRUST_STORE", trust_store(dir.path()))
        .output()
        .unwrap();
    let outcome: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    outcome["containment"]
        .as_str()
        .is_some_and(|c| c.ends_with("+pid-ns"))
}
