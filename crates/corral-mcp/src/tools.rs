//! The tool list: names, teaching descriptions, input schemas from the library's request
//! types, one compact output schema; and the mapping from library results to tool results.

use std::sync::{Arc, LazyLock};

use corral::{ErrorKind, HandleState, Outcome, Poll, Started, Status};
use rmcp::model::{CallToolResult, ContentBlock, JsonObject, Tool};
use serde::Serialize;
use serde_json::{Value, json};

pub(crate) const EXEC: &str = "exec";
pub(crate) const SHELL: &str = "shell";
pub(crate) const START: &str = "shell_start";
pub(crate) const POLL: &str = "shell_poll";
pub(crate) const KILL: &str = "shell_kill";

const EXEC_DESCRIPTION: &str = "Run a program with arguments, no shell: `;` `|` `$( )` `>` are plain bytes. \
Returns exit status, time and output (head and tail kept, omissions stated); a non-zero exit is a normal result. \
The policy may refuse (saying what to do instead) or ask the user.";

const SHELL_DESCRIPTION: &str = "Run a command line in corral's grammar, no shell: quotes, | && || ; < > >> 2> 2>&1, NAME=v cmd, cd DIR. \
$VAR, $( ), globs, ~, subshells, heredocs and & are refused with what to do instead. Result as for exec.";

const START_DESCRIPTION: &str = "Start a command line (shell grammar) in the background; returns its handle at once. \
For servers, watchers, long jobs. Read output with shell_poll, end with shell_kill; handles end with the session.";

const POLL_DESCRIPTION: &str = "Output a handle printed since the last poll (newest kept if too much, skipped bytes stated) and whether it runs. \
wait_ms: wait up to that long for output or the exit.";

const KILL_DESCRIPTION: &str =
    "End a handle and all it started; returns its last output and how it ended.";

/// The tools, built once.
pub(crate) fn list() -> Arc<Vec<Tool>> {
    static TOOLS: LazyLock<Arc<Vec<Tool>>> = LazyLock::new(|| {
        let call = output_schema(&[
            ("status", "string"),
            ("exit_code", "integer"),
            ("signal", "integer"),
            ("timed_out", "boolean"),
            ("wall_ms", "number"),
            ("omitted_bytes", "integer"),
            ("handle", "integer"),
        ]);
        let started = output_schema(&[("handle", "integer"), ("state", "string")]);
        let polled = output_schema(&[
            ("handle", "integer"),
            ("state", "string"),
            ("exit_code", "integer"),
            ("signal", "integer"),
            ("skipped_bytes", "integer"),
        ]);
        let tool =
            |name: &'static str, description: &'static str, input, output: &Arc<JsonObject>| {
                Tool::new(name, description, Arc::new(input)).with_raw_output_schema(output.clone())
            };
        Arc::new(vec![
            tool(
                EXEC,
                EXEC_DESCRIPTION,
                input_schema::<corral::ExecRequest>(),
                &call,
            ),
            tool(
                SHELL,
                SHELL_DESCRIPTION,
                input_schema::<corral::ShellRequest>(),
                &call,
            ),
            tool(
                START,
                START_DESCRIPTION,
                without(input_schema::<corral::StartRequest>(), PTY_FIELDS),
                &started,
            ),
            tool(
                POLL,
                POLL_DESCRIPTION,
                without(input_schema::<corral::PollRequest>(), PTY_FIELDS),
                &polled,
            ),
            tool(
                KILL,
                KILL_DESCRIPTION,
                input_schema::<corral::KillRequest>(),
                &polled,
            ),
        ])
    });
    TOOLS.clone()
}

/// Fields for terminal handles and their tools (`shell_write`, `shell_screen`), which this
/// server does not offer yet: left out of the schemas, so the model is not told about
/// tools it cannot call. A request that sends them anyway is still read.
const PTY_FIELDS: &[&str] = &["tty", "stdin", "cols", "rows", "strip_ansi"];

/// `schema` without the properties named in `hidden`.
fn without(mut schema: JsonObject, hidden: &[&str]) -> JsonObject {
    if let Some(Value::Object(properties)) = schema.get_mut("properties") {
        properties.retain(|name, _| !hidden.contains(&name.as_str()));
    }
    if let Some(Value::Array(required)) = schema.get_mut("required") {
        required.retain(|name| !name.as_str().is_some_and(|n| hidden.contains(&n)));
    }
    schema
}

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
            for property in properties.values_mut() {
                if let Some(Value::Array(types)) = property.get("type") {
                    let types: Vec<&Value> = types.iter().filter(|t| *t != "null").collect();
                    if let [only] = types.as_slice() {
                        let only = (*only).clone();
                        property["type"] = only;
                    }
                }
                if let Some(Value::String(text)) = property.get("description") {
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

/// A `structuredContent` schema: an object with these optional fields. Kept to the
/// fields a program branches on; a result may carry more (e.g. `step`).
fn output_schema(fields: &[(&str, &str)]) -> Arc<JsonObject> {
    let properties: JsonObject = fields
        .iter()
        .map(|(name, ty)| (name.to_string(), json!({ "type": ty })))
        .collect();
    let mut schema = JsonObject::new();
    schema.insert("type".into(), json!("object"));
    schema.insert("properties".into(), Value::Object(properties));
    Arc::new(schema)
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

    #[test]
    fn the_tool_list_fits_in_four_kilobytes() {
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
