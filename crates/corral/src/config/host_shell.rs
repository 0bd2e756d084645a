//! The host-shell modes a run is configured with, and where a line outside the grammar
//! then runs.

use serde::{Deserialize, Serialize};

/// Whether a line outside corral's grammar may run through the host's `bash -c`.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum HostShell {
    /// In a sandbox this host enforces fully; otherwise refused.
    Sandboxed,
    /// In a sandbox this host enforces fully; otherwise when a person approves it.
    Ask,
    /// Never: such a line is refused by the grammar.
    #[default]
    Never,
}

/// The library's and the `corral` command's default: lines outside the grammar are refused.
pub const LIBRARY_DEFAULT_HOST_SHELL: HostShell = HostShell::Never;

/// `corral mcp`'s default. It follows the server's default posture: once that is a
/// sandbox, this is [`HostShell::Sandboxed`].
pub const MCP_DEFAULT_HOST_SHELL: HostShell = HostShell::Sandboxed;

impl HostShell {
    /// `sandboxed`, `ask`, `never`.
    pub fn name(self) -> &'static str {
        match self {
            HostShell::Sandboxed => "sandboxed",
            HostShell::Ask => "ask",
            HostShell::Never => "never",
        }
    }

    /// The mode named `name`.
    pub fn from_name(name: &str) -> Option<HostShell> {
        match name {
            "sandboxed" => Some(HostShell::Sandboxed),
            "ask" => Some(HostShell::Ask),
            "never" => Some(HostShell::Never),
            _ => None,
        }
    }

    /// The stricter of two modes: a later file or flag only tightens.
    pub fn stricter(self, other: HostShell) -> HostShell {
        let rank = |m: HostShell| match m {
            HostShell::Never => 0,
            HostShell::Sandboxed => 1,
            HostShell::Ask => 2,
        };
        if rank(other) < rank(self) {
            other
        } else {
            self
        }
    }
}

impl std::fmt::Display for HostShell {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Where a line outside corral's grammar runs in a run, for what a model is told.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostLines {
    /// Nowhere: the grammar refuses it, saying what to do instead.
    Refused,
    /// Under `bash -c`, in a sandbox every layer of which this host enforces.
    InSandbox,
    /// Under `bash -c`, once a person approves it (no fully enforced sandbox here).
    WhenApproved,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stricter_mode_wins() {
        assert_eq!(HostShell::Ask.stricter(HostShell::Never), HostShell::Never);
        assert_eq!(
            HostShell::Sandboxed.stricter(HostShell::Ask),
            HostShell::Sandboxed
        );
    }
}
