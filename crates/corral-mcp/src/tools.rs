//! The tool list, from corral's own table of tools (names, descriptions, input schemas
//! from the library's request types); and the mapping from library results to tool
//! results.
//!
//! Every tool declares an `outputSchema`: models are not shown them, so they cost no
//! prompt, and clients that validate results can.

use std::sync::Arc;

use corral::tools::{Answers, Offer, ToolAnswer};
use corral::{
    ErrorKind, Outcome, OutputView, Status, config::host_shell::HostLines, handle::HandleState,
    handle::Poll, handle::Screen, handle::Started,
};
use rmcp::model::{CallToolResult, ContentBlock, JsonObject, Tool};
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

/// The tools a server offers: corral's tools ([`corral::tools::TOOLS`]), `shell`'s
/// description told where a line outside the grammar runs (`host`); the workspace file
/// tools only as `offer` says (`corral mcp --file-tools`: clients such as Claude Code and
/// Codex have their own, and every tool costs each prompt its description), and `undo`
/// too (`--undo-tool`: undo is the person's, unless the person hands it over).
pub(crate) fn list(offer: Offer, host: HostLines) -> Arc<Vec<Tool>> {
    Arc::new(
        corral::tools::TOOLS
            .iter()
            .filter(|t| offer.offers(t.group()))
            .map(|t| tool(*t, host))
            .collect(),
    )
}

/// A tool with its input schema and the output schema of the results it returns.
fn tool(def: &dyn corral::tools::Tool, host: HostLines) -> Tool {
    let output = match def.answers() {
        Answers::Screen => schema::<ScreenFields>(),
        Answers::Result => schema::<Fields>(),
    };
    let mut tool = Tool::new(
        def.name(),
        def.description(host),
        Arc::new(object(def.input_schema())),
    );
    tool.output_schema = Some(Arc::new(output));
    tool
}

/// An output schema: models are not shown it, and it allows fields added later.
fn schema<T: JsonSchema>() -> JsonObject {
    object(corral::tools::schema_of::<T>(false))
}

fn object(value: Value) -> JsonObject {
    match value {
        Value::Object(object) => object,
        _ => JsonObject::new(),
    }
}

/// A result's `structuredContent`: the text the model reads, and the same facts as fields.
///
/// Clients differ in which channel they hand the model: some read `content`, others
/// `structuredContent` alone. So `observation` carries the whole text on both. A client
/// that hands over the whole structured result shows the fields too, on every call: each
/// is there only when it says something (no `timed_out: false`, no `omitted_bytes: 0`).
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
    /// `true` when the call reached its time limit; absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timed_out: Option<bool>,
    /// Wall-clock time, in whole milliseconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wall_ms: Option<u64>,
    /// Bytes of output the observation left out, both streams together; absent when it
    /// left out none.
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
    /// Bytes printed since the previous poll that it skipped (more than one window was
    /// waiting); absent when it skipped none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped_bytes: Option<u64>,
    /// The rule that refused or asked, as written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    /// Where the decision came from: a policy layer, grammar, terminal, workspace or
    /// sandbox. What to do instead is in the observation, once: clients that hand a model
    /// the whole structured result (pydantic-ai) would show it twice.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub layer: Option<String>,
}

impl Fields {
    pub fn status(&mut self, status: &Status) {
        self.status = Some(status.outcome().to_string());
        self.exit(status);
        self.timed_out = matches!(status, Status::TimedOut { .. }).then_some(true);
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
    fields.wall_ms = Some(outcome.wall.as_millis() as u64);
    fields.omitted_bytes =
        Some(outcome.stdout.window.omitted_bytes + outcome.stderr.window.omitted_bytes)
            .filter(|&n| n > 0);
    fields.step = Some(outcome.step.id);
    // The observation says what the sandbox may have refused, and what to do.
    if outcome
        .sandbox
        .as_ref()
        .is_some_and(|s| s.suspected_denial.is_some())
    {
        fields.status = Some("sandbox-denied".into());
        fields.layer = Some("sandbox".into());
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
        skipped_bytes: Some(poll.skipped_bytes).filter(|&n| n > 0),
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
/// `declined`, with `rule` and `layer`): nothing ran, and the observation tells the model
/// what to do instead. Clients such as pydantic-ai count tool errors as failed attempts and
/// end the agent's run after a few; a refusal is not the model's mistake. A request
/// corral could not understand, or its own failure, stays a tool error.
/// The result for any tool's answer.
pub(crate) fn answer_result(answer: &ToolAnswer) -> CallToolResult {
    match answer {
        ToolAnswer::Outcome(o) => outcome_result(o),
        ToolAnswer::Started(s) => started_result(s),
        ToolAnswer::Poll(p) => poll_result(p),
        ToolAnswer::Screen(s) => screen_result(s),
        ToolAnswer::Output(v) => output_result(v),
        ToolAnswer::File(f) => file_result(f),
    }
}

pub(crate) fn error_result(error: &corral::Error) -> CallToolResult {
    match error.kind() {
        ErrorKind::Refused => {
            let message = error.to_string();
            let (status, rule, layer, observation) = match error.denial() {
                // The hint in the text, once, where the message does not hold it already.
                Some(d) if !message.contains(&d.hint) => (
                    d.status.word(),
                    d.rule.clone(),
                    d.layer.clone(),
                    format!("{message} {}", d.hint),
                ),
                Some(d) => (d.status.word(), d.rule.clone(), d.layer.clone(), message),
                None => ("refused", None, None, message),
            };
            Fields {
                observation,
                status: Some(status.to_string()),
                rule,
                layer,
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
    use serde_json::json;

    /// What a model is shown of the tools (names, descriptions, input schemas) stays
    /// under 4 KiB, the file tools add under 2 KiB to it, and `undo` under 512 B. Output schemas are for
    /// programs validating results; models are not shown them, so they do not count.
    #[test]
    fn what_a_model_is_shown_of_the_tools_stays_small() {
        for host in [
            HostLines::Refused,
            HostLines::InSandbox,
            HostLines::WhenApproved,
        ] {
            for (files, undo) in [(false, false), (true, false), (false, true), (true, true)] {
                let bound = 4096 + if files { 2048 } else { 0 } + if undo { 512 } else { 0 };
                let shown: Vec<Tool> = list(Offer { files, undo }, host)
                    .iter()
                    .cloned()
                    .map(|mut tool| {
                        tool.output_schema = None;
                        tool
                    })
                    .collect();
                let json = serde_json::to_string(&json!({ "tools": shown })).unwrap();
                println!(
                    "tools/list without output schemas ({host:?}, file tools {files}, undo {undo}): {} bytes",
                    json.len()
                );
                assert!(json.len() < bound, "{} bytes:\n{json}", json.len());
            }
        }
    }

    #[test]
    fn every_tool_declares_an_output_schema_with_the_observation() {
        let all = Offer {
            files: true,
            undo: true,
        };
        for tool in list(all, HostLines::InSandbox).iter() {
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
        let all = Offer {
            files: true,
            undo: true,
        };
        for tool in list(all, HostLines::InSandbox).iter() {
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
