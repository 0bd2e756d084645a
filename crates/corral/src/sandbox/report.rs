//! What a call's sandbox enforced on this host, layer by layer, and what it suspects.

use std::path::PathBuf;

use serde::Serialize;

use super::config::SandboxMode;

/// How much of a layer was enforced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Level {
    /// All of it.
    Full,
    /// Some of it: the detail says what is missing.
    Partial,
    /// Nothing: the host lacks it.
    None,
}

impl Level {
    /// `full`, `partial`, `none`.
    pub fn name(self) -> &'static str {
        match self {
            Level::Full => "full",
            Level::Partial => "partial",
            Level::None => "none",
        }
    }
}

/// One layer of the sandbox and what it reached on this host.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LayerReport {
    /// `landlock`, `network namespace`, `protected paths`, `seccomp`, `launch hygiene`,
    /// `cgroup pids.max`.
    pub layer: &'static str,
    /// How much of it was enforced.
    pub level: Level,
    /// What it reached, or what it lacks.
    pub detail: String,
}

/// What the sandbox enforced for one call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SandboxReport {
    /// The mode the call ran in.
    pub mode: SandboxMode,
    /// Whether the network was left on.
    pub network: bool,
    /// Every layer the mode asks for, enforced or not.
    pub layers: Vec<LayerReport>,
    /// A failure that looks like the sandbox's doing: a guess from stderr, labelled so.
    pub suspected_denial: Option<String>,
    /// The write the sandbox denied, with how corral knows (certain for a redirect,
    /// inferred from stderr otherwise), and what a person would have to allow.
    pub denied_write: Option<String>,
    /// Set on a rerun a person approved after a denial: the path added as writable.
    pub rerun_with: Option<PathBuf>,
    /// Where the common build tools' caches point in the box (`workspace-write`).
    pub caches: Option<PathBuf>,
    /// What the command could write: the roots Landlock allows.
    pub writable: Vec<PathBuf>,
    /// What the command could not read: the paths hidden by the read denies.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub hidden: Vec<PathBuf>,
    /// A failed read of a hidden path, named from stderr.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub denied_read: Option<String>,
    /// With the network allowed by domain: the proxy's address in the run's namespace.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub proxy: Option<String>,
    /// The names the proxy allowed when the call started.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub network_allow: Vec<String>,
    /// The hosts the proxy refused during the call.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub refused_hosts: Vec<String>,
    /// Set on a rerun a person approved after a refused host: the host added.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rerun_allowing: Option<String>,
    /// The surface's note on approvals (see [`SandboxConfig::note`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl SandboxReport {
    pub(crate) fn plain(mode: SandboxMode) -> Self {
        Self {
            mode,
            network: true,
            layers: Vec::new(),
            suspected_denial: None,
            denied_write: None,
            rerun_with: None,
            caches: None,
            writable: Vec::new(),
            hidden: Vec::new(),
            denied_read: None,
            proxy: None,
            network_allow: Vec::new(),
            refused_hosts: Vec::new(),
            rerun_allowing: None,
            note: None,
        }
    }

    /// The layers this host did not fully enforce, as `layer (detail)`: empty when every
    /// boundary layer is whole. Not counted: the `pids.max` resource bound, and protected
    /// paths that are only partial because some do not exist in this workspace.
    pub fn unenforced(&self) -> Vec<String> {
        if !self.mode.is_sandboxed() {
            return vec![format!("the sandbox is off (mode {})", self.mode)];
        }
        self.layers
            .iter()
            .filter(|l| l.layer != "cgroup pids.max")
            .filter(|l| match l.level {
                Level::Full => false,
                Level::Partial => l.layer != "protected paths",
                Level::None => true,
            })
            .map(|l| format!("{} {} ({})", l.layer, l.level.name(), l.detail))
            .collect()
    }

    /// The one line an observation shows: `sandbox workspace-write, network off: landlock
    /// ABI 7: full; network namespace: full; …`.
    pub fn line(&self) -> String {
        let mut out = format!("sandbox {}", self.mode);
        if self.mode.is_sandboxed() {
            out.push_str(if self.network {
                ", network on"
            } else if self.proxy.is_some() {
                ", network by domain"
            } else {
                ", network off"
            });
        }
        if let Some(host) = &self.rerun_allowing {
            out.push_str(&format!(" (rerun allowing {host}, approved)"));
        }
        if let Some(path) = &self.rerun_with {
            out.push_str(&format!(
                " (rerun with {} writable, approved)",
                path.display()
            ));
        }
        let layers: Vec<String> = self
            .layers
            .iter()
            .map(|l| format!("{}: {}", l.layer, l.level.name()))
            .collect();
        if !layers.is_empty() {
            out.push_str(": ");
            out.push_str(&layers.join("; "));
        }
        if let Some(note) = &self.note {
            out.push_str(" — ");
            out.push_str(note);
        }
        out
    }
}
