//! What to do with one incoming line of newline-delimited JSON-RPC, before rmcp sees it.
//!
//! rmcp skips a line that is not JSON and answers a JSON value that is not an MCP message
//! without an `id`; a client waiting on either waits forever. This module decides, for
//! every line, whether it goes on to rmcp or is answered here as JSON-RPC 2.0 says:
//!
//! 1. A line that parses as an MCP message goes on to rmcp, unchanged.
//! 2. A line that is not JSON (garbage, truncated) is answered `-32700 Parse error`; with
//!    its `id`, where a whole object has one bad string in it (a lone surrogate escape).
//! 3. A JSON array is a batch. MCP took batching out in 2025-06-18 and rmcp never read
//!    one, so each request in it is answered `-32600` with its own `id`, in one array; an
//!    element that is not a request is answered with `id: null`; notifications get nothing,
//!    and a batch of notifications only gets no answer at all. An empty array is one
//!    `-32600`.
//! 4. An object with a `method` and a readable `id` whose params do not fit the method is
//!    answered `-32602 Invalid params` with that `id`, naming the field that does not fit
//!    when the method is one of MCP's own ([`known`]): rmcp would take such a request for
//!    a custom one and answer `-32601 Method not found`.
//! 5. A notification (a `method`, no `id`) that does not parse is dropped: JSON-RPC
//!    forbids answering notifications.
//! 6. A response (`result` or `error`) that does not parse cannot be answered; it is
//!    logged and dropped.
//! 7. Anything else (a number, a string, an object without `method`) is `-32600 Invalid
//!    Request`, with the object's `id` when it has a readable one.
//!
//! An error whose `id` cannot be read carries `"id": null` on the revisions that follow
//! JSON-RPC 2.0 to the letter (every revision up to 2025-11-25); from 2026-07-28, which
//! has no `initialize`, the `id` is left out instead.

mod known;

use rmcp::model::{ClientRequest, JsonRpcMessage, ProtocolVersion};
use rmcp::service::{RoleServer, RxJsonRpcMessage};
use serde_json::{Map, Value, json};

/// JSON-RPC's code for a message that is not JSON.
pub(crate) const PARSE_ERROR: i64 = -32700;
/// JSON-RPC's code for JSON that is not a request.
pub(crate) const INVALID_REQUEST: i64 = -32600;
/// JSON-RPC's code for a request whose params do not fit its method.
pub(crate) const INVALID_PARAMS: i64 = -32602;

/// What to do with one line.
#[derive(Debug)]
pub(crate) enum Verdict {
    /// An MCP message: hand it to rmcp.
    Forward(Box<RxJsonRpcMessage<RoleServer>>),
    /// Not one: write this answer (one serialized line, without the newline).
    Answer(Vec<u8>),
    /// Not one, and nothing may be answered (a notification, a response, a blank line):
    /// the reason, for the log; `None` for a blank line.
    Drop(Option<String>),
}

/// Whether errors that cannot name a request carry `"id": null` (`true`) or no `id`.
pub(crate) fn null_id_for(revision: Option<&ProtocolVersion>) -> bool {
    revision.is_none_or(ProtocolVersion::has_initialize)
}

/// An error message as one line: `id` is the request's, or `None` when it cannot be read.
pub(crate) fn error_line(
    id: Option<Value>,
    code: i64,
    message: &str,
    data: Option<Value>,
    null_id: bool,
) -> Vec<u8> {
    serde_json::to_vec(&error_value(id, code, message, data, null_id))
        .expect("a JSON value always serializes")
}

/// The answer to a message over `limit` bytes: `-32600`, naming the limit and what to do
/// instead, with the `id` its start shows (stdio's and HTTP's alike).
pub(crate) fn too_large_line(id: Option<Value>, limit: usize, null_id: bool) -> Vec<u8> {
    error_line(
        id,
        INVALID_REQUEST,
        &format!(
            "message too large: it is longer than this server's limit of {limit} bytes per message; \
             write large data to a file in the workspace and pass its path instead, \
             or start the server with a larger --max-message"
        ),
        Some(json!({ "max_message_bytes": limit })),
        null_id,
    )
}

fn error_value(
    id: Option<Value>,
    code: i64,
    message: &str,
    data: Option<Value>,
    null_id: bool,
) -> Value {
    let mut error = Map::new();
    error.insert("code".into(), code.into());
    error.insert("message".into(), message.into());
    if let Some(data) = data {
        error.insert("data".into(), data);
    }
    let mut answer = Map::new();
    answer.insert("jsonrpc".into(), "2.0".into());
    match id {
        Some(id) => {
            answer.insert("id".into(), id);
        }
        None if null_id => {
            answer.insert("id".into(), Value::Null);
        }
        None => {}
    }
    answer.insert("error".into(), Value::Object(error));
    Value::Object(answer)
}

