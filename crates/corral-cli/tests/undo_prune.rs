//! `corral trace prune` gives up the undo records of old runs, and removes the stored
//! content no kept record names; the last call can still be undone.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::json;

use crate::common::{Scratch, text};
use crate::mcp_common::{self, Answer, PERMISSIVE, Session, field};

/// `corral ARGS` in the scratch `dir`'s workspace, against its store.
fn corral(dir: &Path, args: &[&str]) -> Output {
    Command::new(mcp_common::corral_bin())
        .args(args)
        .current_dir(dir.join("ws"))
        .env("CORRAL_STORE", mcp_common::store(dir))
        .env("CORRAL_TRUST_STORE", mcp_common::trust_store(dir))
        .output()
        .unwrap()
}

/// Whether any file under `dir` is `bytes`.
fn stored(dir: &Path, bytes: &[u8]) -> bool {
    std::fs::read_dir(dir).unwrap().flatten().any(|e| {
        let path = e.path();
        if path.is_dir() {
            stored(&path, bytes)
        } else {
            std::fs::read(&path).is_ok_and(|b| b == bytes)
        }
    })
}

#[test]
fn prune_gives_up_old_runs_records_and_what_only_they_named() {
    let s = Scratch::new();
    for text in ["one", "two", "three"] {
        let out = s.output(&["shell", &format!("echo {text} > a.txt")]);
        assert!(out.status.success(), "{}", crate::common::text(&out.stderr));
    }
    let blobs = s.dir.path().join("state/undo/blobs");
    assert!(stored(&blobs, b"one\n"));
    let out = s.output(&["trace", "prune", "--undo-keep-runs", "1"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("gave up the undo records of 2 runs"),
        "{}",
        text(&out.stdout)
    );
    assert!(!stored(&blobs, b"one\n"));
    assert!(stored(&blobs, b"two\n"));
    let out = s.output(&["undo"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        std::fs::read(s.workspace().join("a.txt")).unwrap(),
        b"two\n"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_prune_beside_a_live_run_keeps_what_only_that_runs_records_in_memory_name() {
    let dir = mcp_common::scratch(Some(PERMISSIVE));
    let ws = dir.path().join("ws");
    std::fs::write(ws.join("f.txt"), "original\n").unwrap();
    // An earlier run records the workspace: `f.txt` is stored before the live run starts.
    let out = corral(dir.path(), &["shell", "echo x > other.txt"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let session = Session::start_in(dir, Some(Answer::Accept), &[], None).await;
    // A handle whose start record names `f.txt` as it was; what it changed is written to
    // its step at its next poll.
    let started = session
        .call(
            "shell_start",
            json!({"line": "echo new > f.txt && cat", "stdin": true}),
        )
        .await;
    let handle = field(&started, "handle").as_u64().unwrap();
    while std::fs::read(ws.join("f.txt")).unwrap() != b"new\n" {
        std::thread::yield_now();
    }
    // A call of the same run records the workspace again, with `f.txt` as it is now.
    let call = session
        .call("shell", json!({"line": "echo y > g.txt"}))
        .await;
    assert_eq!(call.is_error, Some(false), "{}", mcp_common::text(&call));
    // Another corral prunes while the run goes on.
    let out = corral(
        session.dir.path(),
        &[
            "trace",
            "prune",
            "--undo-keep-runs",
            "1",
            "--undo-keep-days",
            "0",
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let wrote = session
        .call(
            "shell_write",
            json!({"handle": handle, "text": "", "eof": true}),
        )
        .await;
    assert_eq!(wrote.is_error, Some(false), "{}", mcp_common::text(&wrote));
    loop {
        let poll = session
            .call("shell_poll", json!({"handle": handle, "wait_ms": 5000}))
            .await;
        if field(&poll, "state") != "running" {
            break;
        }
    }
    let steps = session.trace(&["steps"]);
    let seq = steps
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["tool"] == "shell_start")
        .unwrap()["seq"]
        .to_string();
    let out = corral(session.dir.path(), &["undo", &seq]);
    assert!(
        out.status.success(),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    assert_eq!(std::fs::read(ws.join("f.txt")).unwrap(), b"original\n");
    session.client.cancel().await.unwrap();
}
