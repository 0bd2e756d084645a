//! Any OpenAI-compatible chat-completions endpoint: OpenAI, OpenRouter, vLLM, Ollama,
//! llama.cpp, LM Studio.

use serde_json::{Value, json};

use super::http::{self, Body, HttpSettings};
use crate::task::model::{
    Message, Model, ModelError, ModelErrorKind, ModelRequest, ModelResponse, ToolCall, Usage,
};

/// An OpenAI-compatible chat-completions model.
#[derive(Clone)]
pub struct OpenAiCompatible {
    provider: String,
    base_url: String,
    key: Option<String>,
    model: String,
    settings: HttpSettings,
}

impl std::fmt::Debug for OpenAiCompatible {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The key is never shown.
        f.debug_struct("OpenAiCompatible")
            .field("provider", &self.provider)
            .field("base_url", &self.base_url)
            .field("key", &self.key.as_ref().map(|_| "…"))
            .field("model", &self.model)
            .finish()
    }
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

impl OpenAiCompatible {
    /// `model` at `base_url` (ending in `/v1`, say), with `key` as a bearer token if any.
    /// `provider` names it in the trace and in errors.
    pub fn new(
        provider: impl Into<String>,
        base_url: impl Into<String>,
        key: Option<String>,
        model: impl Into<String>,
    ) -> Self {
        Self {
            provider: provider.into(),
            base_url: base_url.into().trim_end_matches('/').to_string(),
            key,
            model: model.into(),
            settings: HttpSettings::default(),
        }
    }

    /// OpenAI, or any server that speaks its API: `OPENAI_BASE_URL` (default
    /// `https://api.openai.com/v1`) and `OPENAI_API_KEY` (required for OpenAI itself; a
    /// local server usually needs none).
    pub fn openai_from_env(model: impl Into<String>) -> Result<Self, ModelError> {
        let base = env("OPENAI_BASE_URL")
            .map(|_| super::base_url("OPENAI_BASE_URL", "openai", "https://api.openai.com/v1"))
            .transpose()?;
        let key = env("OPENAI_API_KEY");
        if base.is_none() && key.is_none() {
            return Err(ModelError::new(
                ModelErrorKind::Auth,
                "openai",
                "OPENAI_API_KEY is not set: export it, or set OPENAI_BASE_URL to a local server \
                 (e.g. http://127.0.0.1:8080/v1)",
            ));
        }
        Ok(Self::new(
            "openai",
            base.unwrap_or_else(|| "https://api.openai.com/v1".into()),
            key,
            model,
        ))
    }

    /// OpenRouter: `OPENROUTER_API_KEY` (required) and `OPENROUTER_BASE_URL` (default
    /// `https://openrouter.ai/api/v1`). Its answers carry their cost.
    pub fn openrouter_from_env(model: impl Into<String>) -> Result<Self, ModelError> {
        let Some(key) = env("OPENROUTER_API_KEY") else {
            return Err(ModelError::new(
                ModelErrorKind::Auth,
                "openrouter",
                "OPENROUTER_API_KEY is not set: export your OpenRouter key",
            ));
        };
        Ok(Self::new(
            "openrouter",
            super::base_url(
                "OPENROUTER_BASE_URL",
                "openrouter",
                "https://openrouter.ai/api/v1",
            )?,
            Some(key),
            model,
        ))
    }

    /// Talk HTTP with `settings` (timeout, retries, streaming).
    pub fn with_settings(mut self, settings: HttpSettings) -> Self {
        self.settings = settings;
        self
    }

