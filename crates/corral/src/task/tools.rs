//! The tools a task's model gets: one table of name, description, input schema (from the
//! request type) and call (a [`Run`] method, rendered to what the model reads).
//!
//! This table is the one place a tool is defined for the loop; it calls `Run`'s public
//! methods, so any surface (the MCP server, the CLI) can dispatch through it too.

use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::error::{Error, ErrorKind};
use crate::run::Run;
use crate::{
    ExecRequest, FileOutcome, KeysRequest, KillRequest, ListDirRequest, Outcome, PatchRequest,
    Poll, PollRequest, ReadFileRequest, ScreenRequest, ShellRequest, StartRequest,
    WriteFileRequest, WriteRequest,
};

use super::model::ToolSpec;

/// The name of the loop's own tool that asks for the gate.
pub const DONE: &str = "done";

/// Ask for the verification gate: the model believes the goal is met.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DoneRequest {
    /// What was changed and why, in a sentence or two.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
}

/// What one tool call produced, for the model and for a person watching.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ToolResult {
    /// The text the model reads.
    pub text: String,
    /// The call failed: refused, or a bad request. The run goes on.
    pub is_error: bool,
    /// The step in the trace, when one was recorded.
    pub step: Option<i64>,
    /// One word for how it ended: `exit 0`, `exit 1`, `timed out`, `ok`, `refused`, …
    pub status: String,
    /// How long the call took.
    #[serde(serialize_with = "millis")]
    pub wall: Duration,
}

fn millis<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u64(d.as_millis() as u64)
}

/// One tool: its name, what the model is told, its input schema, and how it is called.
#[derive(Clone, Copy)]
pub struct ToolDef {
    /// The name the model calls.
    pub name: &'static str,
    /// What the model is told it does.
    pub description: &'static str,
    /// Its input schema.
    pub schema: fn() -> Value,
    call: fn(&Run, Value) -> Result<Rendered, Error>,
}

impl std::fmt::Debug for ToolDef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolDef").field("name", &self.name).finish()
    }
}

impl ToolDef {
    /// The tool as offered to a model.
    pub fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: self.name.into(),
            description: self.description.into(),
            input_schema: (self.schema)(),
        }
    }
}

/// A successful call, rendered.
struct Rendered {
    text: String,
    step: Option<i64>,
    status: String,
}

fn outcome(o: Outcome) -> Rendered {
    Rendered {
        status: match &o.status {
            crate::Status::Exited { code } => format!("exit {code}"),
            crate::Status::Signaled { signal } => format!("signal {signal}"),
            crate::Status::TimedOut { .. } => "timed out".into(),
            crate::Status::Running { handle } => format!("handle {handle}"),
            other => other.outcome().replace('_', " "),
        },
        step: Some(o.step.id),
        text: o.observation,
    }
}

fn file(o: FileOutcome) -> Rendered {
    Rendered {
        text: o.observation,
        step: Some(o.step.id),
        status: "ok".into(),
    }
}

fn poll(p: Poll) -> Rendered {
    Rendered {
        status: p.state.word().replace('_', " "),
        text: p.observation,
        step: None,
    }
}

fn args<T: DeserializeOwned>(tool: &str, value: Value) -> Result<T, Error> {
    let value = if value.is_null() { json!({}) } else { value };
    serde_json::from_value(value).map_err(|e| {
        Error::invalid_request(format!(
            "invalid arguments for {tool}: {e}; send an object that matches the tool's input schema"
        ))
    })
}

/// Fields whose description the tool's own says already: `handle` ("the handle id
/// `shell_start` returned") would cost every handle tool bytes of every prompt.
const SELF_EVIDENT: &[&str] = &["handle"];

/// The input schema of a request type, as a model reads it: an object with its fields'
/// descriptions (each one sentence on one line), without the generator's decorations
/// (`$schema`, titles, formats, `null` in an optional field's type). Unknown fields are
/// still refused when the call is read, with their names; saying so costs every prompt.
pub fn input_schema<T: JsonSchema>() -> Value {
    let schema = schemars::generate::SchemaSettings::draft2020_12()
        .into_generator()
        .into_root_schema_for::<T>();
    let mut value = serde_json::to_value(schema).unwrap_or_else(|_| json!({"type": "object"}));
    if let Value::Object(top) = &mut value {
        for key in ["$schema", "title", "description", "additionalProperties"] {
            top.remove(key);
        }
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
                    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
                    property["description"] = Value::String(text);
                }
            }
        }
    }
    strip_decorations(&mut value);
    value
}

/// Remove `format` (`uint64`, …) and the zero `minimum` that comes with it.
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

