//! Over stdio, every message a client sends that is not a notification gets an answer:
//! garbage, truncated JSON, JSON that is not a request, batches, and messages over the
//! size limit, and the server goes on serving after each.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use crate::mcp_common;
use crate::mcp_raw;
use mcp_common::*;
use mcp_raw::*;
use serde_json::{Value, json};

/// Longer than any answer takes; reached only when an answer never comes.
const PATIENCE: Duration = Duration::from_secs(60);

struct Raw {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
    _dir: tempfile::TempDir,
    log: std::path::PathBuf,
}

impl Raw {
    fn start(flags: &[&str]) -> Self {
        let dir = scratch(Some(PERMISSIVE));
        let log = dir.path().join("stderr.log");
        let mut child = Command::new(corral_bin())
            .args(["mcp", "--workspace"])
            .arg(dir.path().join("ws"))
            .args(flags)
            .env("CORRAL_STORE", store(dir.path()))
            .env("XDG_CACHE_HOME", dir.path().join("cache"))
            .env_remove("CORRAL_POLICY")
            .env("XDG_CONFIG_HOME", dir.path().join("config"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in stdout.lines() {
                if tx.send(line.unwrap()).is_err() {
                    return;
                }
            }
        });
        let stdin = child.stdin.take();
        let mut raw = Self {
            child,
            stdin,
            lines,
            _dir: dir,
            log,
        };
        raw.send(initialize(1).as_bytes());
        assert_eq!(raw.next()["result"]["protocolVersion"], "2025-06-18");
        raw.send(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        raw
    }

    fn send(&mut self, message: &[u8]) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(message).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    /// The next message the server wrote, whatever it is.
    fn next(&self) -> Value {
        let line = self
            .lines
            .recv_timeout(PATIENCE)
            .expect("the server answered nothing");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"))
    }

    /// A ping is answered next: nothing else was sent before it, and serving goes on.
    fn still_serving(&mut self, id: i64) {
        self.send(ping(id).as_bytes());
        let answer = self.next();
        assert_eq!(answer["id"], id, "expected the ping's answer, got {answer}");
        assert!(answer["result"].is_object(), "{answer}");
    }

    /// Close stdin, wait for a clean exit, and return what the server logged.
    fn finish(mut self) -> String {
        drop(self.stdin.take());
        let status = self.child.wait().unwrap();
        assert!(status.success(), "{status}");
        std::fs::read_to_string(&self.log).unwrap()
    }
}

#[test]
fn every_malformed_message_is_answered_and_serving_goes_on() {
    let mut raw = Raw::start(&[]);
    for (n, case) in cases().iter().enumerate() {
        raw.send(case.message.as_bytes());
        if !matches!(case.expect, Expect::Nothing) {
            check(case, &raw.next());
        }
        raw.still_serving(100 + n as i64);
    }
    // A request right behind a garbage line, in one write.
    raw.send(format!("garbage\n{}", echo(7, "after garbage")).as_bytes());
    assert_eq!(raw.next()["error"]["code"], -32700);
    let echoed = raw.next();
    assert_eq!(echoed["id"], 7);
    assert_eq!(
        echoed["result"]["structuredContent"]["exit_code"], 0,
        "{echoed}"
    );
    raw.finish();
}

/// A `tools/call` of `size` bytes whose `id` comes first or last.
fn big_call(id: i64, size: usize, id_first: bool) -> Vec<u8> {
    let data = "x".repeat(size);
    let call = if id_first {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"exec","arguments":{{"argv":["true","{data}"]}}}}}}"#
        )
    } else {
        format!(
            r#"{{"jsonrpc":"2.0","method":"tools/call","params":{{"name":"exec","arguments":{{"argv":["true","{data}"]}}}},"id":{id}}}"#
        )
    };
    call.into_bytes()
}

