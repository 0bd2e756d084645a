//! What the MCP specification says a server answers, to the letter, through a real client
//! or raw JSON-RPC to the real server: `logging/setLevel` decides which log messages are
//! sent, a known method with params that do not fit it is `-32602` naming the field (the
//! field of the revision the client asked for, for `initialize`), and on startup a bad
//! workspace fails before anything else is printed. The HTTP answers (`DELETE` of a gone
//! session, the `401` challenge, the address line) are in `mcp_http.rs`.
// Logging is deprecated by SEP-2577; on 2025-11-25 and older it is how servers announce.
#![allow(deprecated)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::mcp_common;
use mcp_common::*;
use rmcp::model::{LoggingLevel, SetLevelRequestParams};
use serde_json::{Value, json};

const PATIENCE: Duration = Duration::from_secs(60);

/// Poll `handle` until it is no longer running.
async fn until_ended(session: &Session, handle: &Value) {
    let until = Instant::now() + PATIENCE;
    loop {
        let polled = session
            .call("shell_poll", json!({"handle": handle, "wait_ms": 2000}))
            .await;
        if field(&polled, "state") != "running" {
            return;
        }
        assert!(Instant::now() < until, "{}", text(&polled));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn set_level_decides_which_handle_announcements_are_sent() {
    let session = Session::start(Some(PERMISSIVE), None).await;
    session
        .client
        .set_level(SetLevelRequestParams::new(LoggingLevel::Warning))
        .await
        .unwrap();
    // A clean exit is `info`, a failing one `notice`: neither reaches a client at `warning`.
    let clean = session
        .call("shell_start", json!({"line": "echo quiet"}))
        .await;
    let clean = field(&clean, "handle").clone();
    until_ended(&session, &clean).await;
    let failing = session.call("shell_start", json!({"line": "false"})).await;
    let failing = field(&failing, "handle").clone();
    until_ended(&session, &failing).await;

    session
        .client
        .set_level(SetLevelRequestParams::new(LoggingLevel::Notice))
        .await
        .unwrap();
    let again = session.call("shell_start", json!({"line": "false"})).await;
    let again = field(&again, "handle").clone();
    let until = Instant::now() + PATIENCE;
    loop {
        let logs = session.seen.lock().unwrap().logs.clone();
        if logs.iter().any(|l| l["handle"] == again) {
            let early: Vec<&Value> = logs
                .iter()
                .filter(|l| l["handle"] == clean || l["handle"] == failing)
                .collect();
            assert!(
                early.is_empty(),
                "sent below the level asked for: {early:?}"
            );
            break;
        }
        assert!(Instant::now() < until, "never announced: {logs:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    session.client.cancel().await.unwrap();
}

/// `corral mcp` on a scratch workspace, spoken to line by line.
struct Raw {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    stdout: BufReader<std::process::ChildStdout>,
    _dir: tempfile::TempDir,
}

impl Raw {
    fn start() -> Self {
        let dir = scratch(Some(PERMISSIVE));
        let mut child = Command::new(corral_bin())
            .args(["mcp", "--workspace"])
            .arg(dir.path().join("ws"))
            .env("CORRAL_STORE", store(dir.path()))
            .env("CORRAL_TRUST_STORE", trust_store(dir.path()))
            .env_remove("CORRAL_POLICY")
            .env("XDG_CONFIG_HOME", dir.path().join("config"))
            .env("XDG_CACHE_HOME", dir.path().join("cache"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        Self {
            stdin: child.stdin.take().unwrap(),
            stdout: BufReader::new(child.stdout.take().unwrap()),
            child,
            _dir: dir,
        }
    }

    /// Send `message` and read the answer that carries `id`.
    fn ask(&mut self, message: Value) -> Value {
        let id = message["id"].clone();
        writeln!(self.stdin, "{message}").unwrap();
        self.stdin.flush().unwrap();
        loop {
            let mut line = String::new();
            assert!(
                self.stdout.read_line(&mut line).unwrap() > 0,
                "server stopped"
            );
            let answer: Value = serde_json::from_str(&line).unwrap();
            if answer["id"] == id {
                return answer;
            }
        }
    }
}

impl Drop for Raw {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `answer` is `-32602` and its message names `field`.
fn names(answer: &Value, field: &str) {
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(message.contains(&format!("\"{field}\"")), "{answer}");
}

fn initialize(id: i64, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": params})
}

#[test]
fn an_initialize_missing_a_field_is_told_which_of_its_revision() {
    let mut raw = Raw::start();
    let no_version = raw.ask(initialize(
        1,
        json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw"}}),
    ));
    names(&no_version, "params.clientInfo.version");
    assert!(
        !no_version.to_string().contains("_meta"),
        "speaks of another revision: {no_version}"
    );
    let no_capabilities = raw.ask(initialize(
        2,
        json!({"protocolVersion": "2025-11-25", "clientInfo": {"name": "raw", "version": "1"}}),
    ));
    names(&no_capabilities, "params.capabilities");
    // Told, the client gets it right and is served.
    let fixed = raw.ask(initialize(
        3,
        json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}),
    ));
    assert_eq!(fixed["result"]["protocolVersion"], "2025-11-25", "{fixed}");
}

#[test]
fn known_methods_with_params_that_do_not_fit_are_invalid_params() {
    let mut raw = Raw::start();
    let ok = raw.ask(initialize(
        1,
        json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}),
    ));
    assert!(ok["result"].is_object(), "{ok}");
    writeln!(
        raw.stdin,
        r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
    )
    .unwrap();
    let loud = raw.ask(json!({"jsonrpc": "2.0", "id": "lvl", "method": "logging/setLevel", "params": {"level": "loud"}}));
    names(&loud, "params.level");
    assert_eq!(loud["id"], "lvl");
    let nameless = raw.ask(
        json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"arguments": {}}}),
    );
    names(&nameless, "params.name");
    // A method that is not MCP's is still not found, and a fitting setLevel is accepted.
    let unknown =
        raw.ask(json!({"jsonrpc": "2.0", "id": 6, "method": "tools/destroy", "params": {}}));
    assert_eq!(unknown["error"]["code"], -32601, "{unknown}");
    let fine = raw.ask(json!({"jsonrpc": "2.0", "id": 7, "method": "logging/setLevel", "params": {"level": "error"}}));
    assert_eq!(fine["result"], json!({}), "{fine}");
}

#[test]
fn a_workspace_that_does_not_exist_fails_before_any_banner() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-such-dir");
    for listen in [None, Some("127.0.0.1:0")] {
        let mut command = Command::new(corral_bin());
        command
            .args(["mcp", "--workspace"])
            .arg(&missing)
            .env("CORRAL_STORE", store(dir.path()))
            .env("XDG_CONFIG_HOME", dir.path().join("config"))
            .stdin(Stdio::null());
        if let Some(listen) = listen {
            command.args(["--listen", listen]);
        }
        let out = command.output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{listen:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{listen:?}: {stderr}");
        assert!(
            stderr.contains("no-such-dir") && stderr.contains("existing directory"),
            "{listen:?}: {stderr}"
        );
    }
}
