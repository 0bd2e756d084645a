//! One definition of every tool a model is offered, each in a file of its own: its name,
//! what the model is told, the request it reads (whose type gives the input schema), and
//! the call it makes on a [`Run`]. [`TOOLS`] lists them in the order offered; the MCP
//! server, the task loop and the `corral` command find a tool there, call it with
//! [`Tool::call`] (or [`Def::call_with`] with a typed request), and each renders the
//! [`ToolAnswer`] its own way (MCP as content and structured fields, the loop as the text
//! a model reads).
//!
//! Adding a tool is one file and one entry in [`TOOLS`]. `shell_signal` is the example:
//!
//! ```text
//! // tools/shell_signal.rs
//! pub(crate) static SHELL_SIGNAL: Def<SignalRequest> = Def {
//!     name: "shell_signal",
//!     group: Group::Commands,
//!     answers: Answers::Result,
//!     streams: false,
//!     description: |_| "Signal a handle's processes (INT as Ctrl-C, HUP, TERM, …), not ending it.",
//!     call: |run, request, _| Ok(ToolAnswer::Poll(run.shell_signal(&request)?)),
//! };
//! ```

mod apply_patch;
mod exec;
mod list_dir;
mod output;
mod read_file;
mod shell;
mod shell_keys;
mod shell_kill;
mod shell_poll;
mod shell_screen;
mod shell_signal;
mod shell_start;
mod shell_write;
mod undo;
mod write_file;

use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::call::CallOptions;
use crate::error::{Error, Result};
use crate::run::Run;
use crate::{
    Outcome, files::FileOutcome, handle::Poll, handle::Screen, handle::Started,
    host_shell::HostLines, output::OutputView,
};

pub use exec::EXEC;
pub use shell::SHELL;

/// Which tools a surface offers: the ones that run commands and read what they printed,
/// and the workspace file tools (which clients with file tools of their own leave out).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Group {
    /// `exec`, `shell`, the handle tools, `output`.
    Commands,
    /// `read_file`, `write_file`, `list_dir`, `apply_patch`.
    Files,
    /// `undo`: offered to a model only where the person opts in (`corral mcp
    /// --undo-tool`); `corral undo` is the person's own channel.
    Undo,
}

/// Which of the groups beyond [`Group::Commands`] a surface offers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Offer {
    /// [`Group::Files`].
    pub files: bool,
    /// [`Group::Undo`].
    pub undo: bool,
}

impl Offer {
    /// Whether a tool of `group` is offered.
    pub fn offers(self, group: Group) -> bool {
        match group {
            Group::Commands => true,
            Group::Files => self.files,
            Group::Undo => self.undo,
        }
    }
}

/// What a tool's answers hold, for the surfaces that declare it (MCP's output schema).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answers {
    /// A command's or a handle's result: status, output, how to read on.
    Result,
    /// A terminal's screen.
    Screen,
}

/// One tool: what a model is offered and what a call of it does.
pub trait Tool: Sync {
    /// The name the model calls.
    fn name(&self) -> &'static str;
    /// Which tools it is offered with.
    fn group(&self) -> Group;
    /// What its answers hold.
    fn answers(&self) -> Answers;
    /// Whether a call shows the command's output as it comes (`exec`, `shell`): a surface
    /// passes its live output and cancellation in [`CallOptions`].
    fn streams(&self) -> bool;
    /// What the model is told the tool does, in a run where a line outside corral's
    /// grammar goes where `host` says (only `shell`'s words depend on it).
    fn description(&self, host: HostLines) -> &'static str;
    /// The input schema, as a model reads it (see [`schema_of`]).
    fn input_schema(&self) -> Value;
    /// Read `arguments` (`null` is none) and make the call. Arguments that do not fit
    /// the schema are a bad request that says what to send instead.
    fn call(&self, run: &Run, arguments: Value, options: CallOptions) -> Result<ToolAnswer>;
}

impl std::fmt::Debug for dyn Tool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tool").field("name", &self.name()).finish()
    }
}

