//! What a handle changes belongs to its `shell_start` step: recorded at each poll while
//! it runs and at its end, so `corral undo STEP` puts it all back.

use std::path::Path;

use crate::common::text;
use crate::mcp_common::{self, Answer, PERMISSIVE, Session, field};
use crate::undo_common::{answered, end_input, seq_of, succeeded, undo};
use serde_json::json;

fn read(ws: &Path, name: &str) -> Option<String> {
    std::fs::read_to_string(ws.join(name)).ok()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_handles_changes_are_its_start_steps_and_are_undone() {
    let session = Session::start_with(Some(PERMISSIVE), Some(Answer::Accept), &[]).await;
    let ws = session.workspace();
    std::fs::write(ws.join("old.txt"), "precious\n").unwrap();
    std::fs::write(ws.join("edited.txt"), "mine\n").unwrap();
    let started = session
        .call(
            "shell_start",
            json!({
                // `later.txt` is made only once the input has ended, never before.
                "line": "rm old.txt && echo agent > edited.txt && echo ready && cat > /dev/null && echo typed > later.txt",
                "stdin": true,
            }),
        )
        .await;
    answered(&started);
    let handle = field(&started, "handle").as_u64().unwrap();
    let seq = seq_of(&session, "shell_start");
    let mut seen = String::new();
    while !seen.contains("ready") {
        let poll = session
            .call("shell_poll", json!({"handle": handle, "wait_ms": 5000}))
            .await;
        assert_eq!(
            field(&poll, "state"),
            "running",
            "{}",
            mcp_common::text(&poll)
        );
        seen.push_str(&mcp_common::text(&poll));
    }
    // While it runs, what it changed so far is already its step's.
    let dry = undo(&session, &[&seq, "--dry-run"]);
    let listed = text(&dry.stdout);
    assert!(listed.contains("would restore  old.txt"), "{listed}");
    assert!(listed.contains("would restore  edited.txt"), "{listed}");
    assert!(!listed.contains("later.txt"), "{listed}");

    // What it does after the last poll is recorded at its end.
    end_input(&session, handle, "typed\n").await;
    assert_eq!(read(&ws, "later.txt").as_deref(), Some("typed\n"));

    succeeded(&undo(&session, &[&seq]));
    assert_eq!(read(&ws, "old.txt").as_deref(), Some("precious\n"));
    assert_eq!(read(&ws, "edited.txt").as_deref(), Some("mine\n"));
    assert_eq!(read(&ws, "later.txt"), None);
    session.client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_call_that_yields_into_a_handle_is_recorded_as_one() {
    let session = Session::start_with(Some(PERMISSIVE), Some(Answer::Accept), &[]).await;
    let ws = session.workspace();
    std::fs::write(ws.join("old.txt"), "precious\n").unwrap();
    let result = session
        .call("shell", json!({"line": "rm old.txt", "yield_ms": 5000}))
        .await;
    answered(&result);
    assert!(!ws.join("old.txt").exists());
    succeeded(&undo(&session, &[]));
    assert_eq!(read(&ws, "old.txt").as_deref(), Some("precious\n"));
    session.client.cancel().await.unwrap();
}
