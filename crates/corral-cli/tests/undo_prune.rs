//! `corral trace prune` gives up the undo records of old runs, and removes the stored
//! content no kept record names; the last call can still be undone.

use serde_json::json;

use crate::common::{Scratch, text};
use crate::mcp_common::{self, Answer, PERMISSIVE, Session, field};
use crate::undo_common::{answered, corral_in, end_input, seq_of, stored, succeeded, undo};

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
    succeeded(&corral_in(dir.path(), &["shell", "echo x > other.txt"]));
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
    answered(&call);
    // Another corral prunes while the run goes on.
    let prune = [
        "trace",
        "prune",
        "--undo-keep-runs",
        "1",
        "--undo-keep-days",
        "0",
    ];
    succeeded(&corral_in(session.dir.path(), &prune));
    end_input(&session, handle, "").await;
    succeeded(&undo(&session, &[&seq_of(&session, "shell_start")]));
    assert_eq!(std::fs::read(ws.join("f.txt")).unwrap(), b"original\n");
    session.client.cancel().await.unwrap();
}
