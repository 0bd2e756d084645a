//! A scripted model: answers from a list, in order. For tests, and to replay a run.
//!
//! A script is JSON Lines, one response a line:
//!
//! ```text
//! {"tool_calls": [{"name": "read_file", "arguments": {"path": "src/lib.rs"}}]}
//! {"tool_calls": [{"name": "exec", "arguments": {"argv": ["cargo", "test"]}}]}
//! {"text": "Fixed the off-by-one in add().", "tool_calls": [{"name": "done", "arguments": {}}]}
//! ```
//!
//! Blank lines are skipped. A call without an `id` gets `call_N`. When the script runs
//! out, the next turn fails with [`ModelErrorKind::ScriptExhausted`].

use std::path::Path;
use std::sync::Mutex;

use super::model::{Model, ModelError, ModelErrorKind, ModelRequest, ModelResponse};

/// A model that answers from a script.
#[derive(Debug)]
pub struct ScriptedModel {
    name: String,
    responses: Vec<ModelResponse>,
    next: Mutex<usize>,
}

impl ScriptedModel {
    /// A model that answers `responses` in order.
    pub fn new(responses: Vec<ModelResponse>) -> Self {
        let mut responses = responses;
        let mut n = 0;
        for r in &mut responses {
            for call in &mut r.tool_calls {
                n += 1;
                if call.id.is_empty() {
                    call.id = format!("call_{n}");
                }
            }
        }
        Self {
            name: "script".into(),
            responses,
            next: Mutex::new(0),
        }
    }

    /// Parse a JSON Lines script.
    pub fn from_jsonl(text: &str) -> Result<Self, ModelError> {
        let mut responses = Vec::new();
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let response: ModelResponse = serde_json::from_str(line).map_err(|e| {
                ModelError::new(
                    ModelErrorKind::Malformed,
                    "script",
                    format!(
                        "script line {}: {e}: write one response a line, e.g. \
                         {{\"tool_calls\": [{{\"name\": \"exec\", \"arguments\": {{\"argv\": [\"ls\"]}}}}]}}",
                        i + 1
                    ),
                )
            })?;
            responses.push(response);
        }
        Ok(Self::new(responses))
    }

    /// Read a JSON Lines script from `path`; the model's name is the file's.
    pub fn from_file(path: &Path) -> Result<Self, ModelError> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            ModelError::new(
                ModelErrorKind::BadRequest,
                "script",
                format!(
                    "cannot read the script {} ({e}): name a JSON Lines file of responses",
                    path.display()
                ),
            )
        })?;
        let mut model = Self::from_jsonl(&text)?;
        model.name = path.display().to_string();
        Ok(model)
    }

    /// How many responses it has given.
    pub fn used(&self) -> usize {
        *self.next.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Model for ScriptedModel {
    fn provider(&self) -> &str {
        "script"
    }

    fn model(&self) -> &str {
        &self.name
    }

    fn complete(&self, _request: &ModelRequest) -> Result<ModelResponse, ModelError> {
        let mut next = self.next.lock().unwrap_or_else(|e| e.into_inner());
        let Some(response) = self.responses.get(*next) else {
            return Err(ModelError::new(
                ModelErrorKind::ScriptExhausted,
                "script",
                format!(
                    "the script has no response left after {} turns: add lines to it, or end it with a `done` call",
                    self.responses.len()
                ),
            ));
        };
        *next += 1;
        let mut response = response.clone();
        if response.raw.is_null() {
            response.raw = serde_json::to_value(&response).unwrap_or_default();
        }
        Ok(response)
    }
}
