//! The model: messages and tool schemas in; text and tool calls out; token usage.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One message of the conversation, in the order sent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum Message {
    /// From the person (the goal) or from corral (a gate's verdict).
    User {
        /// The text.
        content: String,
    },
    /// What the model said and asked for.
    Assistant {
        /// Its text, if any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        content: Option<String>,
        /// The tools it called, in order.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ToolCall>,
    },
    /// The result of one tool call.
    Tool {
        /// The call's id.
        call_id: String,
        /// The tool's name.
        name: String,
        /// What the model reads.
        content: String,
        /// The call failed (a refusal, a bad request).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        is_error: bool,
    },
}

/// A tool call the model made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The provider's id for the call (made up when it gives none).
    #[serde(default)]
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments, a JSON object.
    #[serde(default)]
    pub arguments: Value,
}

/// A tool as offered to the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    /// Its name.
    pub name: String,
    /// What it does, for the model.
    pub description: String,
    /// Its input schema (a JSON Schema object).
    pub input_schema: Value,
}

/// What is sent to the model on one turn.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelRequest {
    /// The instructions.
    pub system: String,
    /// The conversation so far.
    pub messages: Vec<Message>,
    /// The tools it may call.
    pub tools: Vec<ToolSpec>,
    /// The most tokens it may answer with.
    pub max_tokens: u32,
}

/// Tokens a turn used, and its cost when the provider says.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    /// Prompt tokens.
    #[serde(default)]
    pub input_tokens: u64,
    /// Completion tokens.
    #[serde(default)]
    pub output_tokens: u64,
    /// In US dollars, when the provider reports it (OpenRouter does).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
}

/// What the model answered.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelResponse {
    /// Its text, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// The tools it called.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// Tokens and cost.
    #[serde(default)]
    pub usage: Usage,
    /// The response body as the provider sent it, for the trace.
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub raw: Value,
}

/// A chat model.
pub trait Model: Send + Sync + std::fmt::Debug {
    /// The provider, for the trace: `openai`, `openrouter`, `anthropic`, `script`.
    fn provider(&self) -> &str;
    /// The model's name at the provider.
    fn model(&self) -> &str;
    /// One turn.
    fn complete(&self, request: &ModelRequest) -> Result<ModelResponse, ModelError>;
}

/// What kind of failure a provider had.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ModelErrorKind {
    /// The key is missing or refused (401, 403), or the configuration is incomplete.
    Auth,
    /// The request was refused as malformed (400, 404, 422): the model name, say.
    BadRequest,
    /// Still rate-limited (429) or failing (5xx) after every retry.
    Unavailable,
    /// No answer within the timeout.
    Timeout,
    /// The connection failed.
    Transport,
    /// The answer could not be read (not JSON, not the provider's shape).
    Malformed,
    /// A scripted model has no more responses.
    ScriptExhausted,
}

/// A provider's failure: which provider, the HTTP status and body when there was one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ModelError {
    /// What kind of failure.
    pub kind: ModelErrorKind,
    /// `openai`, `anthropic`, …
    pub provider: String,
    /// The HTTP status, when one came back.
    pub status: Option<u16>,
    /// A complete sentence naming the provider, the status and the body.
    pub message: String,
}

impl ModelError {
    /// A failure of `provider` of `kind`, saying `message`.
    pub fn new(kind: ModelErrorKind, provider: &str, message: impl Into<String>) -> Self {
        Self {
            kind,
            provider: provider.into(),
            status: None,
            message: message.into(),
        }
    }
}

impl fmt::Display for ModelErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ModelErrorKind::Auth => "auth",
            ModelErrorKind::BadRequest => "bad_request",
            ModelErrorKind::Unavailable => "unavailable",
            ModelErrorKind::Timeout => "timeout",
            ModelErrorKind::Transport => "transport",
            ModelErrorKind::Malformed => "malformed",
            ModelErrorKind::ScriptExhausted => "script_exhausted",
        })
    }
}
