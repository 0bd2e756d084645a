//! `corral mcp --undo-tool`: the model may put back what a call of its run changed. Off
//! by default (undo is the person's), and the model's undo is itself recorded, so a
//! person can undo it in turn.

use crate::mcp_common::{self, Answer, PERMISSIVE, Session};
use crate::undo_common::{answered, succeeded, undo};
use serde_json::json;

#[tokio::test(flavor = "multi_thread")]
async fn undo_is_not_offered_without_the_flag() {
    let session = Session::start(Some(PERMISSIVE), Some(Answer::Accept)).await;
    let ws = session.workspace();
    std::fs::write(ws.join("kept.txt"), "kept\n").unwrap();
    let tools = session.client.list_all_tools().await.unwrap();
    assert!(tools.iter().all(|t| t.name != "undo"));
    let rm = session.call("shell", json!({"line": "rm kept.txt"})).await;
    assert!(!ws.join("kept.txt").exists(), "{}", mcp_common::text(&rm));
    let call = session
        .client
        .call_tool(rmcp::model::CallToolRequestParams::new("undo"))
        .await;
    assert!(call.is_err(), "{call:?}");
    assert!(!ws.join("kept.txt").exists(), "nothing was put back");
    session.client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn the_model_undoes_its_last_call_and_a_person_can_undo_that() {
    let session =
        Session::start_with(Some(PERMISSIVE), Some(Answer::Accept), &["--undo-tool"]).await;
    let ws = session.workspace();
    std::fs::write(ws.join("work.txt"), "uncommitted work\n").unwrap();
    let tools = session.client.list_all_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "undo"));
    let rm = session
        .call(
            "shell",
            json!({"line": "rm work.txt && echo new > made.txt"}),
        )
        .await;
    answered(&rm);
    assert!(!ws.join("work.txt").exists());

    let dry = session.call("undo", json!({"dry_run": true})).await;
    assert!(
        mcp_common::text(&dry).contains("would restore work.txt"),
        "{}",
        mcp_common::text(&dry)
    );
    assert!(!ws.join("work.txt").exists(), "a dry run changes nothing");

    let undone = session.call("undo", json!({})).await;
    answered(&undone);
    assert_eq!(
        std::fs::read(ws.join("work.txt")).unwrap(),
        b"uncommitted work\n"
    );
    assert!(!ws.join("made.txt").exists());

    // The model's undo is a step of its own: the person takes it back.
    succeeded(&undo(&session, &[]));
    assert!(!ws.join("work.txt").exists());
    assert_eq!(std::fs::read(ws.join("made.txt")).unwrap(), b"new\n");
    session.client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn the_model_cannot_undo_over_a_persons_edit_or_another_runs_step() {
    let session =
        Session::start_with(Some(PERMISSIVE), Some(Answer::Accept), &["--undo-tool"]).await;
    let ws = session.workspace();
    std::fs::write(ws.join("notes.txt"), "mine\n").unwrap();
    let write = session
        .call("shell", json!({"line": "echo agent > notes.txt"}))
        .await;
    let step = mcp_common::field(&write, "step").as_i64().unwrap();
    // The person edits once what the call changed is recorded (a dry run waits for
    // that): an edit while the call's record is still being made is taken for the call's.
    succeeded(&undo(&session, &["--dry-run"]));
    std::fs::write(ws.join("notes.txt"), "edited by the person since\n").unwrap();
    let undone = session.call("undo", json!({"step": step})).await;
    assert_eq!(undone.is_error, Some(true), "{}", mcp_common::text(&undone));
    assert_eq!(
        std::fs::read(ws.join("notes.txt")).unwrap(),
        b"edited by the person since\n"
    );
    // A step the run never made (another run's, or none) is refused.
    let other = session.call("undo", json!({"step": step + 1000})).await;
    assert_eq!(other.is_error, Some(true), "{}", mcp_common::text(&other));
    session.client.cancel().await.unwrap();
}
