//! A rule that says *ask* asks the MCP client's user by elicitation; a yes runs the
//! command, a no (or a client that cannot ask) refuses it with how to allow it.

mod mcp_common;
use mcp_common::*;
use serde_json::json;

const ASK_TOUCH: &str =
    "tier = \"permissive\"\napproval = \"on-request\"\n[exec]\nask = [\"touch*\"]\n";

#[tokio::test(flavor = "multi_thread")]
async fn an_accepted_question_runs_the_command() {
    let session = Session::start(Some(ASK_TOUCH), Some(Answer::Accept)).await;
    let result = session
        .call("exec", json!({"argv": ["touch", "made"]}))
        .await;
    assert_eq!(result.is_error, Some(false), "{}", text(&result));
    assert!(session.workspace().join("made").exists());
    let questions = session.seen.lock().unwrap().questions.clone();
    assert_eq!(questions.len(), 1);
    assert!(
        questions[0].contains("Allow `touch made`"),
        "{}",
        questions[0]
    );
    session.client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_declined_question_refuses_the_command() {
    let session = Session::start(Some(ASK_TOUCH), Some(Answer::Decline)).await;
    let result = session
        .call("exec", json!({"argv": ["touch", "made"]}))
        .await;
    assert_eq!(result.is_error, Some(false), "{}", text(&result));
    assert_eq!(field(&result, "status"), "declined");
    assert_eq!(field(&result, "observation"), &json!(text(&result)));
    assert!(text(&result).contains("declined"), "{}", text(&result));
    assert!(text(&result).contains("corral.toml"), "{}", text(&result));
    assert!(!session.workspace().join("made").exists());
    let refused = session.trace(&["refused"]).to_string();
    assert!(refused.contains("mcp-client:corral-test"), "{refused}");
    session.client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_client_without_elicitation_is_not_asked() {
    let session = Session::start(Some(ASK_TOUCH), None).await;
    let result = session
        .call("exec", json!({"argv": ["touch", "made"]}))
        .await;
    assert_eq!(result.is_error, Some(false), "{}", text(&result));
    assert_eq!(field(&result, "status"), "declined");
    assert!(
        field(&result, "hint")
            .as_str()
            .unwrap()
            .contains("[exec] allow")
    );
    assert!(text(&result).contains("cannot ask"), "{}", text(&result));
    assert!(!session.workspace().join("made").exists());
    session.client.cancel().await.unwrap();
}
