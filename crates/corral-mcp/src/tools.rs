//! The tool list: names, teaching descriptions, input schemas from the library's request
//! types; and the mapping from library results to tool results.
//!
//! Every tool declares an `outputSchema`: models are not shown them, so they cost no
//! prompt, and clients that validate results can.

use std::sync::Arc;

use corral::{
    ErrorKind, HandleState, HostLines, Outcome, OutputView, Poll, Screen, Started, Status,
};
use rmcp::model::{CallToolResult, ContentBlock, JsonObject, Tool};
use schemars::JsonSchema;
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
pub(crate) const OUTPUT: &str = "output";
pub(crate) const READ_FILE: &str = "read_file";
pub(crate) const WRITE_FILE: &str = "write_file";
pub(crate) const LIST_DIR: &str = "list_dir";
pub(crate) const APPLY_PATCH: &str = "apply_patch";

const EXEC_DESCRIPTION: &str = "Run one argv without a shell. \
Returns status, time and the output's head and tail.";

/// `shell`'s description, by where a line outside the grammar runs in this run.
fn shell_description(host: HostLines) -> &'static str {
    match host {
        HostLines::Refused => {
            "Run a command line, no shell: quotes, | && || ;, redirects, <<'EOF', NAME=v cmd, ~, cd, \
globs. $VAR, $( ), loops and & are refused with what to do instead. Result as for exec."
        }
        HostLines::InSandbox => {
            "Run a command line: quotes, | && || ;, redirects, <<'EOF', NAME=v cmd, ~, cd, globs run \
without a shell; other bash ($VAR, $( ), loops, &) under bash -c in the sandbox. Result as for exec."
        }
        HostLines::WhenApproved => {
            "Run a command line: quotes, | && || ;, redirects, <<'EOF', NAME=v cmd, ~, cd, globs run \
without a shell; other bash ($VAR, $( ), loops, &) under bash -c once a person approves. Result as for exec."
        }
    }
}

const START_DESCRIPTION: &str = "Start a line in the background; returns a handle to poll, write to or kill. \
tty: true runs it on a terminal (a REPL).";

const POLL_DESCRIPTION: &str = "A handle's new output and whether it runs.";

const KILL_DESCRIPTION: &str = "End a handle and all it started; returns its last output.";

const WRITE_DESCRIPTION: &str = "Type into a handle; returns what it printed back.";

const KEYS_DESCRIPTION: &str = "Press keys; returns output as shell_write.";

const SCREEN_DESCRIPTION: &str = "A terminal handle's screen as text, with the cursor.";

const OUTPUT_DESCRIPTION: &str = "Read what a result left out: lines, bytes, head, tail or grep, \
numbered like grep -n.";

const READ_FILE_DESCRIPTION: &str =
    "Read a workspace file, lines numbered; offset and limit page it.";

const WRITE_FILE_DESCRIPTION: &str = "Create or replace a workspace file with the whole content.";

const LIST_DIR_DESCRIPTION: &str =
    "List a workspace directory: dirs end in /, files show their size.";

const APPLY_PATCH_DESCRIPTION: &str = "Apply a patch (*** Begin Patch: Add, Update with @@ hunks, Delete or \
Move File) all or nothing; says which hunk did not apply and why.";

/// The tools a server offers: the command tools, told where a line outside the grammar
/// runs (`host`), and with `file_tools` the workspace file tools too (`corral mcp
/// --file-tools`; clients such as Claude Code and Codex have their own, and every tool
/// costs each prompt its description).
pub(crate) fn list(file_tools: bool, host: HostLines) -> Arc<Vec<Tool>> {
    let mut tools = command_tools(host);
    if file_tools {
        tools.extend(file_tools_list());
    }
    Arc::new(tools)
}