/// Every tool the loop offers, in the order offered.
pub const TOOLS: &[ToolDef] = &[
    ToolDef {
        name: "exec",
        description: "Run a program with arguments, no shell: `;` `|` `$( )` `>` are plain bytes. \
            Returns status, time and output (head and tail kept). The policy may refuse, saying what to do instead.",
        schema: input_schema::<ExecRequest>,
        call: |run, v| run.exec(&args("exec", v)?).map(outcome),
    },
    ToolDef {
        name: "shell",
        description: "Run a command line in corral's grammar, no shell: quotes, | && || ; < > >> 2> 2>&1, NAME=v cmd, cd DIR. \
            $VAR, $( ), globs, ~, subshells, heredocs and & are refused with what to do instead. Result as for exec.",
        schema: input_schema::<ShellRequest>,
        call: |run, v| run.shell(&args("shell", v)?).map(outcome),
    },
    ToolDef {
        name: "read_file",
        description: "Read a text file in the workspace: numbered lines, a range with offset and limit.",
        schema: input_schema::<ReadFileRequest>,
        call: |run, v| run.read_file(&args("read_file", v)?).map(file),
    },
    ToolDef {
        name: "write_file",
        description: "Create or replace a whole file in the workspace. For small changes to a file, prefer apply_patch.",
        schema: input_schema::<WriteFileRequest>,
        call: |run, v| run.write_file(&args("write_file", v)?).map(file),
    },
    ToolDef {
        name: "list_dir",
        description: "List a directory in the workspace, two levels down by default.",
        schema: input_schema::<ListDirRequest>,
        call: |run, v| run.list_dir(&args("list_dir", v)?).map(file),
    },
    ToolDef {
        name: "apply_patch",
        description: "Change files with a patch, all of it or none: *** Begin Patch, then *** Add File: P / *** Update File: P \
            (hunks: @@ line to find, then ' ' context, '-' remove, '+' add lines) / *** Delete File: P, then *** End Patch.",
        schema: input_schema::<PatchRequest>,
        call: |run, v| run.apply_patch(&args("apply_patch", v)?).map(file),
    },
    ToolDef {
        name: "output",
        description: "Read what a result left out, numbered like grep -n: one of lines \"A-B\", bytes \"A-B\", \
            head N, tail N, or grep REGEX with context N, of a step's or a handle's output.",
        schema: input_schema::<crate::OutputRequest>,
        call: |run, v| {
            run.output(&args("output", v)?).map(|o| Rendered {
                status: "read".into(),
                text: o.observation,
                step: None,
            })
        },
    },
    ToolDef {
        name: "shell_start",
        description: "Start a command line in the background; returns a handle. Read with shell_poll, end with shell_kill.",
        schema: input_schema::<StartRequest>,
        call: |run, v| {
            run.shell_start(&args("shell_start", v)?).map(|s| Rendered {
                status: format!("handle {}", s.handle),
                text: s.observation,
                step: None,
            })
        },
    },
    ToolDef {
        name: "shell_poll",
        description: "A handle's new output (the newest, if too much) and whether it runs.",
        schema: input_schema::<PollRequest>,
        call: |run, v| run.shell_poll(&args("shell_poll", v)?).map(poll),
    },
    ToolDef {
        name: "shell_kill",
        description: "End a handle and all it started; returns its last output.",
        schema: input_schema::<KillRequest>,
        call: |run, v| run.shell_kill(&args("shell_kill", v)?).map(poll),
    },
    ToolDef {
        name: "shell_write",
        description: "Type into a handle; returns what it printed within its yield_ms.",
        schema: input_schema::<WriteRequest>,
        call: |run, v| run.shell_write(&args("shell_write", v)?).map(poll),
    },
    ToolDef {
        name: "shell_keys",
        description: "Press keys, in tmux spelling; returns output as shell_write.",
        schema: input_schema::<KeysRequest>,
        call: |run, v| run.shell_keys(&args("shell_keys", v)?).map(poll),
    },
    ToolDef {
        name: "shell_screen",
        description: "A tty handle's screen as a person would see it, with the cursor.",
        schema: input_schema::<ScreenRequest>,
        call: |run, v| {
            run.shell_screen(&args("shell_screen", v)?)
                .map(|s| Rendered {
                    status: s.state.word().replace('_', " "),
                    text: s.observation,
                    step: None,
                })
        },
    },
];

/// The loop's own `done` tool.
pub fn done_spec() -> ToolSpec {
    ToolSpec {
        name: DONE.into(),
        description: "Say the goal is met. corral then runs the verification gate; if it fails, you are told why and go on."
            .into(),
        input_schema: input_schema::<DoneRequest>(),
    }
}

/// The tool named `name`.
pub fn find(name: &str) -> Option<&'static ToolDef> {
    TOOLS.iter().find(|t| t.name == name)
}

/// Call the tool `name` with `arguments` on `run`. A refusal or a bad request is a result
/// the model reads (`is_error`), not a failure of the loop; only a closed run or a trace
/// that cannot be written is an `Err`.
pub fn dispatch(run: &Run, name: &str, arguments: Value) -> Result<ToolResult, Error> {
    let started = Instant::now();
    let Some(tool) = find(name) else {
        let known: Vec<&str> = TOOLS.iter().map(|t| t.name).chain([DONE]).collect();
        return Ok(ToolResult {
            text: format!(
                "error: there is no tool {name:?}: use one of {}",
                known.join(", ")
            ),
            is_error: true,
            step: None,
            status: "unknown tool".into(),
            wall: started.elapsed(),
        });
    };
    match (tool.call)(run, arguments) {
        Ok(r) => Ok(ToolResult {
            text: r.text,
            is_error: false,
            step: r.step,
            status: r.status,
            wall: started.elapsed(),
        }),
        Err(e) => match e.kind() {
            ErrorKind::Closed | ErrorKind::Store => Err(e),
            kind => Ok(ToolResult {
                text: if kind == ErrorKind::Io {
                    format!("error: corral failed, nothing more was run: {e}")
                } else {
                    format!("error: {e}")
                },
                is_error: true,
                step: None,
                status: match kind {
                    ErrorKind::Refused => "refused",
                    ErrorKind::Io => "failed",
                    _ => "invalid",
                }
                .into(),
                wall: started.elapsed(),
            }),
        },
    }
}