/// A tool whose request is `R`: the one way the files of this module define one.
#[derive(Debug)]
pub struct Def<R> {
    /// The name the model calls.
    pub name: &'static str,
    /// Which tools it is offered with.
    pub group: Group,
    /// What its answers hold.
    pub answers: Answers,
    /// Whether a call shows the command's output as it comes (see [`Tool::streams`]).
    pub streams: bool,
    /// What the model is told, by where a line outside the grammar runs.
    pub description: fn(HostLines) -> &'static str,
    /// The call, on a request read.
    pub call: fn(&Run, R, CallOptions) -> Result<ToolAnswer>,
}

impl<R> Def<R> {
    /// Make the call with a request already typed (the `corral` command's own argv, which
    /// may be bytes that are not UTF-8 and so no JSON).
    pub fn call_with(&self, run: &Run, request: R, options: CallOptions) -> Result<ToolAnswer> {
        (self.call)(run, request, options)
    }
}

impl<R: DeserializeOwned + schemars::JsonSchema> Tool for Def<R> {
    fn name(&self) -> &'static str {
        self.name
    }

    fn group(&self) -> Group {
        self.group
    }

    fn answers(&self) -> Answers {
        self.answers
    }

    fn streams(&self) -> bool {
        self.streams
    }

    fn description(&self, host: HostLines) -> &'static str {
        (self.description)(host)
    }

    fn input_schema(&self) -> Value {
        schema_of::<R>(true)
    }

    fn call(&self, run: &Run, arguments: Value, options: CallOptions) -> Result<ToolAnswer> {
        let arguments = if arguments.is_null() {
            json!({})
        } else {
            arguments
        };
        let request: R = match R::deserialize(&arguments) {
            Ok(request) => request,
            Err(e) => {
                let err = Error::invalid(format!(
                    "invalid arguments for {}: {e}; send an object that matches the tool's \
                     input schema",
                    self.name
                ));
                run.ctx
                    .record_invalid_call(self.name, arguments.to_string(), &err);
                return Err(err);
            }
        };
        (self.call)(run, request, options)
    }
}

/// Every tool, in the order offered.
pub static TOOLS: &[&dyn Tool] = &[
    &exec::EXEC,
    &shell::SHELL,
    &shell_start::SHELL_START,
    &shell_poll::SHELL_POLL,
    &shell_kill::SHELL_KILL,
    &shell_signal::SHELL_SIGNAL,
    &shell_write::SHELL_WRITE,
    &shell_keys::SHELL_KEYS,
    &shell_screen::SHELL_SCREEN,
    &output::OUTPUT,
    &read_file::READ_FILE,
    &write_file::WRITE_FILE,
    &list_dir::LIST_DIR,
    &apply_patch::APPLY_PATCH,
    &undo::UNDO,
];

/// The tool named `name`.
pub fn find(name: &str) -> Option<&'static dyn Tool> {
    TOOLS.iter().copied().find(|t| t.name() == name)
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
    /// A command's outcome (`exec`, `shell`), or `None` for another answer.
    pub fn into_outcome(self) -> Option<Outcome> {
        match self {
            ToolAnswer::Outcome(outcome) => Some(*outcome),
            _ => None,
        }
    }

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
    /// Call the tool `name` with `arguments`; `options` (live output, cancellation)
    /// apply to the tools that run a command in the foreground, and cancellation to a
    /// poll that waits. A tool that does not exist is a bad request naming those there are.
    pub fn call_tool(
        &self,
        name: &str,
        arguments: Value,
        options: CallOptions,
    ) -> Result<ToolAnswer> {
        let Some(tool) = find(name) else {
            let known: Vec<&str> = TOOLS.iter().map(|t| t.name()).collect();
            return Err(Error::invalid(format!(
                "there is no tool {name:?}: use one of {}",
                known.join(", ")
            )));
        };
        tool.call(self, arguments, options)
    }
}

/// Fields whose description the tool's own says already: `handle` ("the handle id
/// `shell_start` returned") would cost every handle tool 45 bytes of every prompt.
/// `max_output` (bytes of output a result shows), `step` (a result's), `rows` and `cols`
/// say what they are by their names, and `cwd` (in the workspace) too: a value out of
/// range is refused with what to send instead.
const SELF_EVIDENT: &[&str] = &["handle", "max_output", "step", "rows", "cols", "cwd"];

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
