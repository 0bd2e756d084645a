//! A refused request is an ordinary result (`status: refused`, with the rule, the layer and
//! a hint) whose text says what to do instead; nothing runs. A request corral cannot
//! understand stays a tool error.

use crate::mcp_common;
use mcp_common::*;
use serde_json::json;

#[tokio::test(flavor = "multi_thread")]
async fn grammar_and_policy_refusals_are_results_and_bad_requests_tool_errors() {
    let policy = format!("{PERMISSIVE}[exec]\ndeny = [\"rm\"]\n[write]\nask = [\"**/out.txt\"]\n");
    let session = Session::start(Some(&policy), None).await;

    // A line no shell could parse is refused by the grammar, whatever the host shell.
    let unparsable = session
        .call("shell", json!({"line": "echo 'unterminated"}))
        .await;
    assert_eq!(unparsable.is_error, Some(false));
    assert_eq!(field(&unparsable, "status"), "refused");
    assert_eq!(field(&unparsable, "layer"), "grammar");
    assert!(text(&unparsable).contains("quote"), "{}", text(&unparsable));

    // Bash beyond the grammar runs under the host shell where the sandbox holds it, and
    // says so; elsewhere the grammar refuses it with what to do instead.
    let expansion = session.call("shell", json!({"line": "echo $HOME"})).await;
    assert_eq!(expansion.is_error, Some(false));
    if text(&expansion).starts_with("[ran under the host shell") {
        assert_eq!(field(&expansion, "exit_code"), 0, "{}", text(&expansion));
    } else {
        assert_eq!(
            field(&expansion, "status"),
            "refused",
            "{}",
            text(&expansion)
        );
        assert_eq!(field(&expansion, "layer"), "grammar");
    }

    std::fs::write(session.workspace().join("keep"), "").unwrap();
    let denied = session.call("exec", json!({"argv": ["rm", "keep"]})).await;
    assert_eq!(denied.is_error, Some(false));
    assert_eq!(field(&denied, "status"), "refused");
    assert_eq!(field(&denied, "rule"), "rm");
    // What to do instead is in the text the model reads, once: not repeated as a field.
    assert!(text(&denied).contains("no approval"), "{}", text(&denied));
    assert!(
        denied
            .structured_content
            .as_ref()
            .unwrap()
            .get("hint")
            .is_none()
    );
    assert!(text(&denied).contains("rm"), "{}", text(&denied));
    assert!(session.workspace().join("keep").exists());

    // A write an ask rule holds, with no one to ask: the hint names that rule (an allow
    // would not lift it).
    let write = session
        .call("shell", json!({"line": "echo hi > out.txt"}))
        .await;
    assert_eq!(write.is_error, Some(false), "{}", text(&write));
    assert_eq!(field(&write, "status"), "declined");
    assert!(
        text(&write).contains("the ask rule \"**/out.txt\""),
        "{}",
        text(&write)
    );
    assert!(!session.workspace().join("out.txt").exists());

    let bad = session.call("exec", json!({"argv": []})).await;
    assert_eq!(bad.is_error, Some(true));
    assert!(text(&bad).contains("argv"), "{}", text(&bad));
    session.client.cancel().await.unwrap();
}
