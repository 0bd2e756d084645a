//! Anthropic's Messages API.

use serde_json::{Value, json};

use super::http::{self, Body, HttpSettings};
use crate::task::model::{
    Message, Model, ModelError, ModelErrorKind, ModelRequest, ModelResponse, ToolCall, Usage,
};

const PROVIDER: &str = "anthropic";

/// A model behind Anthropic's Messages API.
#[derive(Clone)]
pub struct Anthropic {
    base_url: String,
    key: String,
    model: String,
    settings: HttpSettings,
}

impl std::fmt::Debug for Anthropic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Anthropic")
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .finish_non_exhaustive()
    }
}

impl Anthropic {
    /// `model` at `base_url` (without `/v1`) with `key`.
    pub fn new(
        base_url: impl Into<String>,
        key: impl Into<String>,
        model: impl Into<String>,
    ) -> Self {
        Self {
            base_url: base_url.into().trim_end_matches('/').to_string(),
            key: key.into(),
            model: model.into(),
            settings: HttpSettings::default(),
        }
    }

    /// `ANTHROPIC_API_KEY` (required) and `ANTHROPIC_BASE_URL` (default
    /// `https://api.anthropic.com`).
    pub fn from_env(model: impl Into<String>) -> Result<Self, ModelError> {
        let var = |n: &str| std::env::var(n).ok().filter(|v| !v.trim().is_empty());
        let Some(key) = var("ANTHROPIC_API_KEY") else {
            return Err(ModelError::new(
                ModelErrorKind::Auth,
                PROVIDER,
                "ANTHROPIC_API_KEY is not set: export your Anthropic key",
            ));
        };
        Ok(Self::new(
            super::base_url("ANTHROPIC_BASE_URL", PROVIDER, "https://api.anthropic.com")?,
            key,
            model,
        ))
    }

    /// Talk HTTP with `settings` (timeout, retries, streaming).
    pub fn with_settings(mut self, settings: HttpSettings) -> Self {
        self.settings = settings;
        self
    }

