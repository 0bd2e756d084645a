//! The tool list: names, teaching descriptions, input schemas from the library's request
//! types; and the mapping from library results to tool results.
//!
//! No tool declares an `outputSchema`: the fields of `structuredContent` are few and named
//! in the README, and eight schemas cost a kilobyte of every prompt.

use std::sync::{Arc, LazyLock};

use corral::{ErrorKind, HandleState, Outcome, Poll, Screen, Started, Status};
use rmcp::model::{CallToolResult, ContentBlock, JsonObject, Tool};
use serde::Serialize;
use serde_json::{Value, json};

pub(crate) const EXEC: &str = "exec";
pub(crate) const SHELL: &str = "shell";
pub(crate) const START: &str = "shell_start";
pub(crate) const POLL: &str = "shell_poll";
pub(crate) const KILL: &str = "shell_kill";
pub(crate) const WRITE: &str = "shell_write";
pub(crate) const KEYS: &str = "shell_keys";
pub(crate) const SCREEN: &str = "shell_screen";

const EXEC_DESCRIPTION: &str = "Run a program with arguments, no shell: `;` `|` `$( )` `>` are plain bytes. \
Returns status, time and output (head and tail kept). \
The policy may refuse (saying what to do instead) or ask the user.";

const SHELL_DESCRIPTION: &str = "Run a command line in corral's grammar, no shell: quotes, | && || ; < > >> 2> 2>&1, \
<<'EOF' heredocs, NAME=v cmd, ~/, cd. $VAR, $( ), globs, loops and & are refused with what to do instead. Result as for exec.";

const START_DESCRIPTION: &str = "Start a command line in the background; returns a handle. \
Read with shell_poll, end with shell_kill. tty: true runs it on a terminal (bash, python3) for shell_write, shell_keys, shell_screen.";

const POLL_DESCRIPTION: &str =
    "A handle's new output (the newest, if too much) and whether it runs.";

const KILL_DESCRIPTION: &str = "End a handle and all it started; returns its last output.";

const WRITE_DESCRIPTION: &str = "Type into a handle; returns what it printed within its yield_ms.";

const KEYS_DESCRIPTION: &str = "Press keys, in tmux spelling; returns output as shell_write.";

const SCREEN_DESCRIPTION: &str = "A tty handle's screen as a person would see it, with the cursor.";

/// The tools, built once.
pub(crate) fn list() -> Arc<Vec<Tool>> {
    static TOOLS: LazyLock<Arc<Vec<Tool>>> = LazyLock::new(|| {
        let tool = |name: &'static str, description: &'static str, input| {
            Tool::new(name, description, Arc::new(input))
        };
        Arc::new(vec![
            tool(
                EXEC,
                EXEC_DESCRIPTION,
                input_schema::<corral::ExecRequest>(),
            ),
            tool(
                SHELL,
                SHELL_DESCRIPTION,
                input_schema::<corral::ShellRequest>(),
            ),
            tool(
                START,
                START_DESCRIPTION,
                input_schema::<corral::StartRequest>(),
            ),
            tool(
                POLL,
                POLL_DESCRIPTION,
                input_schema::<corral::PollRequest>(),
            ),
            tool(
                KILL,
                KILL_DESCRIPTION,
                input_schema::<corral::KillRequest>(),
            ),
            tool(
                WRITE,
                WRITE_DESCRIPTION,
                input_schema::<corral::WriteRequest>(),
            ),
            tool(
                KEYS,
                KEYS_DESCRIPTION,
                input_schema::<corral::KeysRequest>(),
            ),
            tool(
                SCREEN,
                SCREEN_DESCRIPTION,
                input_schema::<corral::ScreenRequest>(),
            ),
        ])
    });
    TOOLS.clone()
}

/// Fields whose description the tool's own says already: `handle` ("the handle id
/// `shell_start` returned") would cost every handle tool 45 bytes of every prompt.
const SELF_EVIDENT: &[&str] = &["handle"];

/// The schema of `T` as MCP wants an input schema: an object, with the descriptions of
/// its fields kept and the generator's decorations (`$schema`, titles, formats) dropped.
fn input_schema<T: schemars::JsonSchema>() -> JsonObject {
    let schema = schemars::generate::SchemaSettings::draft2020_12()
        .into_generator()
        .into_root_schema_for::<T>();
    let mut value = serde_json::to_value(schema).unwrap_or_else(|_| json!({"type": "object"}));
    if let Value::Object(top) = &mut value {
        top.remove("$schema");
        top.remove("title");
        top.remove("description");
        // Unknown fields are still refused, with their names; saying so costs every prompt.
        top.remove("additionalProperties");
        // An optional field is simply left out: `["string", "null"]` becomes `"string"`.
        if let Some(Value::Object(properties)) = top.get_mut("properties") {
            for (name, property) in properties.iter_mut() {
                if let Some(Value::Array(types)) = property.get("type") {
                    let types: Vec<&Value> = types.iter().filter(|t| *t != "null").collect();
                    if let [only] = types.as_slice() {
                        let only = (*only).clone();
                        property["type"] = only;
                    }
                }
                if SELF_EVIDENT.contains(&name.as_str()) {
                    if let Some(property) = property.as_object_mut() {
                        property.remove("description");
                    }
                } else if let Some(Value::String(text)) = property.get("description") {
                    // Doc comments wrap lines; a schema reads better as one sentence.
                    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
                    property["description"] = Value::String(text);
                }
            }
        }
    }
    strip_decorations(&mut value);
    match value {
        Value::Object(object) => object,
        _ => JsonObject::new(),
    }
}

