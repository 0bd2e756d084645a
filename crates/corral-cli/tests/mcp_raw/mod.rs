//! Hostile messages and what JSON-RPC 2.0 says each must get back, shared by the stdio and
//! HTTP tests of `corral mcp`.
#![allow(dead_code)]

use serde_json::{Value, json};

/// One hostile message and the answer it must get.
pub struct Case {
    pub name: &'static str,
    pub message: String,
    pub expect: Expect,
}

/// What a message must be answered with.
pub enum Expect {
    /// One error with this code and this id (`Value::Null`: `"id": null`).
    Error { code: i64, id: Value },
    /// An array of errors with these ids (a batch).
    Batch { ids: Vec<Value> },
    /// Nothing at all (a notification).
    Nothing,
}

pub fn initialize(id: i64) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"}}})
    .to_string()
}

pub fn ping(id: i64) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "ping"}).to_string()
}

pub fn echo(id: i64, word: &str) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "exec", "arguments": {"argv": ["echo", word]}}})
    .to_string()
}

/// Every malformed message a client can send, each small.
pub fn cases() -> Vec<Case> {
    let error = |code: i64, id: Value| Expect::Error { code, id };
    vec![
        Case {
            name: "garbage",
            message: "this is not json".into(),
            expect: error(-32700, Value::Null),
        },
        Case {
            name: "truncated JSON",
            message: r#"{"jsonrpc":"2.0","id":41,"method":"tools/ca"#.into(),
            expect: error(-32700, Value::Null),
        },
        Case {
            name: "a number",
            message: "42".into(),
            expect: error(-32600, Value::Null),
        },
        Case {
            name: "an object that is not a request",
            message: r#"{"hello":"world"}"#.into(),
            expect: error(-32600, Value::Null),
        },
        Case {
            name: "an id that is an object",
            message: r#"{"jsonrpc":"2.0","id":{"n":1},"method":"ping"}"#.into(),
            expect: error(-32600, Value::Null),
        },
        Case {
            name: "a wrong jsonrpc version",
            message: r#"{"jsonrpc":"1.0","id":42,"method":"ping"}"#.into(),
            expect: error(-32600, json!(42)),
        },
        Case {
            name: "params of the wrong type",
            message: r#"{"jsonrpc":"2.0","id":"p43","method":"tools/call","params":7}"#.into(),
            expect: error(-32602, json!("p43")),
        },
        Case {
            name: "a log level that is not one",
            message: r#"{"jsonrpc":"2.0","id":"l46","method":"logging/setLevel","params":{"level":"loud"}}"#
                .into(),
            expect: error(-32602, json!("l46")),
        },
        Case {
            name: "a tool call without a name",
            message: r#"{"jsonrpc":"2.0","id":47,"method":"tools/call","params":{"arguments":{}}}"#
                .into(),
            expect: error(-32602, json!(47)),
        },
        Case {
            name: "an empty batch",
            message: "[]".into(),
            expect: error(-32600, Value::Null),
        },
        Case {
            name: "a batch",
            message: format!(
                r#"[{},{{"jsonrpc":"2.0","method":"notifications/initialized"}},1,{}]"#,
                ping(44),
                ping(45)
            ),
            expect: Expect::Batch {
                ids: vec![json!(44), Value::Null, json!(45)],
            },
        },
        Case {
            name: "a batch of notifications",
            message: r#"[{"jsonrpc":"2.0","method":"notifications/initialized"}]"#.into(),
            expect: Expect::Nothing,
        },
        Case {
            name: "a notification with bad params",
            message: r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":3}"#.into(),
            expect: Expect::Nothing,
        },
        Case {
            name: "an unknown notification",
            message: r#"{"jsonrpc":"2.0","method":"notifications/whatever"}"#.into(),
            expect: Expect::Nothing,
        },
    ]
}

/// Check `answer` (the next message the server sent) against `case`.
pub fn check(case: &Case, answer: &Value) {
    match &case.expect {
        Expect::Error { code, id } => {
            assert_eq!(&answer["error"]["code"], code, "{}: {answer}", case.name);
            let fields = answer.as_object().unwrap();
            assert_eq!(fields.get("id"), Some(id), "{}: {answer}", case.name);
            assert_eq!(answer["jsonrpc"], "2.0", "{}: {answer}", case.name);
            let message = answer["error"]["message"].as_str().unwrap();
            assert!(
                message.contains("; "),
                "{}: says what to do: {answer}",
                case.name
            );
        }
        Expect::Batch { ids } => {
            let got: Vec<Value> = answer
                .as_array()
                .unwrap_or_else(|| panic!("{}: not an array: {answer}", case.name))
                .iter()
                .map(|e| {
                    assert_eq!(e["error"]["code"], -32600, "{}: {answer}", case.name);
                    e["id"].clone()
                })
                .collect();
            assert_eq!(&got, ids, "{}: {answer}", case.name);
        }
        Expect::Nothing => panic!("{}: expected no answer, got {answer}", case.name),
    }
}