    fn body(&self, request: &ModelRequest) -> Value {
        // The API alternates user and assistant: tool results and corral's own notes that
        // follow each other go in one user message.
        let mut messages: Vec<Value> = Vec::new();
        let mut user_blocks: Vec<Value> = Vec::new();
        let flush = |messages: &mut Vec<Value>, blocks: &mut Vec<Value>| {
            if !blocks.is_empty() {
                messages.push(json!({"role": "user", "content": std::mem::take(blocks)}));
            }
        };
        for m in &request.messages {
            match m {
                Message::User { content } => {
                    user_blocks.push(json!({"type": "text", "text": content}));
                }
                Message::Tool {
                    call_id,
                    content,
                    is_error,
                    ..
                } => user_blocks.push(json!({
                    "type": "tool_result",
                    "tool_use_id": call_id,
                    "content": content,
                    "is_error": is_error,
                })),
                Message::Assistant {
                    content,
                    tool_calls,
                } => {
                    flush(&mut messages, &mut user_blocks);
                    let mut blocks = Vec::new();
                    if let Some(text) = content.as_ref().filter(|t| !t.is_empty()) {
                        blocks.push(json!({"type": "text", "text": text}));
                    }
                    for c in tool_calls {
                        let input = if c.arguments.is_object() {
                            c.arguments.clone()
                        } else {
                            json!({})
                        };
                        blocks.push(
                            json!({"type": "tool_use", "id": c.id, "name": c.name, "input": input}),
                        );
                    }
                    if blocks.is_empty() {
                        blocks.push(json!({"type": "text", "text": "(no answer)"}));
                    }
                    messages.push(json!({"role": "assistant", "content": blocks}));
                }
            }
        }
        flush(&mut messages, &mut user_blocks);
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.input_schema}))
            .collect();
        let mut body = json!({
            "model": self.model,
            "max_tokens": request.max_tokens,
            "system": request.system,
            "messages": messages,
            "tools": tools,
        });
        if self.settings.stream {
            body["stream"] = json!(true);
        }
        body
    }

    fn parse(text: &str) -> Result<ModelResponse, ModelError> {
        let raw: Value =
            serde_json::from_str(text).map_err(|e| http::malformed(PROVIDER, e, text))?;
        if raw.get("type").and_then(Value::as_str) == Some("error") {
            return Err(ModelError {
                kind: ModelErrorKind::Unavailable,
                provider: PROVIDER.into(),
                status: Some(200),
                message: format!("{PROVIDER} answered with an error: {}", raw["error"]),
            });
        }
        let blocks = raw
            .get("content")
            .and_then(Value::as_array)
            .ok_or_else(|| http::malformed(PROVIDER, "no content array", text))?;
        let mut out = ModelResponse::default();
        let mut texts = Vec::new();
        for b in blocks {
            match b.get("type").and_then(Value::as_str) {
                Some("text") => texts.push(b["text"].as_str().unwrap_or("").to_string()),
                Some("tool_use") => out.tool_calls.push(ToolCall {
                    id: b["id"].as_str().unwrap_or("").into(),
                    name: b["name"]
                        .as_str()
                        .ok_or_else(|| {
                            http::malformed(PROVIDER, "a tool_use without a name", text)
                        })?
                        .into(),
                    arguments: b.get("input").cloned().unwrap_or_else(|| json!({})),
                }),
                _ => {}
            }
        }
        let joined = texts.join("");
        out.text = (!joined.is_empty()).then_some(joined);
        let n = |k: &str| {
            raw.pointer(&format!("/usage/{k}"))
                .and_then(Value::as_u64)
                .unwrap_or(0)
        };
        out.usage = Usage {
            input_tokens: n("input_tokens"),
            output_tokens: n("output_tokens"),
            cost_usd: None,
        };
        out.raw = raw;
        Ok(out)
    }

    fn parse_stream(events: Vec<String>) -> Result<ModelResponse, ModelError> {
        // index → (kind, id, name, text or partial json)
        let mut blocks: Vec<(String, String, String, String)> = Vec::new();
        let mut usage = Usage::default();
        let mut raw = Vec::new();
        for event in &events {
            let e: Value =
                serde_json::from_str(event).map_err(|err| http::malformed(PROVIDER, err, event))?;
            match e.get("type").and_then(Value::as_str) {
                Some("error") => {
                    return Err(ModelError {
                        kind: ModelErrorKind::Unavailable,
                        provider: PROVIDER.into(),
                        status: Some(200),
                        message: format!(
                            "{PROVIDER} answered with an error mid-stream: {}",
                            e["error"]
                        ),
                    });
                }
                Some("message_start") => {
                    usage.input_tokens = e
                        .pointer("/message/usage/input_tokens")
                        .and_then(Value::as_u64)
                        .unwrap_or(0);
                }
                Some("content_block_start") => {
                    let i = e["index"].as_u64().unwrap_or(0) as usize;
                    while blocks.len() <= i {
                        blocks.push(Default::default());
                    }
                    let b = &e["content_block"];
                    blocks[i] = (
                        b["type"].as_str().unwrap_or("").into(),
                        b["id"].as_str().unwrap_or("").into(),
                        b["name"].as_str().unwrap_or("").into(),
                        b["text"].as_str().unwrap_or("").into(),
                    );
                }
                Some("content_block_delta") => {
                    let i = e["index"].as_u64().unwrap_or(0) as usize;
                    if let Some(slot) = blocks.get_mut(i) {
                        let d = &e["delta"];
                        let piece = d["text"]
                            .as_str()
                            .or(d["partial_json"].as_str())
                            .unwrap_or("");
                        slot.3.push_str(piece);
                    }
                }
                Some("message_delta") => {
                    if let Some(n) = e.pointer("/usage/output_tokens").and_then(Value::as_u64) {
                        usage.output_tokens = n;
                    }
                }
                _ => {}
            }
            raw.push(e);
        }
        let mut out = ModelResponse {
            usage,
            raw: Value::Array(raw),
            ..ModelResponse::default()
        };
        let mut text = String::new();
        for (kind, id, name, body) in blocks {
            match kind.as_str() {
                "text" => text.push_str(&body),
                "tool_use" => out.tool_calls.push(ToolCall {
                    id,
                    name,
                    arguments: if body.trim().is_empty() {
                        json!({})
                    } else {
                        serde_json::from_str(&body).unwrap_or(Value::String(body))
                    },
                }),
                _ => {}
            }
        }
        out.text = (!text.is_empty()).then_some(text);
        Ok(out)
    }
}

impl Model for Anthropic {
    fn provider(&self) -> &str {
        PROVIDER
    }

    fn model(&self) -> &str {
        &self.model
    }

    fn complete(&self, request: &ModelRequest) -> Result<ModelResponse, ModelError> {
        let url = format!("{}/v1/messages", self.base_url);
        let headers = [
            ("x-api-key", self.key.clone()),
            ("anthropic-version", "2023-06-01".to_string()),
        ];
        let body = self.body(request).to_string();
        match http::post(PROVIDER, &self.settings, &url, &headers, &body)? {
            Body::Whole(text) => Self::parse(&text),
            Body::Stream(reader) => Self::parse_stream(http::sse_events(PROVIDER, reader)?),
        }
    }
}