/// The tools that run commands and read what they printed.
fn command_tools(host: HostLines) -> Vec<Tool> {
    vec![
        tool(
            EXEC,
            EXEC_DESCRIPTION,
            input_schema::<corral::ExecRequest>(),
        ),
        tool(
            SHELL,
            shell_description(host),
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
        tool(
            OUTPUT,
            OUTPUT_DESCRIPTION,
            input_schema::<corral::OutputRequest>(),
        ),
    ]
}

/// The workspace file tools: what `read_file`, `write_file`, `list_dir` and `apply_patch`
/// do on [`corral::Run`], confined to the workspace and checked by the policy.
fn file_tools_list() -> Vec<Tool> {
    vec![
        tool(
            READ_FILE,
            READ_FILE_DESCRIPTION,
            input_schema::<corral::ReadFileRequest>(),
        ),
        tool(
            WRITE_FILE,
            WRITE_FILE_DESCRIPTION,
            input_schema::<corral::WriteFileRequest>(),
        ),
        tool(
            LIST_DIR,
            LIST_DIR_DESCRIPTION,
            input_schema::<corral::ListDirRequest>(),
        ),
        tool(
            APPLY_PATCH,
            APPLY_PATCH_DESCRIPTION,
            input_schema::<corral::PatchRequest>(),
        ),
    ]
}

/// A tool with its input schema and the output schema of the results it returns.
fn tool(name: &'static str, description: &'static str, input: JsonObject) -> Tool {
    let output = if name == SCREEN {
        schema::<ScreenFields>(false)
    } else {
        schema::<Fields>(false)
    };
    let mut tool = Tool::new(name, description, Arc::new(input));
    tool.output_schema = Some(Arc::new(output));
    tool
}

/// Fields whose description the tool's own says already: `handle` ("the handle id
/// `shell_start` returned") would cost every handle tool 45 bytes of every prompt.
const SELF_EVIDENT: &[&str] = &["handle"];

/// The schema of `T` as MCP wants an input schema: an object, with the descriptions of
/// its fields kept and the generator's decorations (`$schema`, titles, formats) dropped.
fn input_schema<T: schemars::JsonSchema>() -> JsonObject {
    schema::<T>(true)
}

/// The schema of `T`, an object. An input schema (`input`) loses what costs a model's
/// prompt and teaches it nothing; an output schema, which models are not shown, keeps
/// extra fields allowed, so a client validating results accepts fields added later.
fn schema<T: schemars::JsonSchema>(input: bool) -> JsonObject {
    let schema = schemars::generate::SchemaSettings::draft2020_12()
        .into_generator()
        .into_root_schema_for::<T>();
    let mut value = serde_json::to_value(schema).unwrap_or_else(|_| json!({"type": "object"}));
    if let Value::Object(top) = &mut value {
        top.remove("$schema");
        top.remove("title");
        top.remove("description");
        // Unknown fields are still refused, with their names; saying so costs every prompt.
        if input {
            top.remove("additionalProperties");
        }
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
                // A u16's bound: nobody asks for a terminal that large.
                if object.get("maximum") == Some(&json!(u16::MAX)) {
                    object.remove("maximum");
                }
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

/// A result's `structuredContent`: the text the model reads, and the same facts as fields.
///
/// Clients differ in which channel they hand the model: some read `content`, others
/// `structuredContent` alone. So `observation` carries the whole text on both.
#[derive(Debug, Default, Serialize, JsonSchema)]
pub(crate) struct Fields {
    /// The text the model reads: status line, head and tail of the output, and how to read
    /// what was left out. The same text as the result's content.
    pub observation: String,
    /// How the call ended: exited, signaled, timed_out, cancelled, unavailable, running;
    /// refused or declined (nothing ran); sandbox-denied (it ran, and the sandbox
    /// stopped something it tried).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timed_out: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wall_ms: Option<f64>,
    /// Bytes of output the observation left out, both streams together.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub omitted_bytes: Option<u64>,
    /// The call's step in the trace; the `output` tool reads its captures.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub handle: Option<u32>,
    /// Where a handle is: running, exited, killed, run_ended, orphaned.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped_bytes: Option<u64>,
    /// The rule that refused or asked, as written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    /// Where the decision came from: a policy layer, grammar, terminal or sandbox.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub layer: Option<String>,
    /// What to do instead.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

impl Fields {
    pub fn status(&mut self, status: &Status) {
        self.status = Some(status.outcome().to_string());
        self.exit(status);
        self.timed_out = Some(matches!(status, Status::TimedOut { .. }));
        if let Status::Running { handle } = status {
            self.handle = Some(*handle);
            self.state = Some("running".into());
        }
    }

    fn exit(&mut self, status: &Status) {
        match status {
            Status::Exited { code } => self.exit_code = Some(*code),
            Status::Signaled { signal } => self.signal = Some(*signal),
            _ => {}
        }
    }

    /// The result: `observation` as the text content, and every field.
    pub fn result(self) -> CallToolResult {
        let mut result =
            CallToolResult::success(vec![ContentBlock::text(self.observation.clone())]);
        result.structured_content = serde_json::to_value(&self).ok();
        result
    }
}

/// A finished foreground call.
pub(crate) fn outcome_result(outcome: &Outcome) -> CallToolResult {
    let mut fields = Fields {
        observation: outcome.observation.clone(),
        ..Fields::default()
    };
    fields.status(&outcome.status);
    fields.wall_ms = Some(outcome.wall.as_secs_f64() * 1000.0);
    fields.omitted_bytes =
        Some(outcome.stdout.window.omitted_bytes + outcome.stderr.window.omitted_bytes);
    fields.step = Some(outcome.step.id);
    if let Some(denial) = outcome
        .sandbox
        .as_ref()
        .and_then(|s| s.suspected_denial.as_ref())
    {
        fields.status = Some("sandbox-denied".into());
        fields.layer = Some("sandbox".into());
        fields.hint = Some(denial.clone());
    }
    fields.result()
}

/// A handle that was started.
pub(crate) fn started_result(started: &Started) -> CallToolResult {
    Fields {
        observation: started.observation.clone(),
        status: Some("running".into()),
        handle: Some(started.handle),
        state: Some("running".into()),
        ..Fields::default()
    }
    .result()
}

/// A handle polled or killed.
pub(crate) fn poll_result(poll: &Poll) -> CallToolResult {
    let mut fields = Fields {
        observation: poll.observation.clone(),
        status: Some(poll.state.word().to_string()),
        handle: Some(poll.handle),
        state: Some(poll.state.word().to_string()),
        skipped_bytes: Some(poll.skipped_bytes),
        ..Fields::default()
    };
    if let HandleState::Exited { status } = &poll.state {
        fields.exit(status);
    }
    fields.result()
}

/// A file tool's answer.
pub(crate) fn file_result(outcome: &corral::FileOutcome) -> CallToolResult {
    Fields {
        observation: outcome.observation.clone(),
        status: Some("done".into()),
        step: Some(outcome.step.id),
        ..Fields::default()
    }
    .result()
}

/// Part of a capture, read.
pub(crate) fn output_result(view: &OutputView) -> CallToolResult {
    Fields {
        observation: view.observation.clone(),
        status: Some("read".into()),
        ..Fields::default()
    }
    .result()
}

/// What a screen result carries besides the observation.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct ScreenFields {
    /// The screen as text, with the cursor: the same text as the result's content.
    pub observation: String,
    pub handle: u32,
    /// Where the handle is: running, exited, killed, run_ended, orphaned.
    pub state: String,
    pub rows: u16,
    pub cols: u16,
    /// Where the cursor is, counting from 0.
    pub cursor: Cursor,
    /// The screen's rows, top to bottom.
    pub lines: Vec<String>,
    /// Whether a full-screen program (an editor, a pager) has switched screens.
    pub alternate_screen: bool,
}

/// A position on a terminal's screen.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct Cursor {
    pub row: u16,
    pub col: u16,
}

/// A terminal handle's screen: where it is, its size, the cursor (from 0) and its rows.
pub(crate) fn screen_result(screen: &Screen) -> CallToolResult {
    let fields = ScreenFields {
        observation: screen.observation.clone(),
        handle: screen.handle,
        state: screen.state.word().to_string(),
        rows: screen.rows,
        cols: screen.cols,
        cursor: Cursor {
            row: screen.cursor_row,
            col: screen.cursor_col,
        },
        lines: screen.lines.clone(),
        alternate_screen: screen.alternate_screen,
    };
    let mut result = CallToolResult::success(vec![ContentBlock::text(screen.observation.clone())]);
    result.structured_content = serde_json::to_value(&fields).ok();
    result
}

/// A request that could not be carried out.
///
/// A refusal or a declined approval is an ordinary result (`status: refused` or
/// `declined`, with `rule`, `layer` and `hint`): nothing ran, and the model is told what
/// to do instead. Clients such as pydantic-ai count tool errors as failed attempts and
/// end the agent's run after a few; a refusal is not the model's mistake. A request
/// corral could not understand, or its own failure, stays a tool error.
pub(crate) fn error_result(error: &corral::Error) -> CallToolResult {
    match error.kind() {
        ErrorKind::Refused => {
            let (status, rule, layer, hint) = match error.denial() {
                Some(d) => (
                    d.status.word(),
                    d.rule.clone(),
                    d.layer.clone(),
                    d.hint.clone(),
                ),
                None => ("refused", None, None, error.to_string()),
            };
            Fields {
                observation: error.to_string(),
                status: Some(status.to_string()),
                rule,
                layer,
                hint: Some(hint),
                ..Fields::default()
            }
            .result()
        }
        ErrorKind::InvalidRequest | ErrorKind::Closed => error_text(error.to_string()),
        _ => error_text(format!("corral failed, nothing more was run: {error}")),
    }
}

/// A tool error with `text`.
pub(crate) fn error_text(text: impl Into<String>) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(text.into())])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a model is shown of the tools (names, descriptions, input schemas) stays
    /// under 4 KiB. Output schemas are for programs validating results; models are not
    /// shown them, so they do not count.
    #[test]
    fn what_a_model_is_shown_of_the_tools_stays_small() {
        for host in [
            HostLines::Refused,
            HostLines::InSandbox,
            HostLines::WhenApproved,
        ] {
            let shown: Vec<Tool> = list(false, host)
                .iter()
                .cloned()
                .map(|mut tool| {
                    tool.output_schema = None;
                    tool
                })
                .collect();
            let json = serde_json::to_string(&json!({ "tools": shown })).unwrap();
            println!(
                "tools/list without output schemas ({host:?}): {} bytes",
                json.len()
            );
            assert!(json.len() < 4096, "{} bytes:\n{json}", json.len());
        }
    }

    #[test]
    fn every_tool_declares_an_output_schema_with_the_observation() {
        for tool in list(true, HostLines::InSandbox).iter() {
            let schema = tool.output_schema.as_ref().expect(&tool.name);
            assert_eq!(schema.get("type"), Some(&json!("object")), "{}", tool.name);
            assert!(
                schema["properties"].get("observation").is_some(),
                "{}",
                tool.name
            );
            assert!(
                schema["required"]
                    .as_array()
                    .unwrap()
                    .contains(&json!("observation")),
                "{}",
                tool.name
            );
        }
    }

    #[test]
    fn input_schemas_are_objects_with_their_fields() {
        for tool in list(true, HostLines::InSandbox).iter() {
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