#[test]
fn a_message_over_the_default_limit_is_answered_with_its_id() {
    let mut raw = Raw::start(&[]);
    raw.send(&big_call(20, 20 << 20, true));
    let answer = raw.next();
    assert_eq!(answer["id"], 20, "{answer}");
    assert_eq!(answer["error"]["code"], -32600, "{answer}");
    assert_eq!(
        answer["error"]["data"]["max_message_bytes"],
        8 << 20,
        "{answer}"
    );
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(message.contains("8388608 bytes"), "{message}");
    assert!(message.contains("write large data to a file"), "{message}");
    raw.still_serving(21);
    // A 5 MB argument is under the limit: it reaches the tool (which says the kernel
    // refuses an argument that long).
    raw.send(&big_call(22, 5 << 20, true));
    let ran = raw.next();
    assert_eq!(ran["id"], 22);
    assert!(ran["result"]["structuredContent"].is_object(), "{ran}");
    let log = raw.finish();
    assert!(
        log.contains("refused a message of more than 8388608 bytes (id 20)"),
        "{log}"
    );
}

#[test]
fn the_limit_is_configurable_and_an_id_past_it_is_null() {
    let mut raw = Raw::start(&["--max-message", "64KiB"]);
    raw.send(&big_call(30, 100 << 10, true));
    let answer = raw.next();
    assert_eq!(answer["id"], 30, "{answer}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("65536 bytes"),
        "{answer}"
    );
    // The id comes after the data: it cannot be read from the start, so it is null.
    raw.send(&big_call(31, 100 << 10, false));
    let answer = raw.next();
    assert_eq!(answer.get("id"), Some(&Value::Null), "{answer}");
    assert_eq!(answer["error"]["code"], -32600, "{answer}");
    // Just under the limit is read.
    raw.send(&big_call(32, (64 << 10) - 200, true));
    assert_eq!(raw.next()["id"], json!(32));
    raw.still_serving(33);
    raw.finish();
}

#[test]
fn a_zero_limit_is_refused_with_what_to_give() {
    let out = Command::new(corral_bin())
        .args(["mcp", "--max-message", "0"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("give e.g. 8MiB"));
}

fn call(id: i64, argv: &[&str]) -> Vec<u8> {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": "exec", "arguments": {"argv": argv}}})
    .to_string()
    .into_bytes()
}

/// A request whose id is still in flight is not run: it is answered `-32600` with that
/// id at once, the first one's answer comes as it would have, and the id may be used
/// again once answered (not once cancelled: the cancelled handler may still be finishing).
#[test]
fn a_request_reusing_an_id_in_flight_is_refused_without_running() {
    let mut raw = Raw::start(&[]);
    let ws = raw._dir.path().join("ws");
    raw.send(&call(300, &["sh", "-c", "sleep 1; touch first"]));
    raw.send(&call(300, &["touch", "second"]));
    let refused = raw.next();
    assert_eq!(refused["id"], 300, "{refused}");
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("an id of its own"),
        "{refused}"
    );
    let first = raw.next();
    assert_eq!(first["id"], 300, "{first}");
    assert_eq!(
        first["result"]["structuredContent"]["exit_code"], 0,
        "{first}"
    );
    assert!(ws.join("first").exists());
    assert!(!ws.join("second").exists(), "the duplicate ran");
    // Answered: the id is free again.
    raw.send(&call(300, &["touch", "third"]));
    assert_eq!(raw.next()["result"]["structuredContent"]["exit_code"], 0);
    assert!(ws.join("third").exists());
    // Cancelled by the client, it stays taken: its handler may still be finishing.
    raw.send(&call(301, &["sleep", "30"]));
    raw.send(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
               "params": {"requestId": 301, "reason": "changed my mind"}})
        .to_string()
        .as_bytes(),
    );
    raw.send(&call(301, &["touch", "fourth"]));
    let refused = raw.next();
    assert_eq!(refused["id"], 301, "{refused}");
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    assert!(!ws.join("fourth").exists(), "the reuse ran");
    raw.send(&call(302, &["touch", "fifth"]));
    let answer = raw.next();
    assert_eq!(answer["id"], 302, "{answer}");
    assert_eq!(
        answer["result"]["structuredContent"]["exit_code"], 0,
        "{answer}"
    );
    assert!(ws.join("fifth").exists());
    raw.finish();
}
