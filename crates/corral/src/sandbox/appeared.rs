//! Protected paths that appear during a call.
//!
//! A protected path that exists is bind-mounted read-only; one that does not exist cannot
//! be mounted over, and Landlock cannot refuse creating it inside a writable workspace. So
//! a `workspace-write` call may create `corral.toml` or `.git/hooks`. Such a path is
//! noticed after the call, reported in the result (a `sandbox:` line) and in the trace (a
//! `protected paths` row at level `none`), and a new `corral.toml` is untrusted until a
//! person trusts it (see [`crate::trust::TrustStore`]).

use std::path::{Path, PathBuf};

use super::{LayerReport, Level, SandboxConfig, SandboxMode};
use crate::outcome::Outcome;

/// The protected paths that did not exist when a call started.
#[derive(Debug, Default)]
pub(crate) struct Absent {
    paths: Vec<(String, PathBuf)>,
}

impl Absent {
    /// Note which of `config`'s protected paths are absent before a call in `workspace`.
    pub(crate) fn before(config: &SandboxConfig, workspace: &Path) -> Absent {
        if config.mode != SandboxMode::WorkspaceWrite {
            return Absent::default();
        }
        let paths = config
            .protected
            .iter()
            .map(|p| (p.clone(), workspace.join(p)))
            .filter(|(_, p)| std::fs::symlink_metadata(p).is_err())
            .collect();
        Absent { paths }
    }

    /// Report on `outcome` every one of them that exists now.
    pub(crate) fn report_appeared(&self, outcome: &mut Outcome) {
        let appeared: Vec<&str> = self
            .paths
            .iter()
            .filter(|(_, p)| std::fs::symlink_metadata(p).is_ok())
            .map(|(name, _)| name.as_str())
            .collect();
        if appeared.is_empty() {
            return;
        }
        let detail = format!(
            "created during the call, where the sandbox could not protect it: {}; \
             a new corral.toml is untrusted until a person runs `corral policy trust`",
            appeared.join(", ")
        );
        outcome.observation =
            outcome
                .observation
                .replacen('\n', &format!("\nsandbox: protected path {detail}\n"), 1);
        if let Some(report) = outcome.sandbox.as_mut() {
            report.layers.push(LayerReport {
                layer: crate::sandbox::report::Layer::ProtectedPaths,
                level: Level::None,
                detail,
            });
        }
    }
}