    fn body(&self, request: &ModelRequest) -> Value {
        let mut messages = vec![json!({"role": "system", "content": request.system})];
        for m in &request.messages {
            messages.push(match m {
                Message::User { content } => json!({"role": "user", "content": content}),
                Message::Assistant {
                    content,
                    tool_calls,
                } => {
                    let mut m = json!({"role": "assistant", "content": content});
                    if !tool_calls.is_empty() {
                        m["tool_calls"] = tool_calls
                            .iter()
                            .map(|c| {
                                json!({
                                    "id": c.id,
                                    "type": "function",
                                    "function": {"name": c.name, "arguments": c.arguments.to_string()},
                                })
                            })
                            .collect();
                    }
                    m
                }
                Message::Tool {
                    call_id, content, ..
                } => json!({"role": "tool", "tool_call_id": call_id, "content": content}),
            });
        }
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|t| {
                json!({
                    "type": "function",
                    "function": {"name": t.name, "description": t.description, "parameters": t.input_schema},
                })
            })
            .collect();
        let mut body = json!({"model": self.model, "messages": messages, "tools": tools});
        if self.settings.stream {
            body["stream"] = json!(true);
            body["stream_options"] = json!({"include_usage": true});
        }
        if self.provider == "openrouter" {
            body["usage"] = json!({"include": true});
        }
        body
    }

    fn parse(&self, text: &str) -> Result<ModelResponse, ModelError> {
        let p = self.provider.as_str();
        let raw: Value = serde_json::from_str(text).map_err(|e| http::malformed(p, e, text))?;
        if let Some(error) = raw.get("error") {
            return Err(ModelError {
                kind: ModelErrorKind::Unavailable,
                provider: p.into(),
                status: Some(200),
                message: format!("{p} answered with an error: {error}"),
            });
        }
        let message = raw
            .pointer("/choices/0/message")
            .ok_or_else(|| http::malformed(p, "no choices[0].message", text))?;
        let text_part = message
            .get("content")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_string);
        let mut tool_calls = Vec::new();
        for c in message
            .get("tool_calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let name = c
                .pointer("/function/name")
                .and_then(Value::as_str)
                .ok_or_else(|| http::malformed(p, "a tool call without a name", text))?;
            let args = c.pointer("/function/arguments");
            tool_calls.push(ToolCall {
                id: c.get("id").and_then(Value::as_str).unwrap_or("").into(),
                name: name.into(),
                arguments: arguments(args),
            });
        }
        Ok(ModelResponse {
            text: text_part,
            tool_calls,
            usage: usage(raw.get("usage")),
            raw,
        })
    }

    fn parse_stream(&self, events: Vec<String>) -> Result<ModelResponse, ModelError> {
        let p = self.provider.as_str();
        let mut text = String::new();
        // index → (id, name, arguments so far)
        let mut calls: Vec<(String, String, String)> = Vec::new();
        let mut use_ = Usage::default();
        let mut chunks = Vec::new();
        for event in &events {
            let chunk: Value =
                serde_json::from_str(event).map_err(|e| http::malformed(p, e, event))?;
            if let Some(error) = chunk.get("error") {
                return Err(ModelError {
                    kind: ModelErrorKind::Unavailable,
                    provider: p.into(),
                    status: Some(200),
                    message: format!("{p} answered with an error mid-stream: {error}"),
                });
            }
            if let Some(delta) = chunk.pointer("/choices/0/delta") {
                if let Some(t) = delta.get("content").and_then(Value::as_str) {
                    text.push_str(t);
                }
                for c in delta
                    .get("tool_calls")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    let i = c.get("index").and_then(Value::as_u64).unwrap_or(0) as usize;
                    while calls.len() <= i {
                        calls.push(Default::default());
                    }
                    let slot = &mut calls[i];
                    if let Some(id) = c.get("id").and_then(Value::as_str) {
                        slot.0 = id.into();
                    }
                    if let Some(n) = c.pointer("/function/name").and_then(Value::as_str) {
                        slot.1.push_str(n);
                    }
                    if let Some(a) = c.pointer("/function/arguments").and_then(Value::as_str) {
                        slot.2.push_str(a);
                    }
                }
            }
            if chunk.get("usage").is_some_and(|u| !u.is_null()) {
                use_ = usage(chunk.get("usage"));
            }
            chunks.push(chunk);
        }
        Ok(ModelResponse {
            text: (!text.is_empty()).then_some(text),
            tool_calls: calls
                .into_iter()
                .map(|(id, name, args)| ToolCall {
                    id,
                    name,
                    arguments: arguments(Some(&Value::String(args))),
                })
                .collect(),
            usage: use_,
            raw: Value::Array(chunks),
        })
    }
}

/// Arguments arrive as a JSON string; one that does not parse is passed on as the string,
/// so the tool says what is wrong with it.
fn arguments(value: Option<&Value>) -> Value {
    match value {
        Some(Value::String(s)) if s.trim().is_empty() => json!({}),
        Some(Value::String(s)) => {
            serde_json::from_str(s).unwrap_or_else(|_| Value::String(s.clone()))
        }
        Some(v) => v.clone(),
        None => json!({}),
    }
}

fn usage(u: Option<&Value>) -> Usage {
    let n = |k: &str| {
        u.and_then(|u| u.get(k))
            .and_then(Value::as_u64)
            .unwrap_or(0)
    };
    Usage {
        input_tokens: n("prompt_tokens"),
        output_tokens: n("completion_tokens"),
        cost_usd: u.and_then(|u| u.get("cost")).and_then(Value::as_f64),
    }
}

impl Model for OpenAiCompatible {
    fn provider(&self) -> &str {
        &self.provider
    }

    fn model(&self) -> &str {
        &self.model
    }

    fn complete(&self, request: &ModelRequest) -> Result<ModelResponse, ModelError> {
        let url = format!("{}/chat/completions", self.base_url);
        let mut headers = Vec::new();
        if let Some(key) = &self.key {
            headers.push(("authorization", format!("Bearer {key}")));
        }
        let body = self.body(request).to_string();
        match http::post(&self.provider, &self.settings, &url, &headers, &body)? {
            Body::Whole(text) => self.parse(&text),
            Body::Stream(reader) => self.parse_stream(http::sse_events(&self.provider, reader)?),
        }
    }
}
