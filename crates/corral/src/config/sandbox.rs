//! How a run's sandbox is configured: the mode and what it allows.

use std::fmt;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// The credential stores hidden by default.
pub const DEFAULT_DENY_READ: &[&str] = &[
    "~/.ssh",
    "~/.aws",
    "~/.config/gcloud",
    "~/.kube",
    "~/.docker/config.json",
    "~/.netrc",
    "~/.git-credentials",
    "~/.config/gh",
    "~/.npmrc",
    "~/.pypirc",
    "~/.cargo/credentials*",
    "~/.gradle/gradle.properties",
    "~/.m2/settings.xml",
    "~/.m2/settings-security.xml",
    "~/.config/git/credentials",
    "~/.cache/huggingface/token",
    "~/.mozilla",
    "~/.config/google-chrome",
    "~/.config/chromium",
    "~/.config/BraveSoftware",
    "~/.config/microsoft-edge",
    "~/snap/firefox",
];

/// What a command may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxMode {
    /// Read anywhere, write only a private temporary directory.
    ReadOnly,
    /// Write only under the workspace, the writable roots and temp.
    WorkspaceWrite,
    /// No sandbox (the default): an explicit choice, recorded.
    #[default]
    Full,
    /// The caller's own box; corral applies none.
    External,
}

impl SandboxMode {
    /// Every mode.
    pub const ALL: [SandboxMode; 4] = [
        SandboxMode::ReadOnly,
        SandboxMode::WorkspaceWrite,
        SandboxMode::Full,
        SandboxMode::External,
    ];

    /// The configuration name: `read-only`, `workspace-write`, `full`, `external`.
    pub fn name(self) -> &'static str {
        match self {
            SandboxMode::ReadOnly => "read-only",
            SandboxMode::WorkspaceWrite => "workspace-write",
            SandboxMode::Full => "full",
            SandboxMode::External => "external",
        }
    }

    /// Parse a configuration name.
    pub fn from_name(name: &str) -> Option<SandboxMode> {
        Self::ALL.into_iter().find(|m| m.name() == name)
    }

    /// Whether corral confines commands in this mode.
    pub fn is_sandboxed(self) -> bool {
        matches!(self, SandboxMode::ReadOnly | SandboxMode::WorkspaceWrite)
    }

    /// Whether a box of this mode, on this host, keeps a program a deny rule names from
    /// starting however it is reached: a stub bound over its files where the box has a
    /// mount namespace, a Landlock layer of their own where it has none (see
    /// `sandbox::programs`).
    pub fn kernel_holds_denied_programs(self) -> bool {
        // The host's probe makes a namespace: only a box needs it.
        self.is_sandboxed()
            && corral_sys::sandbox::host_support().namespaces_or_landlock()
            && corral_sys::program_stubs::stub_image("corral").is_some()
    }
}

impl fmt::Display for SandboxMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}

/// Paths inside the workspace that stay read-only in `workspace-write` by default: the git
/// metadata (with [`SandboxConfig::git_write`], the default, only what can run code or
/// point git elsewhere; without it the whole `.git`, see `git_dir`), and corral's own
/// configuration and trace.
pub const DEFAULT_PROTECTED: &[&str] = &[".git", "corral.toml", ".corral"];

/// The sandbox configuration of a run ([`crate::Config::sandbox`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SandboxConfig {
    /// The mode (default `full`: no sandbox).
    pub mode: SandboxMode,
    /// Leave the network on in the sandboxed modes (default off).
    pub network: bool,
    /// More directories writable in `workspace-write` (absolute, or relative to the
    /// workspace).
    pub writable_roots: Vec<PathBuf>,
    /// Paths relative to the workspace that stay read-only in `workspace-write`.
    pub protected: Vec<String>,
    /// Let git write its own data in `workspace-write` (`git add`, `commit`, `stash`,
    /// `rebase`): `.git` is writable but for what runs code or points elsewhere (see
    /// `git_dir`), and the undo record holds the refs and the index (default on). `false`
    /// (`[sandbox] git_write = false` in any policy file, an untrusted `corral.toml`
    /// included, since it only tightens) makes the whole `.git` a read-only mount.
    pub git_write: bool,
    /// Allow `socket(AF_UNIX, …)` where the box has a `/tmp` and runtime directory of its
    /// own and the host's other socket files are hidden (default on; without those, on a
    /// kernel before 5.12 or without namespaces, the box refuses it whatever this says:
    /// a pathname socket such as a container engine's is a root shell).
    pub unix_sockets: bool,
    /// Run even when the host cannot enforce the mode's core (default: refuse).
    pub allow_degraded: bool,
    /// With the network off, one network namespace for the whole run (loopback up, shared
    /// by its calls) rather than one per call with loopback down (default on).
    pub run_network_namespace: bool,
    /// A sentence the surface adds to every result's sandbox line: why approvals are
    /// asked as they are (see [`crate::Posture`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Paths the sandboxed modes hide from reads (default [`DEFAULT_DENY_READ`]; corral's
    /// own store and trust store are always added): `~/…` under `$HOME`, or absolute; a
    /// `*` in the last component matches names in that directory.
    pub deny_read: Vec<String>,
    /// What the sandboxed modes put back of the home besides the toolchains
    /// ([`crate::sandbox::home::TOOLCHAINS`]), read-only: `~/…` paths; `"~"` keeps the whole home
    /// readable (but the read denies). The rest of the home is a directory of the run's
    /// own in the box.
    pub home_read: Vec<String>,
    /// With the network off, the names a command may still reach through the run's
    /// proxy: host names, `*.domain` wildcards, IP
    /// addresses, or the presets `npm`, `pypi`, `crates`, `go`, `github`. Empty (the
    /// default): the network is simply off.
    pub network_allow: Vec<String>,
    /// **For tests only**: names the proxy connects to the given address instead of
    /// resolving them (as `curl --resolve` does), so a test can serve `allowed.test` from
    /// `127.0.0.1`. The allow-list still decides; nothing else uses it.
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub test_resolve: std::collections::BTreeMap<String, std::net::SocketAddr>,
}

impl Default for SandboxConfig {
    fn default() -> Self {
        Self {
            mode: SandboxMode::Full,
            network: false,
            writable_roots: Vec::new(),
            protected: DEFAULT_PROTECTED.iter().map(|s| s.to_string()).collect(),
            git_write: true,
            unix_sockets: true,
            allow_degraded: false,
            run_network_namespace: true,
            note: None,
            deny_read: DEFAULT_DENY_READ.iter().map(|s| s.to_string()).collect(),
            home_read: Vec::new(),
            network_allow: Vec::new(),
            test_resolve: std::collections::BTreeMap::new(),
        }
    }
}

impl SandboxConfig {
    /// A configuration in `mode`, everything else at its default.
    pub fn mode(mode: SandboxMode) -> Self {
        Self {
            mode,
            ..Self::default()
        }
    }

    /// The paths [`Self::protected`] stands for in `workspace`: each entry joined to it,
    /// `.git` expanded to what of the git metadata stays read-only (see `git_dir`).
    pub fn protected_in(&self, workspace: &std::path::Path) -> Vec<std::path::PathBuf> {
        let mut out = Vec::new();
        for entry in &self.protected {
            for path in super::git_dir::expand(workspace, entry, self.git_write) {
                if !out.contains(&path) {
                    out.push(path);
                }
            }
        }
        out
    }
}
