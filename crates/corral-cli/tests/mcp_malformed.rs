//! Bad input gets a clear JSON-RPC or tool error, and the server goes on serving.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use crate::mcp_common;
use mcp_common::*;
use serde_json::{Value, json};

#[test]
fn malformed_messages_are_answered_and_serving_goes_on() {
    let dir = scratch(Some(PERMISSIVE));
    let mut child = Command::new(corral_bin())
        .args(["mcp", "--workspace"])
        .arg(dir.path().join("ws"))
        .env("CORRAL_STORE", store(dir.path()))
        .env("XDG_CACHE_HOME", dir.path().join("cache"))
        .env("CORRAL_TRUST_STORE", trust_store(dir.path()))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut send = |line: &str| {
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    };
    let mut answer = |id: i64| -> Value {
        loop {
            let mut line = String::new();
            assert!(stdout.read_line(&mut line).unwrap() > 0, "server stopped");
            let msg: Value = serde_json::from_str(&line).unwrap();
            if msg["id"] == id {
                return msg;
            }
        }
    };
    let call = |id: i64, params: Value| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}).to_string()
    };
    send(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#,
    );
    assert_eq!(answer(1)["result"]["protocolVersion"], "2025-06-18");
    send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);

    // Not JSON at all: a parse error with `id: null` (mcp_stdio_every_message_answered.rs).
    send("{this is not json");
    // JSON, not JSON-RPC.
    send(r#"{"hello":"world"}"#);
    // An unknown tool: a JSON-RPC error naming the tools there are.
    send(&call(2, json!({"name": "rm_rf"})));
    let unknown = answer(2);
    assert_eq!(unknown["error"]["code"], -32602);
    assert!(
        unknown["error"]["message"]
            .as_str()
            .unwrap()
            .contains("exec"),
        "{unknown}"
    );
    // Wrong types and unknown fields: tool errors saying what is wrong.
    send(&call(
        3,
        json!({"name": "exec", "arguments": {"argv": "ls -l"}}),
    ));
    let wrong = answer(3);
    assert_eq!(wrong["result"]["isError"], true);
    assert!(
        wrong["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("expected a sequence"),
        "{wrong}"
    );
    send(&call(
        4,
        json!({"name": "shell", "arguments": {"line": "ls", "shell": "bash"}}),
    ));
    let unknown_field = answer(4);
    assert!(
        unknown_field["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("unknown field `shell`"),
        "{unknown_field}"
    );
    // An unknown method.
    send(r#"{"jsonrpc":"2.0","id":5,"method":"tools/destroy","params":{}}"#);
    assert!(answer(5)["error"]["code"].is_i64());

    // And the server still serves.
    send(&call(
        6,
        json!({"name": "exec", "arguments": {"argv": ["echo", "still here"]}}),
    ));
    let ok = answer(6);
    assert_eq!(ok["result"]["structuredContent"]["exit_code"], 0, "{ok}");
    assert!(
        ok["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("still here")
    );

    drop(stdin);
    let status = child.wait().unwrap();
    assert!(status.success(), "{status}");

    // The trace holds every call the client made: the three it could not read as
    // `invalid` steps, with what the model was told, and the one that ran.
    let db = rusqlite::Connection::open(store(dir.path())).unwrap();
    let steps: Vec<(String, String)> = db
        .prepare("SELECT tool, outcome FROM steps ORDER BY seq")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let want: Vec<(String, String)> = [
        ("rm_rf", "invalid"),
        ("exec", "invalid"),
        ("shell", "invalid"),
        ("exec", "exited"),
    ]
    .iter()
    .map(|(t, o)| (t.to_string(), o.to_string()))
    .collect();
    assert_eq!(steps, want);
}