/// Decide what to do with `line` (without its newline).
pub(crate) fn classify(line: &[u8], null_id: bool) -> Verdict {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return Verdict::Drop(None);
    }
    let typed = match serde_json::from_slice::<RxJsonRpcMessage<RoleServer>>(line) {
        Ok(message) => return forward_unless_misfit(message, null_id),
        Err(e) => e,
    };
    let value = match serde_json::from_slice::<Value>(line) {
        Ok(value) => value,
        Err(e) => {
            // A whole object with one bad string in it (a lone surrogate escape, a byte
            // that is not UTF-8) has an id its client waits on: the answer carries it. A
            // line cut short may hold an id, but not the request it names.
            let id = (e.classify() == serde_json::error::Category::Syntax)
                .then(|| leading_id(line))
                .flatten();
            return Verdict::Answer(error_line(
                id,
                PARSE_ERROR,
                &format!(
                    "Parse error: {e}; send one JSON-RPC 2.0 message per line, as UTF-8 JSON with no raw newline inside"
                ),
                None,
                null_id,
            ));
        }
    };
    match value {
        Value::Array(items) if items.is_empty() => Verdict::Answer(error_line(
            None,
            INVALID_REQUEST,
            "Invalid Request: an empty batch; send each request as its own JSON object",
            None,
            null_id,
        )),
        Value::Array(items) => {
            let answers: Vec<Value> = items
                .iter()
                .filter_map(|item| batch_answer(item, null_id))
                .collect();
            if answers.is_empty() {
                Verdict::Drop(Some(format!(
                    "a batch of {} notifications, not processed: MCP takes no batches",
                    items.len()
                )))
            } else {
                Verdict::Answer(
                    serde_json::to_vec(&answers).expect("a JSON value always serializes"),
                )
            }
        }
        Value::Object(object) => single(&object, &typed, null_id),
        other => Verdict::Answer(error_line(
            None,
            INVALID_REQUEST,
            &format!(
                "Invalid Request: a JSON {} is not a JSON-RPC request; send an object with \"jsonrpc\": \"2.0\", \"id\", \"method\" and \"params\"",
                kind(&other)
            ),
            None,
            null_id,
        )),
    }
}

/// Forward `message`, unless it is one of MCP's methods whose params rmcp could read
/// only as a custom request's: that gets `-32602` naming the field.
fn forward_unless_misfit(message: RxJsonRpcMessage<RoleServer>, null_id: bool) -> Verdict {
    if let JsonRpcMessage::Request(request) = &message
        && let ClientRequest::CustomRequest(custom) = &request.request
        && let Some(problem) = known::params_problem(&custom.method, custom.params.as_ref())
    {
        return Verdict::Answer(error_line(
            Some(request.id.clone().into_json_value()),
            INVALID_PARAMS,
            &invalid_params(&custom.method, &problem),
            None,
            null_id,
        ));
    }
    Verdict::Forward(Box::new(message))
}

fn invalid_params(method: &str, problem: &str) -> String {
    format!(
        "Invalid params for {method}: {problem}; send params as the MCP schema for {method} describes"
    )
}

/// The answer to one element of a batch, if it gets one.
fn batch_answer(item: &Value, null_id: bool) -> Option<Value> {
    let object = item.as_object();
    let is_notification = object.is_some_and(|o| {
        !o.contains_key("id")
            && o.get("jsonrpc") == Some(&json!("2.0"))
            && o.get("method").is_some_and(Value::is_string)
    });
    if is_notification || object.is_some_and(is_response) {
        return None;
    }
    Some(error_value(
        object.and_then(readable_id),
        INVALID_REQUEST,
        "Invalid Request: MCP takes no JSON-RPC batches (removed in revision 2025-06-18); send each request as its own message",
        None,
        null_id,
    ))
}

/// One JSON object that rmcp could not read as an MCP message.
fn single(object: &Map<String, Value>, why: &serde_json::Error, null_id: bool) -> Verdict {
    let id = readable_id(object);
    let envelope = envelope_problem(object);
    match (object.get("method"), object.contains_key("id")) {
        (Some(Value::String(method)), true) if id.is_some() && envelope.is_none() => {
            let problem = known::params_problem(method, object.get("params"))
                .unwrap_or_else(|| why.to_string());
            Verdict::Answer(error_line(
                id,
                INVALID_PARAMS,
                &invalid_params(method, &problem),
                None,
                null_id,
            ))
        }
        (Some(Value::String(method)), false) if envelope.is_none() => Verdict::Drop(Some(format!(
            "a notification {method} that does not fit its schema ({why}); notifications are not answered"
        ))),
        (None, _) if is_response(object) => Verdict::Drop(Some(format!(
            "a response that does not fit any request this server sent ({why})"
        ))),
        _ => {
            let problem = envelope.unwrap_or_else(|| match object.get("id") {
                Some(other) if id.is_none() => format!(
                    "\"id\" is {}; MCP takes a string or an integer",
                    kind(other)
                ),
                _ => why.to_string(),
            });
            Verdict::Answer(error_line(
                id,
                INVALID_REQUEST,
                &format!(
                    "Invalid Request: {problem}; send an object with \"jsonrpc\": \"2.0\", \"id\", \"method\" and \"params\""
                ),
                None,
                null_id,
            ))
        }
    }
}