/// Remove `format` (`uint64`, …) and the zero `minimum` that comes with it: they cost
/// bytes in every prompt and teach the model nothing.
fn strip_decorations(value: &mut Value) {
    match value {
        Value::Object(object) => {
            if object.remove("format").is_some() && object.get("minimum") == Some(&json!(0)) {
                object.remove("minimum");
            }
            for (key, child) in object.iter_mut() {
                match (key.as_str(), child) {
                    // Names to schemas: a property called `format` is a field, not a keyword.
                    ("properties" | "$defs", Value::Object(map)) => {
                        map.values_mut().for_each(strip_decorations)
                    }
                    ("default" | "const" | "enum" | "examples", _) => {}
                    (_, child) => strip_decorations(child),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(strip_decorations),
        _ => {}
    }
}

/// The fields of a result, for programs (the model reads the text).
#[derive(Debug, Default, Serialize)]
pub(crate) struct Fields {
    /// How the call ended: exited, signaled, timed_out, cancelled, unavailable.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timed_out: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wall_ms: Option<f64>,
    /// Bytes of output the model was not shown, both streams together.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub omitted_bytes: Option<u64>,
    /// The step in the trace (`corral trace output STEP`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub handle: Option<u32>,
    /// Where a handle is: running, exited, killed, run_ended, orphaned.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped_bytes: Option<u64>,
}

impl Fields {
    pub fn status(&mut self, status: &Status) {
        self.status = Some(status.outcome());
        self.exit(status);
        self.timed_out = Some(matches!(status, Status::TimedOut { .. }));
        if let Status::Running { handle } = status {
            self.handle = Some(*handle);
            self.state = Some("running");
        }
    }

    fn exit(&mut self, status: &Status) {
        match status {
            Status::Exited { code } => self.exit_code = Some(*code),
            Status::Signaled { signal } => self.signal = Some(*signal),
            _ => {}
        }
    }

    pub fn result(&self, text: String) -> CallToolResult {
        let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
        result.structured_content = serde_json::to_value(self).ok();
        result
    }
}

/// A finished foreground call.
pub(crate) fn outcome_result(outcome: &Outcome) -> CallToolResult {
    let mut fields = Fields::default();
    fields.status(&outcome.status);
    fields.wall_ms = Some(outcome.wall.as_secs_f64() * 1000.0);
    fields.omitted_bytes =
        Some(outcome.stdout.window.omitted_bytes + outcome.stderr.window.omitted_bytes);
    fields.step = Some(outcome.step.id);
    fields.result(outcome.observation.clone())
}

/// A handle that was started.
pub(crate) fn started_result(started: &Started) -> CallToolResult {
    let fields = Fields {
        handle: Some(started.handle),
        state: Some("running"),
        ..Fields::default()
    };
    fields.result(started.observation.clone())
}

/// A handle polled or killed.
pub(crate) fn poll_result(poll: &Poll) -> CallToolResult {
    let mut fields = Fields {
        handle: Some(poll.handle),
        state: Some(poll.state.word()),
        skipped_bytes: Some(poll.skipped_bytes),
        ..Fields::default()
    };
    if let HandleState::Exited { status } = &poll.state {
        fields.exit(status);
    }
    fields.result(poll.observation.clone())
}

/// A terminal handle's screen: where it is, its size, the cursor (from 0) and its rows.
pub(crate) fn screen_result(screen: &Screen) -> CallToolResult {
    let fields = json!({
        "handle": screen.handle,
        "state": screen.state.word(),
        "rows": screen.rows,
        "cols": screen.cols,
        "cursor": {"row": screen.cursor_row, "col": screen.cursor_col},
        "lines": screen.lines,
        "alternate_screen": screen.alternate_screen,
    });
    let mut result = CallToolResult::success(vec![ContentBlock::text(screen.observation.clone())]);
    result.structured_content = Some(fields);
    result
}

/// A request that could not be carried out: a tool error whose text says what to do.
pub(crate) fn error_result(error: &corral::Error) -> CallToolResult {
    let text = match error.kind() {
        ErrorKind::InvalidRequest | ErrorKind::Refused | ErrorKind::Closed => error.to_string(),
        _ => format!("corral failed, nothing more was run: {error}"),
    };
    error_text(text)
}

/// A tool error with `text`.
pub(crate) fn error_text(text: impl Into<String>) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(text.into())])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The goal is 4 KiB; eight tools measured 4444 bytes (exec's and shell's field docs,
    /// which this crate does not own, are the next thing to cut).
    #[test]
    fn the_tool_list_stays_small() {
        let tools = list();
        let json = serde_json::to_string(&json!({ "tools": *tools })).unwrap();
        println!("tools/list result: {} bytes", json.len());
        assert!(json.len() < 4096, "{} bytes:\n{json}", json.len());
    }

    #[test]
    fn input_schemas_are_objects_with_their_fields() {
        for tool in list().iter() {
            assert_eq!(
                tool.input_schema.get("type"),
                Some(&json!("object")),
                "{}",
                tool.name
            );
            assert!(!tool.input_schema.contains_key("$schema"));
            assert!(
                tool.input_schema.contains_key("properties"),
                "{}",
                tool.name
            );
        }
    }
}
