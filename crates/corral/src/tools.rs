//! One definition of every tool a model is offered: its name, what the model is told, its
//! input schema, and the call it makes on a [`Run`]. The MCP server and the task loop both
//! read [`TOOLS`], parse a call with [`ToolCall::parse`] and run it with
//! [`Run::call_tool`]; each renders the [`ToolAnswer`] its own way (MCP as content and
//! structured fields, the loop as the text a model reads).

use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::call::CallOptions;
use crate::error::{Error, Result};
use crate::run::Run;
use crate::{
    ExecRequest, Outcome, ShellRequest, files::FileOutcome, files::ListDirRequest,
    files::ReadFileRequest, files::WriteFileRequest, handle::KeysRequest, handle::KillRequest,
    handle::Poll, handle::PollRequest, handle::Screen, handle::ScreenRequest, handle::StartRequest,
    handle::Started, handle::WriteRequest, host_shell::HostLines, output::OutputRequest,
    output::OutputView, patch::PatchRequest,
};

/// Which tools a surface offers: the ones that run commands and read what they printed,
/// and the workspace file tools (which clients with file tools of their own leave out).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Group {
    /// `exec`, `shell`, the handle tools, `output`.
    Commands,
    /// `read_file`, `write_file`, `list_dir`, `apply_patch`.
    Files,
}

/// One tool.
#[derive(Debug, Clone, Copy)]
pub struct Tool {
    /// The name the model calls.
    pub name: &'static str,
    /// Which tools it is offered with.
    pub group: Group,
    description: fn(HostLines) -> &'static str,
    schema: fn() -> Value,
}

impl Tool {
    /// What the model is told the tool does, in a run where a line outside corral's
    /// grammar goes where `host` says (only `shell`'s words depend on it).
    pub fn description(&self, host: HostLines) -> &'static str {
        (self.description)(host)
    }

    /// The input schema, as a model reads it (see [`schema_of`]).
    pub fn input_schema(&self) -> Value {
        (self.schema)()
    }
}

/// `shell`'s description, by where a line outside the grammar runs.
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

const fn tool(
    name: &'static str,
    group: Group,
    description: fn(HostLines) -> &'static str,
    schema: fn() -> Value,
) -> Tool {
    Tool {
        name,
        group,
        description,
        schema,
    }
}

/// Every tool, in the order offered.
pub const TOOLS: &[Tool] = &[
    tool(
        "exec",
        Group::Commands,
        |_| "Run one argv without a shell. Returns status, time and the output's head and tail.",
        || schema_of::<ExecRequest>(true),
    ),
    tool("shell", Group::Commands, shell_description, || {
        schema_of::<ShellRequest>(true)
    }),
    tool(
        "shell_start",
        Group::Commands,
        |_| "Start a line in the background; returns a handle to poll, write to or kill.",
        || schema_of::<StartRequest>(true),
    ),
    tool(
        "shell_poll",
        Group::Commands,
        |_| "A handle's new output and whether it runs.",
        || schema_of::<PollRequest>(true),
    ),
    tool(
        "shell_kill",
        Group::Commands,
        |_| "End a handle and all it started; returns its last output.",
        || schema_of::<KillRequest>(true),
    ),
    tool(
        "shell_write",
        Group::Commands,
        |_| "Type into a handle; returns what it printed back.",
        || schema_of::<WriteRequest>(true),
    ),
    tool(
        "shell_keys",
        Group::Commands,
        |_| "Press keys; returns output as shell_write.",
        || schema_of::<KeysRequest>(true),
    ),
    tool(
        "shell_screen",
        Group::Commands,
        |_| "A terminal handle's screen as text, with the cursor.",
        || schema_of::<ScreenRequest>(true),
    ),
    tool(
        "output",
        Group::Commands,
        |_| "Read what a result left out: lines, bytes, head, tail or grep, numbered like grep -n.",
        || schema_of::<OutputRequest>(true),
    ),
    tool(
        "read_file",
        Group::Files,
        |_| "Read a workspace file, lines numbered; offset and limit page it.",
        || schema_of::<ReadFileRequest>(true),
    ),
    tool(
        "write_file",
        Group::Files,
        |_| {
            "Create or replace a workspace file with the whole content; for a small change to a \
         file, apply_patch."
        },
        || schema_of::<WriteFileRequest>(true),
    ),
    tool(
        "list_dir",
        Group::Files,
        |_| "List a workspace directory: dirs end in /, files show their size.",
        || schema_of::<ListDirRequest>(true),
    ),
    tool(
        "apply_patch",
        Group::Files,
        |_| {
            "Change files with a patch, all of it or none: *** Begin Patch, then *** Add File: P / \
         *** Update File: P (hunks: @@ line to find, then ' ' context, '-' remove, '+' add \
         lines) / *** Delete File: P, then *** End Patch. Add File and Move to refuse an \
         existing file. Says which hunk did not apply and why."
        },
        || schema_of::<PatchRequest>(true),
    ),
];

/// The tool named `name`.
pub fn find(name: &str) -> Option<&'static Tool> {
    TOOLS.iter().find(|t| t.name == name)
}

/// A call of one tool, its arguments read.
#[derive(Debug, Clone)]
#[allow(missing_docs)]
pub enum ToolCall {
    Exec(ExecRequest),
    Shell(ShellRequest),
    Start(StartRequest),
    Poll(PollRequest),
    Kill(KillRequest),
    Write(WriteRequest),
    Keys(KeysRequest),
    Screen(ScreenRequest),
    Output(OutputRequest),
    ReadFile(ReadFileRequest),
    WriteFile(WriteFileRequest),
    ListDir(ListDirRequest),
    ApplyPatch(PatchRequest),
}

