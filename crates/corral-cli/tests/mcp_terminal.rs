//! Terminal sessions over MCP: `shell_start` with `tty: true`, then `shell_write`,
//! `shell_keys` and `shell_screen` against a real bash.

use crate::mcp_common;
use std::time::{Duration, Instant};

use mcp_common::*;
use rmcp::model::CallToolResult;
use serde_json::{Value, json};

/// The text of `first`, and of polls after it, until it contains `want` (or 10 s pass).
async fn until(session: &Session, handle: u64, first: CallToolResult, want: &str) -> String {
    assert_eq!(first.is_error, Some(false), "{}", text(&first));
    let mut seen = text(&first);
    let deadline = Instant::now() + Duration::from_secs(10);
    while !seen.contains(want) {
        assert!(Instant::now() < deadline, "no {want:?} in {seen:?}");
        let polled = session
            .call("shell_poll", json!({"handle": handle, "wait_ms": 500}))
            .await;
        seen.push_str(&text(&polled));
    }
    seen
}

#[tokio::test(flavor = "multi_thread")]
async fn a_bash_session_on_a_terminal() {
    let session = Session::start(Some(PERMISSIVE), Some(Answer::Accept)).await;

    let tools = session.client.list_all_tools().await.unwrap();
    for name in ["shell_write", "shell_keys", "shell_screen"] {
        assert!(tools.iter().any(|t| t.name == name), "no {name}");
    }

    let started = session
        .call(
            "shell_start",
            json!({"line": "bash --norc --noprofile", "tty": true, "rows": 24, "cols": 80}),
        )
        .await;
    assert_eq!(started.is_error, Some(false), "{}", text(&started));
    let handle = field(&started, "handle").as_u64().unwrap();
    assert!(text(&started).contains("shell_write"), "{}", text(&started));

    // What the program printed comes back with the write.
    let wrote = session
        .call(
            "shell_write",
            json!({"handle": handle, "text": "echo $((6*7))\n", "yield_ms": 2000}),
        )
        .await;
    assert_eq!(field(&wrote, "handle"), handle);
    assert_eq!(field(&wrote, "state"), "running", "{}", text(&wrote));
    let seen = until(&session, handle, wrote, "42").await;
    assert!(!seen.contains('\u{1b}'), "escapes are stripped: {seen:?}");

    // C-c interrupts the foreground job; the shell answers again.
    let marker = marker(61);
    let slept = session
        .call(
            "shell_write",
            json!({"handle": handle, "text": format!("sleep {marker}\n")}),
        )
        .await;
    assert_eq!(slept.is_error, Some(false), "{}", text(&slept));
    let deadline = Instant::now() + Duration::from_secs(10);
    while processes_with(&marker).is_empty() {
        assert!(Instant::now() < deadline, "sleep never started");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let keyed = session
        .call("shell_keys", json!({"handle": handle, "keys": ["C-c"]}))
        .await;
    assert_eq!(keyed.is_error, Some(false), "{}", text(&keyed));
    assert!(survivors_after(&marker, Duration::from_secs(5)).is_empty());
    let after = session
        .call(
            "shell_write",
            json!({"handle": handle, "text": "echo done-$((1+1))\n", "yield_ms": 2000}),
        )
        .await;
    until(&session, handle, after, "done-2").await;

    // An unknown key is refused with the names.
    let bad = session
        .call(
            "shell_keys",
            json!({"handle": handle, "keys": ["C-Banana"]}),
        )
        .await;
    assert_eq!(bad.is_error, Some(true), "{}", text(&bad));

    // The screen shows the prompt lines as a person would see them.
    let screen = session
        .call("shell_screen", json!({"handle": handle}))
        .await;
    assert_eq!(screen.is_error, Some(false), "{}", text(&screen));
    assert_eq!(field(&screen, "rows"), 24);
    assert_eq!(field(&screen, "cols"), 80);
    assert_eq!(field(&screen, "state"), "running");
    assert!(field(&screen, "cursor")["row"].is_u64(), "{screen:?}");
    let lines: Vec<&str> = field(&screen, "lines")
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    // bash's default prompt (`bash-5.2$ `, `#` for root); text typed before it was drawn
    // is echoed on a line of its own.
    let at = lines
        .iter()
        .position(|l| l.starts_with("bash-") && l.ends_with(" echo $((6*7))"))
        .unwrap_or_else(|| panic!("no prompt line in {lines:?}"));
    assert_eq!(lines.get(at + 1), Some(&"42"), "{lines:?}");
    assert!(lines.last().unwrap().starts_with("bash-"), "{lines:?}");
    assert!(lines.iter().any(|l| l.ends_with("^C")), "{lines:?}");
    assert!(
        text(&screen).contains("echo done-$((1+1))"),
        "{}",
        text(&screen)
    );

    // A pipe handle has no screen: a tool error that says so.
    let piped = session
        .call("shell_start", json!({"line": "sleep 5"}))
        .await;
    let piped = field(&piped, "handle").as_u64().unwrap();
    let no_screen = session.call("shell_screen", json!({"handle": piped})).await;
    assert_eq!(no_screen.is_error, Some(true), "{}", text(&no_screen));
    session.call("shell_kill", json!({"handle": piped})).await;

    let killed = session.call("shell_kill", json!({"handle": handle})).await;
    assert_eq!(field(&killed, "state"), "killed", "{}", text(&killed));
    assert_eq!(field(&killed, "handle"), &Value::from(handle));
    session.client.cancel().await.unwrap();
}
