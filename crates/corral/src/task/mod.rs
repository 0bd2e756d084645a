//! A task run: a contract, a verification gate, a model, and corral's own tools.
//!
//! ```no_run
//! use corral::task::{TaskContract, Verification, OpenAiCompatible, run_with};
//! use corral::{Policy, approve::ApproveAll};
//!
//! let contract = TaskContract::workspace("the test suite is failing; find out why and fix it", "/path/to/repo")
//!     // The gate is the project's own command, in whatever language it is written.
//!     .with_verification(Verification::Command { argv: vec!["npm".into(), "test".into()], expect_exit: 0 });
//!
//! // What the agent may run, decided before it runs anything.
//! let policy = Policy::permissive()
//!     .layer("app")
//!     .allow_exec("npm*")
//!     .allow_exec("node*")
//!     .deny_exec("rm*")
//!     .deny_exec("git push*");
//!
//! let model = OpenAiCompatible::openrouter_from_env("anthropic/claude-sonnet-4.5")?;
//! let outcome = run_with(&contract, &model, "runs.db".as_ref(), policy, ApproveAll)?;
//! println!("{}: {}", outcome.run_id, outcome.ending.describe());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Theory of operation
//!
//! The model is told the goal and offered corral's tools (`exec`, `shell`, the handle
//! tools, `read_file`, `write_file`, `list_dir`, `apply_patch`) through one table
//! ([`crate::tools::TOOLS`]), plus `done`. Each call runs exactly as it would for any other client:
//! planned, checked against the policy, contained, bounded, traced. When the model calls
//! `done` (or answers without calling a tool), corral runs the contract's gate
//! ([`Run::verify`](crate::Run::verify)) in a sandbox of its own; the gate alone decides
//! success, and its failure is the model's next observation. The limits end a run that
//! does not get there. [`drive_until`] takes a [`Cancel`](crate::Cancel) as well: when it
//! fires, the call or gate phase running is ended and the run ends
//! [`Ending::Interrupted`] (what `corral run` does on Ctrl-C).
//!
//! In the trace, every model turn is a `model_turns` row, every tool call a `steps` row
//! (so "what ran" is still one query), every gate phase a `verify` step, and a failing
//! phase two `sandbox_events` rows (`gate_output`, `gate_phase_failed`).

mod contract;
mod driver;
mod model;
pub mod project;
mod provider;
mod script;
pub mod tools;
mod wall_clock;

use std::path::Path;

pub use crate::verify::{GateVerdict, PhaseResult};
pub use contract::{Limits, TaskContract, Verification};
pub use driver::{Ending, TaskError, TaskEvent, TaskOutcome, drive, drive_until};
pub use model::{
    Message, Model, ModelError, ModelErrorKind, ModelRequest, ModelResponse, ToolCall, ToolSpec,
    Usage,
};
pub use provider::{Anthropic, HttpSettings, OpenAiCompatible, model_from_spec};
pub use script::ScriptedModel;

use crate::{Policy, Run, approve::Approver};

/// Open a run for `contract` in the trace at `store`, with `policy` and `approver`, and
/// drive it to its end with `model`. The run is closed however it ends.
pub fn run_with(
    contract: &TaskContract,
    model: &dyn Model,
    store: &Path,
    policy: Policy,
    approver: impl Approver + 'static,
) -> Result<TaskOutcome, TaskError> {
    let run = Run::builder(&contract.workspace)
        .store(store)
        .config(contract.config.clone())
        .policy(policy)
        .approver(approver)
        .open()?;
    let outcome = drive(&run, contract, model, &mut |_| {});
    run.close()?;
    outcome
}