impl ToolCall {
    /// Read a call of the tool `name` (`null` arguments are none). A tool that does not
    /// exist, or arguments that do not fit its schema, are a bad request that says what to
    /// send instead.
    pub fn parse(name: &str, arguments: Value) -> Result<ToolCall> {
        fn read<T: DeserializeOwned>(tool: &str, value: Value) -> Result<T> {
            let value = if value.is_null() { json!({}) } else { value };
            serde_json::from_value(value).map_err(|e| {
                Error::invalid(format!(
                    "invalid arguments for {tool}: {e}; send an object that matches the tool's input schema"
                ))
            })
        }
        let v = arguments;
        Ok(match name {
            "exec" => ToolCall::Exec(read(name, v)?),
            "shell" => ToolCall::Shell(read(name, v)?),
            "shell_start" => ToolCall::Start(read(name, v)?),
            "shell_poll" => ToolCall::Poll(read(name, v)?),
            "shell_kill" => ToolCall::Kill(read(name, v)?),
            "shell_write" => ToolCall::Write(read(name, v)?),
            "shell_keys" => ToolCall::Keys(read(name, v)?),
            "shell_screen" => ToolCall::Screen(read(name, v)?),
            "output" => ToolCall::Output(read(name, v)?),
            "read_file" => ToolCall::ReadFile(read(name, v)?),
            "write_file" => ToolCall::WriteFile(read(name, v)?),
            "list_dir" => ToolCall::ListDir(read(name, v)?),
            "apply_patch" => ToolCall::ApplyPatch(read(name, v)?),
            other => {
                let known: Vec<&str> = TOOLS.iter().map(|t| t.name).collect();
                return Err(Error::invalid(format!(
                    "there is no tool {other:?}: use one of {}",
                    known.join(", ")
                )));
            }
        })
    }
}

/// What a tool call answered.
#[derive(Debug, Clone)]
#[allow(missing_docs)]
pub enum ToolAnswer {
    Outcome(Box<Outcome>),
    Started(Box<Started>),
    Poll(Poll),
    Screen(Screen),
    Output(OutputView),
    File(FileOutcome),
}

impl ToolAnswer {
    /// The text the model reads.
    pub fn observation(&self) -> &str {
        match self {
            ToolAnswer::Outcome(o) => &o.observation,
            ToolAnswer::Started(s) => &s.observation,
            ToolAnswer::Poll(p) => &p.observation,
            ToolAnswer::Screen(s) => &s.observation,
            ToolAnswer::Output(o) => &o.observation,
            ToolAnswer::File(f) => &f.observation,
        }
    }
}

impl Run {
    /// Run one tool call; `options` (live output, cancellation) apply to `exec` and
    /// `shell`.
    pub fn call_tool(&self, call: ToolCall, options: CallOptions) -> Result<ToolAnswer> {
        Ok(match call {
            ToolCall::Exec(r) => ToolAnswer::Outcome(Box::new(self.exec_with(&r, options)?)),
            ToolCall::Shell(r) => ToolAnswer::Outcome(Box::new(self.shell_with(&r, options)?)),
            ToolCall::Start(r) => ToolAnswer::Started(Box::new(self.shell_start(&r)?)),
            ToolCall::Poll(r) => ToolAnswer::Poll(self.shell_poll(&r)?),
            ToolCall::Kill(r) => ToolAnswer::Poll(self.shell_kill(&r)?),
            ToolCall::Write(r) => ToolAnswer::Poll(self.shell_write(&r)?),
            ToolCall::Keys(r) => ToolAnswer::Poll(self.shell_keys(&r)?),
            ToolCall::Screen(r) => ToolAnswer::Screen(self.shell_screen(&r)?),
            ToolCall::Output(r) => ToolAnswer::Output(self.output(&r)?),
            ToolCall::ReadFile(r) => ToolAnswer::File(self.read_file(&r)?),
            ToolCall::WriteFile(r) => ToolAnswer::File(self.write_file(&r)?),
            ToolCall::ListDir(r) => ToolAnswer::File(self.list_dir(&r)?),
            ToolCall::ApplyPatch(r) => ToolAnswer::File(self.apply_patch(&r)?),
        })
    }
}

/// Fields whose description the tool's own says already: `handle` ("the handle id
/// `shell_start` returned") would cost every handle tool 45 bytes of every prompt.
/// `max_output` (bytes of output a result shows) says what it is by its name, and a value
/// out of its range is refused with the range.
const SELF_EVIDENT: &[&str] = &["handle", "max_output"];

/// The JSON schema of `T`, an object. An input schema (`input`) loses what costs a
/// model's prompt and teaches it nothing (`$schema`, titles, formats, `null` in an
/// optional field's type, `additionalProperties`: unknown fields are still refused, with
/// their names); an output schema, which models are not shown, keeps extra fields
/// allowed, so a client validating results accepts fields added later.
pub fn schema_of<T: schemars::JsonSchema>(input: bool) -> Value {
    let schema = schemars::generate::SchemaSettings::draft2020_12()
        .into_generator()
        .into_root_schema_for::<T>();
    let mut value = serde_json::to_value(schema).unwrap_or_else(|_| json!({"type": "object"}));
    if let Value::Object(top) = &mut value {
        top.remove("$schema");
        top.remove("title");
        top.remove("description");
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
    value
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
