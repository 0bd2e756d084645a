//! What a caller hands the store to write: one type per kind of record, with no behaviour,
//! so the store's writers and its observers share them without depending on each other.

use serde::Serialize;

/// A handle that was just started.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct NewHandle {
    /// The run it belongs to.
    pub run_id: String,
    /// The handle's id within its run.
    pub handle: u32,
    /// The step it belongs to, when it belongs to one.
    pub step_id: Option<i64>,
    /// The command line as asked.
    pub line: String,
    /// Every stage's argv, as JSON.
    pub stages_json: String,
    /// The pids started, as JSON (for people: a pid is never used to signal an orphan).
    pub pids_json: String,
    /// The containment its processes ran in.
    pub containment: String,
    /// The capture file of its output.
    pub capture_path: Option<String>,
    /// The corral process that owns it.
    pub owner_pid: u32,
    /// When it started, in ms since the Unix epoch.
    pub started_at_ms: i64,
}

/// One model turn to record.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct NewModelTurn {
    /// The run it belongs to.
    pub run_id: String,
    /// 1, 2, 3, … within the run.
    pub turn: i64,
    /// When it happened, in ms since the Unix epoch.
    pub at_ms: i64,
    /// How long it took, in ms.
    pub duration_ms: i64,
    /// `openai`, `openrouter`, `anthropic`, `script`.
    pub provider: String,
    /// The model.
    pub model: String,
    /// The request as sent (messages and tool schemas).
    pub request_json: String,
    /// The response as received; `None` when the provider failed.
    pub response_json: Option<String>,
    /// Tokens sent to the model, when the provider said.
    pub input_tokens: Option<u64>,
    /// Tokens the model produced, when the provider said.
    pub output_tokens: Option<u64>,
    /// What the provider says the turn cost, when it says.
    pub cost_usd: Option<f64>,
    /// The provider's failure, naming provider, status and body.
    pub error: Option<String>,
}

/// A decision to record.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct NewPolicyEvent {
    /// The run it belongs to.
    pub run_id: String,
    /// The step the decision was made for, when it was made inside a call.
    pub step_id: Option<i64>,
    /// When it happened, in ms since the Unix epoch.
    pub at_ms: i64,
    /// `exec`, `read`, `write`, …
    pub act: String,
    /// What was checked: the joined argv, or a resolved path.
    pub target: String,
    /// What the policy said: `allow`, `ask`, `deny`.
    pub effect: String,
    /// The rule's pattern, when a rule decided (not the tier default).
    pub rule: Option<String>,
    /// The layer it concerns.
    pub layer: Option<String>,
    /// Where the rule came from: `file:line`, a flag, `builtin`.
    pub origin: Option<String>,
    /// What happened: `refused`, `approved`, `approved_for_run`, `denied`, `aborted`,
    /// `approved_cached`.
    pub decision: String,
    /// Who answered an ask: an approver's name, or `policy` when no one was asked.
    pub answered_by: Option<String>,
    /// Why, in a sentence.
    pub reason: Option<String>,
}

/// One layer's enforcement (or one suspected denial) to record.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct NewSandboxEvent {
    /// The run it belongs to.
    pub run_id: String,
    /// The step it belongs to, when it belongs to one.
    pub step_id: Option<i64>,
    /// When it happened, in ms since the Unix epoch.
    pub at_ms: i64,
    /// `read-only`, `workspace-write`, `full`, `external`.
    pub mode: String,
    /// Whether the network was left on.
    pub network: bool,
    /// `landlock`, `network namespace`, `seccomp`, … or `denial`.
    pub layer: String,
    /// `full`, `partial`, `none`; `suspected` for a denial.
    pub level: String,
    /// What it reached, or the evidence.
    pub detail: String,
}
