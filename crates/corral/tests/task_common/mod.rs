//! A model provider on 127.0.0.1 that answers from a script in the provider's own wire
//! format, and a fixture repository whose test fails.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

/// One scripted HTTP answer.
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub content_type: &'static str,
    pub body: String,
    pub headers: Vec<(String, String)>,
    /// Wait this long before answering.
    pub delay: Duration,
}

impl Reply {
    pub fn json(body: Value) -> Self {
        Self::raw(200, &body.to_string())
    }

    pub fn raw(status: u16, body: &str) -> Self {
        Self {
            status,
            content_type: "application/json",
            body: body.into(),
            headers: Vec::new(),
            delay: Duration::ZERO,
        }
    }

    /// A server-sent event stream of `events` (each a JSON value), ended by `[DONE]`.
    pub fn sse(events: &[Value]) -> Self {
        let mut body = String::new();
        for e in events {
            body.push_str(&format!("data: {e}\n\n"));
        }
        body.push_str("data: [DONE]\n\n");
        Self {
            status: 200,
            content_type: "text/event-stream",
            body,
            headers: Vec::new(),
            delay: Duration::ZERO,
        }
    }

    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    pub fn after(mut self, delay: Duration) -> Self {
        self.delay = delay;
        self
    }
}

/// A request the server received.
#[derive(Debug, Clone)]
pub struct Received {
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Value,
}

impl Received {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// The server: answers each connection with the next reply, then stops listening.
pub struct Server {
    pub base: String,
    received: Arc<Mutex<Vec<Received>>>,
}

impl Server {
    pub fn start(replies: Vec<Reply>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let received = Arc::new(Mutex::new(Vec::new()));
        let log = received.clone();
        std::thread::spawn(move || {
            for reply in replies {
                let Ok((stream, _)) = listener.accept() else {
                    return;
                };
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut request_line = String::new();
                reader.read_line(&mut request_line).unwrap();
                let path = request_line.split(' ').nth(1).unwrap_or("").to_string();
                let mut headers = Vec::new();
                let mut length = 0usize;
                loop {
                    let mut line = String::new();
                    reader.read_line(&mut line).unwrap();
                    let line = line.trim_end();
                    if line.is_empty() {
                        break;
                    }
                    if let Some((n, v)) = line.split_once(':') {
                        if n.eq_ignore_ascii_case("content-length") {
                            length = v.trim().parse().unwrap();
                        }
                        headers.push((n.trim().to_string(), v.trim().to_string()));
                    }
                }
                let mut body = vec![0; length];
                reader.read_exact(&mut body).unwrap();
                log.lock().unwrap().push(Received {
                    path,
                    headers,
                    body: serde_json::from_slice(&body).unwrap_or(Value::Null),
                });
                std::thread::sleep(reply.delay);
                let mut out = stream;
                let mut head = format!(
                    "HTTP/1.1 {} X\r\ncontent-type: {}\r\ncontent-length: {}\r\nconnection: close\r\n",
                    reply.status,
                    reply.content_type,
                    reply.body.len()
                );
                for (n, v) in &reply.headers {
                    head.push_str(&format!("{n}: {v}\r\n"));
                }
                head.push_str("\r\n");
                let _ = out.write_all(head.as_bytes());
                let _ = out.write_all(reply.body.as_bytes());
                let _ = out.flush();
            }
        });
        Self { base, received }
    }

    pub fn received(&self) -> Vec<Received> {
        self.received.lock().unwrap().clone()
    }
}

/// A tool call: `(name, arguments)`.
pub type Call = (&'static str, Value);

/// `turns` as a JSON Lines script (`script.jsonl` in `dir`) for the `script:` model, and
/// the model spec that names it.
pub fn script_model(dir: &Path, turns: &[Vec<Call>]) -> String {
    let path = dir.join("script.jsonl");
    let lines: Vec<String> = turns
        .iter()
        .map(|calls| {
            let calls: Vec<_> = calls
                .iter()
                .map(|(name, args)| json!({"name": name, "arguments": args}))
                .collect();
            json!({"tool_calls": calls}).to_string()
        })
        .collect();
    std::fs::write(&path, lines.join("\n")).unwrap();
    format!("script:{}", path.display())
}

/// An OpenAI chat-completions answer with `calls`.
pub fn openai(text: Option<&str>, calls: &[Call]) -> Value {
    let tool_calls: Vec<Value> = calls
        .iter()
        .enumerate()
        .map(|(i, (name, args))| {
            json!({"id": format!("call_{i}"), "type": "function",
                   "function": {"name": name, "arguments": args.to_string()}})
        })
        .collect();
    let mut message = json!({"role": "assistant", "content": text});
    if !tool_calls.is_empty() {
        message["tool_calls"] = json!(tool_calls);
    }
    json!({
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}],
        "usage": {"prompt_tokens": 120, "completion_tokens": 30, "cost": 0.0005},
    })
}

/// An Anthropic Messages answer with `calls`.
pub fn anthropic(text: Option<&str>, calls: &[Call]) -> Value {
    let mut content = Vec::new();
    if let Some(t) = text {
        content.push(json!({"type": "text", "text": t}));
    }
    for (i, (name, args)) in calls.iter().enumerate() {
        content.push(
            json!({"type": "tool_use", "id": format!("toolu_{i}"), "name": name, "input": args}),
        );
    }
    json!({
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude",
        "content": content, "stop_reason": "tool_use",
        "usage": {"input_tokens": 120, "output_tokens": 30},
    })
}

pub const LIB: &str = "add() {\n    echo $(( $1 - $2 ))\n}\n";

pub const TEST: &str = "#!/bin/sh\n. ./lib.sh\ngot=$(add 2 3)\nif [ \"$got\" != 5 ]; then\n    echo \"FAIL: add 2 3 = $got, expected 5\"\n    exit 1\nfi\necho \"ok: add 2 3 = 5\"\n";

/// The fix, as a patch.
pub const FIX: &str = "*** Begin Patch\n*** Update File: lib.sh\n@@ add() {\n-    echo $(( $1 - $2 ))\n+    echo $(( $1 + $2 ))\n*** End Patch";

/// A repository whose test (`sh test.sh`) fails: `add` subtracts.
pub fn failing_repo(dir: &Path) {
    std::fs::write(dir.join("lib.sh"), LIB).unwrap();
    std::fs::write(dir.join("test.sh"), TEST).unwrap();
}

/// The script of a model that finds and fixes the bug.
pub fn fixing_script() -> Vec<Vec<Call>> {
    vec![
        vec![("list_dir", json!({}))],
        vec![("read_file", json!({"path": "lib.sh"}))],
        vec![("exec", json!({"argv": ["sh", "test.sh"]}))],
        vec![("apply_patch", json!({"patch": FIX}))],
        vec![("done", json!({"summary": "add subtracted; it adds now"}))],
    ]
}
