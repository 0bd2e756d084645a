//! A task contract: the goal, the workspace, the gate that defines done, and the limits.

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::config::Config;
use crate::sandbox::{SandboxConfig, SandboxMode};
pub use crate::verify::Verification;

/// How far a run may go before it stops unverified.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Limits {
    /// Model turns (default 50).
    pub max_steps: usize,
    /// Input plus output tokens over all turns, when the provider reports them (default:
    /// none). Checked before each model turn.
    pub max_tokens: Option<u64>,
    /// Wall-clock time for the whole run (default: none). Checked before each model
    /// turn: a tool call already running ends at its own timeout.
    #[serde(default, with = "humantime_serde::option")]
    pub wall_time: Option<Duration>,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_steps: 50,
            max_tokens: None,
            wall_time: None,
        }
    }
}

/// What a task run is for and what ends it.
///
/// ```
/// use corral::task::{TaskContract, Verification};
///
/// let contract = TaskContract::workspace("the test suite is failing; find out why and fix it", "/path/to/repo")
///     .with_verification(Verification::command(["npm", "run", "build"]))
///     .with_verification(Verification::Command { argv: vec!["npm".into(), "test".into()], expect_exit: 0 })
///     .max_steps(30);
/// assert_eq!(contract.verification.len(), 2);
/// ```
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TaskContract {
    /// What the model is asked to achieve.
    pub goal: String,
    /// The directory it works in.
    pub workspace: PathBuf,
    /// The gate, phase by phase, in order: all must pass for the run to be verified.
    pub verification: Vec<Verification>,
    /// Steps, tokens, wall time.
    pub limits: Limits,
    /// The configuration the run's own tools use (their timeout, sandbox, output budget).
    pub config: Config,
    /// The sandbox the gate's commands run in: writes only in the workspace, network off.
    pub gate_sandbox: SandboxConfig,
    /// How long one gate phase may run (default 15 minutes).
    #[serde(with = "humantime_serde")]
    pub gate_timeout: Duration,
    /// Who set the gate, when a person did: its phases run without an approval question
    /// (the policy's denies still refuse them), recorded as approved by this name. The
    /// contract's own phases are the embedding program's (`"the task contract"`); set it
    /// to `None` for phases from a file nobody trusted, which are then asked about.
    pub gate_approved_by: Option<String>,
}

impl TaskContract {
    /// A contract to achieve `goal` in the workspace `root`, with no gate yet, the
    /// default limits and configuration.
    pub fn workspace(goal: impl Into<String>, root: impl Into<PathBuf>) -> Self {
        Self {
            goal: goal.into(),
            workspace: root.into(),
            verification: Vec::new(),
            limits: Limits::default(),
            config: Config::default(),
            gate_sandbox: SandboxConfig::mode(SandboxMode::WorkspaceWrite),
            gate_timeout: crate::config::DEFAULT_TIMEOUT,
            gate_approved_by: Some("the task contract".into()),
        }
    }

    /// Say who set the gate (see [`Self::gate_approved_by`]).
    pub fn gate_approved_by(mut self, by: Option<String>) -> Self {
        self.gate_approved_by = by;
        self
    }

    /// Add a phase to the gate (phases run in the order added).
    pub fn with_verification(mut self, verification: Verification) -> Self {
        self.verification.push(verification);
        self
    }

    /// At most `n` model turns.
    pub fn max_steps(mut self, n: usize) -> Self {
        self.limits.max_steps = n;
        self
    }

    /// At most `n` tokens in all.
    pub fn max_tokens(mut self, n: u64) -> Self {
        self.limits.max_tokens = Some(n);
        self
    }

    /// At most `d` of wall-clock time.
    pub fn wall_time(mut self, d: Duration) -> Self {
        self.limits.wall_time = Some(d);
        self
    }

    /// The configuration of the run's own tools (sandbox, timeouts, output budget).
    pub fn with_config(mut self, config: Config) -> Self {
        self.config = config;
        self
    }

    /// The sandbox the gate runs in (default: `workspace-write`, network off).
    pub fn with_gate_sandbox(mut self, sandbox: SandboxConfig) -> Self {
        self.gate_sandbox = sandbox;
        self
    }
}
