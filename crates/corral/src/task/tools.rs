//! The tools a task's model gets: the command and file tools of [`crate::tools::TOOLS`] (the same table,
//! descriptions, schemas and dispatch the MCP server uses), plus the loop's own `done`,
//! each answer rendered to the text the model reads.

use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{DenialStatus, Error, ErrorKind};
use crate::run::Run;
use crate::tools::{Offer, TOOLS, ToolAnswer, schema_of};
use crate::{CallOptions, Cancel, host_shell::HostLines};

use super::model::ToolSpec;

/// The status of a call the approver did not approve (asked and declined, or with no one
/// to ask): the model reads why, and a person's last line counts them.
pub const NOT_APPROVED: &str = "not approved";

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

/// What the model is told of every tool in a run where lines outside the grammar go
/// where `host` says, in the order offered.
pub fn specs(host: HostLines) -> Vec<ToolSpec> {
    offered()
        .map(|t| ToolSpec {
            name: t.name().into(),
            description: t.description(host).into(),
            input_schema: t.input_schema(),
        })
        .collect()
}

/// The tools a task's model is offered: the command and file tools. Not `undo`: a
/// person undoes a task's calls with `corral undo`.
fn offered() -> impl Iterator<Item = &'static dyn crate::tools::Tool> {
    let offer = Offer {
        files: true,
        undo: false,
    };
    TOOLS
        .iter()
        .copied()
        .filter(move |t| offer.offers(t.group()))
}

/// The loop's own `done` tool.
pub fn done_spec() -> ToolSpec {
    ToolSpec {
        name: DONE.into(),
        description: "Say the goal is met. corral then runs the verification gate; if it fails, you are told why and go on."
            .into(),
        input_schema: schema_of::<DoneRequest>(true),
    }
}

/// One word for how an answer ended: `exit 0`, `timed out`, `handle 3`, `ok`, …
fn status_word(answer: &ToolAnswer) -> String {
    match answer {
        ToolAnswer::Outcome(o) => match &o.status {
            crate::Status::Exited { code } => format!("exit {code}"),
            crate::Status::Signaled { signal } => format!("signal {signal}"),
            crate::Status::TimedOut { .. } => "timed out".into(),
            crate::Status::Running { handle } => format!("handle {handle}"),
            other => other.outcome().replace('_', " "),
        },
        ToolAnswer::Started(s) => format!("handle {}", s.handle),
        ToolAnswer::Poll(p) => p.state.word().replace('_', " "),
        ToolAnswer::Screen(s) => s.state.word().replace('_', " "),
        ToolAnswer::Output(_) => "read".into(),
        ToolAnswer::File(_) => "ok".into(),
    }
}

/// The step an answer recorded, when it is one the model may name.
fn step_of(answer: &ToolAnswer) -> Option<i64> {
    match answer {
        ToolAnswer::Outcome(o) => Some(o.step.id),
        ToolAnswer::File(f) => Some(f.step.id),
        _ => None,
    }
}

/// Call the tool `name` with `arguments` on `run`. A refusal or a bad request is a result
/// the model reads (`is_error`), not a failure of the loop; only a closed run or a trace
/// that cannot be written is an `Err`.
pub fn dispatch(run: &Run, name: &str, arguments: Value) -> Result<ToolResult, Error> {
    dispatch_until(run, name, arguments, None)
}

/// [`dispatch`], the call ended ([`crate::Status::Cancelled`]) when `interrupt` fires.
pub fn dispatch_until(
    run: &Run,
    name: &str,
    arguments: Value,
    interrupt: Option<&Cancel>,
) -> Result<ToolResult, Error> {
    let started = Instant::now();
    if !offered().any(|t| t.name() == name) {
        let known: Vec<&str> = offered().map(|t| t.name()).chain([DONE]).collect();
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
    }
    let options = CallOptions {
        cancel: interrupt.cloned(),
        ..CallOptions::default()
    };
    let answered = run.call_tool(name, arguments, options);
    match answered {
        Ok(answer) => Ok(ToolResult {
            text: answer.observation().to_string(),
            is_error: false,
            step: step_of(&answer),
            status: status_word(&answer),
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
                    ErrorKind::Refused
                        if e.denial().map(|d| d.status) == Some(DenialStatus::Declined) =>
                    {
                        NOT_APPROVED
                    }
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
