//! A rule that says *ask* asks the MCP client's user by elicitation (on 2026-07-28, as an
//! input-required round); a yes runs the command, a no (or a client that cannot ask)
//! refuses it with how to allow it.

use crate::mcp_common;
use mcp_common::*;
use serde_json::json;

const ASK_TOUCH: &str =
    "tier = \"permissive\"\napproval = \"on-request\"\n[exec]\nask = [\"touch*\"]\n";

#[tokio::test(flavor = "multi_thread")]
async fn an_accepted_question_runs_the_command() {
    let session = Session::start(Some(ASK_TOUCH), Some(Answer::Accept)).await;
    // Through `initialize`: the question is asked in the middle of the call.
    let info = session
        .client
        .peer_info()
        .expect("the server said who it is");
    assert_eq!(info.protocol_version.as_str(), "2025-11-25");
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
    // An ask rule asked: no allow rule lifts it, so the hint gives none and names it.
    assert!(
        !text(&result).contains("[exec]\nallow"),
        "{}",
        text(&result)
    );
    assert!(
        text(&result).contains("the ask rule \"touch*\""),
        "{}",
        text(&result)
    );
    assert!(text(&result).contains("cannot ask"), "{}", text(&result));
    assert!(!session.workspace().join("made").exists());
    session.client.cancel().await.unwrap();
}

/// On 2026-07-28 the server may not ask in the middle of a call: the call ends with the
/// question, the client asks its person and sends the call again with the answer, and
/// only then does the command run — once.
#[tokio::test(flavor = "multi_thread")]
async fn on_2026_07_28_the_question_is_an_input_required_round() {
    let session = Session::start_modern(Some(ASK_TOUCH), Some(Answer::Accept)).await;
    let info = session
        .client
        .peer_info()
        .expect("the server said who it is");
    assert_eq!(info.protocol_version.as_str(), "2026-07-28");
    let result = session
        .call(
            "shell",
            json!({"line": "touch made && echo ran >> runs.txt"}),
        )
        .await;
    assert_eq!(result.is_error, Some(false), "{}", text(&result));
    assert_eq!(field(&result, "exit_code"), 0, "{}", text(&result));
    assert_eq!(
        std::fs::read_to_string(session.workspace().join("runs.txt")).unwrap(),
        "ran\n",
        "the command ran exactly once"
    );
    let questions = session.seen.lock().unwrap().questions.clone();
    assert_eq!(questions.len(), 1, "{questions:?}");
    assert!(
        questions[0].contains("Allow `touch made`"),
        "{}",
        questions[0]
    );

    let declined = Session::start_modern(Some(ASK_TOUCH), Some(Answer::Decline)).await;
    let result = declined
        .call("exec", json!({"argv": ["touch", "made"]}))
        .await;
    assert_eq!(field(&result, "status"), "declined", "{}", text(&result));
    assert!(!declined.workspace().join("made").exists());
    session.client.cancel().await.unwrap();
    declined.client.cancel().await.unwrap();
}

/// An answer that comes with no `requestState` this server issued is refused, and the
/// command does not run.
#[tokio::test(flavor = "multi_thread")]
async fn an_answer_corral_did_not_ask_for_is_refused() {
    let session = Session::start_modern(Some(ASK_TOUCH), Some(Answer::Accept)).await;
    let mut answers = std::collections::BTreeMap::new();
    answers.insert(
        "corral-approval-0000000000000000".to_string(),
        json!({"action": "accept", "content": {"for_session": true}}),
    );
    let forged = session
        .client
        .call_tool_once(
            rmcp::model::CallToolRequestParams::new("exec")
                .with_arguments(
                    json!({"argv": ["touch", "made"]})
                        .as_object()
                        .unwrap()
                        .clone(),
                )
                .with_input_responses(answers)
                .with_request_state("corral-round-forged"),
        )
        .await;
    let message = format!("{forged:?}");
    assert!(forged.is_err(), "{message}");
    assert!(message.contains("requestState"), "{message}");
    assert!(!session.workspace().join("made").exists());
    session.client.cancel().await.unwrap();
}
