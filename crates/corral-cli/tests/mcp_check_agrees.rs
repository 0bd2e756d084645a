//! `corral policy check --surface mcp` gives the answer `corral mcp`'s `shell` tool gives
//! for the same line: runs (exit 0, the call ran), asks (exit 1, declined by a client that
//! cannot ask), refused (exit 2). Programs that need a terminal and lines only the host
//! shell takes included.

use crate::mcp_common;
use mcp_common::*;
use serde_json::json;

/// What `corral policy check --surface mcp --line LINE` says, as the tool's status word.
fn checked(session: &Session, line: &str) -> &'static str {
    let out = std::process::Command::new(corral_bin())
        .args(["policy", "check", "--surface", "mcp", "--workspace"])
        .arg(session.workspace())
        .args(["--line", line])
        .env("CORRAL_TRUST_STORE", trust_store(session.dir.path()))
        .env_remove("CORRAL_POLICY")
        .env("XDG_CONFIG_HOME", session.dir.path().join("config"))
        .output()
        .unwrap();
    match out.status.code() {
        Some(0) => "exited",
        Some(1) => "declined",
        Some(2) => "refused",
        other => panic!(
            "{line}: exit {other:?}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_check_and_the_tool_agree_on_every_line() {
    let session = Session::start(None, None).await;
    let ws = session.workspace();
    std::fs::write(ws.join("notes"), "a page\n").unwrap();
    std::fs::write(ws.join("script.py"), "print('from a file')\n").unwrap();
    let lines = [
        ("less notes", "refused"),
        ("cat notes | less", "refused"),
        ("for f in notes; do less $f; done", "refused"),
        ("python3 <<'EOF'\nprint('fed')\nEOF", "exited"),
        ("python3 < script.py", "exited"),
        ("cat script.py | python3", "exited"),
        ("for f in notes; do cat $f; done", "exited"),
        ("git --no-pager log -1 || true", "exited"),
        ("rm -rf .", "declined"),
        // The built-in asks by effect: the remote's is asked whatever the record; what
        // undo puts back runs.
        ("git -c x=y push --force origin main", "declined"),
        ("rm notes -f", "exited"),
    ];
    for (line, expected) in lines {
        let said = checked(&session, line);
        let result = session.call("shell", json!({ "line": line })).await;
        let did = field(&result, "status").as_str().unwrap_or("").to_string();
        assert_eq!(
            (said, did.as_str()),
            (expected, expected),
            "{line}: the check said {said}, the tool {did}: {}",
            text(&result)
        );
    }
    session.client.cancel().await.unwrap();
}