/// What is wrong with a request's envelope (`jsonrpc` and `method`), if anything.
fn envelope_problem(object: &Map<String, Value>) -> Option<String> {
    match object.get("jsonrpc") {
        Some(Value::String(v)) if v == "2.0" => {}
        None => return Some("\"jsonrpc\": \"2.0\" is missing".into()),
        Some(other) => return Some(format!("\"jsonrpc\" is {other}, not \"2.0\"")),
    }
    match object.get("method") {
        Some(Value::String(_)) => None,
        None => Some("\"method\" is missing".into()),
        Some(other) => Some(format!("\"method\" is {}, not a string", kind(other))),
    }
}

fn is_response(object: &Map<String, Value>) -> bool {
    !object.contains_key("method")
        && (object.contains_key("result") || object.contains_key("error"))
}

/// An `id` an answer can carry: a string or an integer (MCP forbids `null`).
fn readable_id(object: &Map<String, Value>) -> Option<Value> {
    match object.get("id")? {
        Value::String(s) => Some(Value::String(s.clone())),
        Value::Number(n) if n.is_i64() || n.is_u64() => Some(Value::Number(n.clone())),
        _ => None,
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// The `id` of the JSON object `head` begins, when it can be read from `head` alone: the
/// start of a message too large to keep. The object's members are walked at the top
/// level (nested values skipped, strings honoured) until `"id"` or the end of `head`.
pub(crate) fn leading_id(head: &[u8]) -> Option<Value> {
    let mut cursor = Cursor { bytes: head, at: 0 };
    cursor.skip_ws();
    if head.get(cursor.at..)?.starts_with(b"\xEF\xBB\xBF") {
        cursor.at += 3;
        cursor.skip_ws();
    }
    cursor.eat(b'{')?;
    loop {
        cursor.skip_ws();
        let key_start = cursor.at;
        cursor.string()?;
        let key: String = serde_json::from_slice(&head[key_start..cursor.at]).ok()?;
        cursor.skip_ws();
        cursor.eat(b':')?;
        cursor.skip_ws();
        let value_start = cursor.at;
        cursor.value()?;
        if key == "id" {
            let id: Value = serde_json::from_slice(&head[value_start..cursor.at]).ok()?;
            let mut object = Map::new();
            object.insert("id".into(), id);
            return readable_id(&object);
        }
        cursor.skip_ws();
        match cursor.next()? {
            b',' => {}
            _ => return None,
        }
    }
}

/// A position in a byte slice that knows JSON's lexical shape and nothing more.
struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Cursor<'_> {
    fn next(&mut self) -> Option<u8> {
        let byte = *self.bytes.get(self.at)?;
        self.at += 1;
        Some(byte)
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn eat(&mut self, want: u8) -> Option<()> {
        (self.next()? == want).then_some(())
    }

    fn skip_ws(&mut self) {
        while self.peek().is_some_and(|b| b.is_ascii_whitespace()) {
            self.at += 1;
        }
    }

    /// A whole string, quotes included.
    fn string(&mut self) -> Option<()> {
        self.eat(b'"')?;
        loop {
            match self.next()? {
                b'"' => return Some(()),
                b'\\' => {
                    self.next()?;
                }
                _ => {}
            }
        }
    }

    /// A whole value of any kind; `None` when `bytes` ends first.
    fn value(&mut self) -> Option<()> {
        match self.peek()? {
            b'"' => self.string(),
            b'{' | b'[' => {
                let mut depth = 0usize;
                loop {
                    match self.peek()? {
                        b'"' => self.string()?,
                        b'{' | b'[' => {
                            depth += 1;
                            self.at += 1;
                        }
                        b'}' | b']' => {
                            depth -= 1;
                            self.at += 1;
                            if depth == 0 {
                                return Some(());
                            }
                        }
                        _ => self.at += 1,
                    }
                }
            }
            _ => {
                // A number or a literal: up to the next delimiter, which must be there.
                while !matches!(self.peek()?, b',' | b'}' | b']')
                    && !self.peek()?.is_ascii_whitespace()
                {
                    self.at += 1;
                }
                Some(())
            }
        }
    }
}

#[cfg(test)]
mod tests;
