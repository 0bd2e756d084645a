//! Approval modes: what an `Ask` turns into. The approver itself lives in
//! the library; this is the pure table.
//!
//! | mode             | deny   | ask (rule or setting) | ask (default)                      | allow (explicit) | allow (default)                    |
//! |------------------|--------|-----------------------|------------------------------------|------------------|------------------------------------|
//! | `never`          | refuse | refuse                | refuse                             | run              | run                                |
//! | `on-request`     | refuse | approver              | approver                           | run              | run                                |
//! | `unless-trusted` | refuse | approver              | run if known safe, else approver   | run              | run if known safe, else approver   |
//! | `on-failure`     | refuse | approver              | approver                           | run              | run                                |
//!
//! `on-failure` asks like `on-request`; in addition, when the sandbox denied a sandboxed
//! command a write to a path outside the box, the library offers the approver a rerun in
//! the sandbox with that path added (never without the sandbox). A deny never reaches an
//! approver.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::model::Effect;

/// When to ask an approver.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ApprovalMode {
    /// Never ask: whatever would be asked about is refused.
    Never,
    /// Ask whenever the policy says ask.
    #[default]
    OnRequest,
    /// Ask about everything not explicitly allowed, except known-safe
    /// commands that only a default would have asked about.
    UnlessTrusted,
    /// As `OnRequest`, and a sandboxed command that the sandbox denied a write is
    /// offered to the approver for a rerun with that path added.
    OnFailure,
}

impl ApprovalMode {
    /// Every mode.
    pub const ALL: [ApprovalMode; 4] = [
        ApprovalMode::Never,
        ApprovalMode::OnRequest,
        ApprovalMode::UnlessTrusted,
        ApprovalMode::OnFailure,
    ];

    /// The name used in configuration (`on-request`, ...).
    pub fn name(self) -> &'static str {
        match self {
            ApprovalMode::Never => "never",
            ApprovalMode::OnRequest => "on-request",
            ApprovalMode::UnlessTrusted => "unless-trusted",
            ApprovalMode::OnFailure => "on-failure",
        }
    }

    /// Parse the configuration name.
    pub fn from_name(name: &str) -> Option<ApprovalMode> {
        ApprovalMode::ALL.into_iter().find(|m| m.name() == name)
    }
}

impl fmt::Display for ApprovalMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}

/// What the library does with a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Resolution {
    /// Start it.
    Run,
    /// Ask the approver; start it only if approved.
    AskApprover,
    /// Do not start it.
    Refuse,
}

/// The approval table (see the module docs).
///
/// `effect` is the verdict's effect; `known_safe` is
/// [`crate::safe::is_known_safe`] of the command; `explicit` is whether a
/// rule or setting (not a tier or act default) chose that effect. Both are
/// on [`crate::Verdict`], and [`crate::Verdict::resolve`] passes them.
pub fn resolve(mode: ApprovalMode, effect: Effect, known_safe: bool, explicit: bool) -> Resolution {
    match (effect, mode) {
        (Effect::Deny, _) => Resolution::Refuse,
        (Effect::Ask, ApprovalMode::Never) => Resolution::Refuse,
        (Effect::Ask, ApprovalMode::UnlessTrusted) if known_safe && !explicit => Resolution::Run,
        (Effect::Ask, _) => Resolution::AskApprover,
        (Effect::Allow, ApprovalMode::UnlessTrusted) if !explicit && !known_safe => {
            Resolution::AskApprover
        }
        (Effect::Allow, _) => Resolution::Run,
    }
}
