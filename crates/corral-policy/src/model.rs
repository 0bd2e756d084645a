//! The vocabulary: acts, effects, tiers and where a rule came from.

use std::fmt;

use serde::{Deserialize, Serialize};

/// What is being asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Act {
    /// Start a program (every stage, and every command a stage would run).
    Exec,
    /// Open a path for reading (a `<` redirect).
    Read,
    /// Open a path for writing (a `>` or `>>` redirect).
    Write,
    /// Set an environment variable for a command (`NAME=value cmd`, `env
    /// NAME=value cmd`, `sudo NAME=value cmd`). The target is `NAME=value`.
    Env,
}

impl Act {
    /// Every act, in a fixed order.
    pub const ALL: [Act; 4] = [Act::Exec, Act::Read, Act::Write, Act::Env];

    /// The lowercase name used in configuration and output.
    pub fn name(self) -> &'static str {
        match self {
            Act::Exec => "exec",
            Act::Read => "read",
            Act::Write => "write",
            Act::Env => "env",
        }
    }

    /// Parse the lowercase name.
    pub fn from_name(name: &str) -> Option<Act> {
        Act::ALL.into_iter().find(|a| a.name() == name)
    }

    pub(crate) fn index(self) -> usize {
        match self {
            Act::Exec => 0,
            Act::Read => 1,
            Act::Write => 2,
            Act::Env => 3,
        }
    }
}

impl fmt::Display for Act {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}

/// What happens. Ordered by strictness: `Allow < Ask < Deny`, so the
/// strictest of several effects is their maximum.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize, Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Effect {
    /// Go ahead.
    Allow,
    /// Ask an approver first (see [`crate::ApprovalMode`]).
    #[default]
    Ask,
    /// Refuse. A deny never reaches an approver.
    Deny,
}

impl Effect {
    /// Every effect, least strict first.
    pub const ALL: [Effect; 3] = [Effect::Allow, Effect::Ask, Effect::Deny];

    /// The lowercase name used in configuration and output.
    pub fn name(self) -> &'static str {
        match self {
            Effect::Allow => "allow",
            Effect::Ask => "ask",
            Effect::Deny => "deny",
        }
    }

    /// Parse the lowercase name.
    pub fn from_name(name: &str) -> Option<Effect> {
        Effect::ALL.into_iter().find(|e| e.name() == name)
    }
}

impl fmt::Display for Effect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}

/// The base a policy starts from: the effect of anything no rule names.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize, Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Tier {
    /// Anything not named is allowed.
    Permissive,
    /// Anything not named is asked about.
    #[default]
    Default,
    /// Anything not named is denied.
    Strict,
}

impl Tier {
    /// Every tier, least strict first.
    pub const ALL: [Tier; 3] = [Tier::Permissive, Tier::Default, Tier::Strict];

    /// The effect this tier gives anything no rule names.
    pub fn default_effect(self) -> Effect {
        match self {
            Tier::Permissive => Effect::Allow,
            Tier::Default => Effect::Ask,
            Tier::Strict => Effect::Deny,
        }
    }

    /// The lowercase name used in configuration and output.
    pub fn name(self) -> &'static str {
        match self {
            Tier::Permissive => "permissive",
            Tier::Default => "default",
            Tier::Strict => "strict",
        }
    }

    /// Parse the lowercase name.
    pub fn from_name(name: &str) -> Option<Tier> {
        Tier::ALL.into_iter().find(|t| t.name() == name)
    }
}

impl fmt::Display for Tier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}

/// Where a rule came from, so a decision can point back at it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Origin {
    /// A line of a configuration file.
    File {
        /// The file as given to [`crate::config::parse`].
        path: String,
        /// 1-based.
        line: u32,
    },
    /// A command-line flag, e.g. `--deny`.
    Flag(String),
    /// Shipped with corral.
    Builtin,
    /// Added through the builder API by the embedding program.
    Library,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::File { path, line } => write!(f, "{path}:{line}"),
            Origin::Flag(flag) => write!(f, "flag {flag}"),
            Origin::Builtin => f.write_str("builtin"),
            Origin::Library => f.write_str("library"),
        }
    }
}
