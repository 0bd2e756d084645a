//! What a call's sandbox enforced on this host, layer by layer, and what it suspects.

use std::path::PathBuf;

use serde::Serialize;

use crate::config::sandbox::SandboxMode;

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

/// The confinement layers: what keeps a command's effects inside the box (what it may
/// write, read and reach, which processes it sees, which system calls and capabilities it
/// has). `corral mcp` runs what no rule asks about without asking only where this host
/// enforces every one of them for this process; a layer missing or partial makes it ask.
pub const CONFINEMENT: &[Layer] = &[
    Layer::Landlock,
    Layer::ReadOnlyHost,
    Layer::Network,
    Layer::IpcNamespace,
    Layer::ProtectedPaths,
    Layer::ReadDenies,
    Layer::Home,
    Layer::PrivateDev,
    Layer::DeniedPrograms,
    Layer::PidNamespace,
    Layer::Seccomp,
    Layer::SocketFamilies,
    Layer::Capabilities,
    Layer::LaunchHygiene,
    Layer::External,
];

/// The resource limits: reported with the sandbox, never deciding a posture (a host
/// without them still confines what a command can reach).
pub const RESOURCE_LIMITS: &[Layer] = &[Layer::PidsMax, Layer::Memory];

/// A layer of the sandbox. Its [`name`](Layer::name) is how reports, the trace and the
/// JSON name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Layer {
    /// Landlock: what may be written, and (ABI 4+) TCP.
    Landlock,
    /// The network namespace (or the proxy, with domains allowed).
    Network,
    /// The IPC namespace: System V IPC and POSIX message queues of the run's own.
    IpcNamespace,
    /// Every mount read-only outside the writable roots: no metadata change on the host.
    ReadOnlyHost,
    /// The protected paths, bind-mounted read-only.
    ProtectedPaths,
    /// Root's capabilities, dropped.
    Capabilities,
    /// The seccomp filter.
    Seccomp,
    /// The socket families a command may open, and which Unix sockets it can reach.
    SocketFamilies,
    /// The call's memory limit (`memory.max`) and priority.
    Memory,
    /// What a started process inherits: descriptors, signals, `PR_SET_NO_NEW_PRIVS`.
    LaunchHygiene,
    /// The call's PID namespace.
    PidNamespace,
    /// The cgroup's `pids.max`.
    PidsMax,
    /// The read denies: paths hidden from the command.
    ReadDenies,
    /// The home: the toolchains only, the rest a directory of the run's own.
    Home,
    /// A `/dev` of the sandbox's own, with only the usual devices.
    PrivateDev,
    /// The programs a deny rule names, covered by a stub that cannot run them.
    DeniedPrograms,
    /// The caller's own box (`external`): nothing of corral's.
    External,
}

impl Layer {
    /// Every layer, in the order a report lists them.
    pub const ALL: [Layer; 17] = [
        Layer::Landlock,
        Layer::ReadOnlyHost,
        Layer::Network,
        Layer::IpcNamespace,
        Layer::ProtectedPaths,
        Layer::ReadDenies,
        Layer::Home,
        Layer::Capabilities,
        Layer::PrivateDev,
        Layer::DeniedPrograms,
        Layer::Seccomp,
        Layer::SocketFamilies,
        Layer::LaunchHygiene,
        Layer::PidNamespace,
        Layer::PidsMax,
        Layer::Memory,
        Layer::External,
    ];

    /// `landlock`, `read-only host`, `network`, `ipc namespace`, `protected paths`,
    /// `capabilities`, `seccomp`, `socket families`, `launch hygiene`, `pid namespace`,
    /// `cgroup pids.max`, `memory`, `read denies`, `home`, `private /dev`, `external`.
    pub fn name(self) -> &'static str {
        match self {
            Layer::Landlock => "landlock",
            Layer::Network => "network",
            Layer::IpcNamespace => "ipc namespace",
            Layer::ReadOnlyHost => "read-only host",
            Layer::ProtectedPaths => "protected paths",
            Layer::Capabilities => "capabilities",
            Layer::Seccomp => "seccomp",
            Layer::SocketFamilies => "socket families",
            Layer::Memory => "memory",
            Layer::LaunchHygiene => "launch hygiene",
            Layer::PidNamespace => "pid namespace",
            Layer::PidsMax => "cgroup pids.max",
            Layer::ReadDenies => "read denies",
            Layer::Home => "home",
            Layer::PrivateDev => "private /dev",
            Layer::DeniedPrograms => "denied programs",
            Layer::External => "external",
        }
    }
}

impl std::fmt::Display for Layer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.name())
    }
}

impl Serialize for Layer {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

/// One layer of the sandbox and what it reached on this host.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LayerReport {
    /// Which layer.
    pub layer: Layer,
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
    /// The box's own directories over the host's (`/tmp`, the runtime directory): what
    /// the host keeps below them, the box does not see.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub own_dirs: Vec<PathBuf>,
    /// The home, where the box has one of its own over it (toolchains only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub own_home: Option<PathBuf>,
    /// A path of the person's home a failed command missed, hidden by the box's home,
    /// and the `home_read` entry that would put it back.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hidden_home: Option<String>,
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
    /// The surface's note on approvals (see [`SandboxConfig::note`](crate::config::sandbox::SandboxConfig::note)).
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
            own_dirs: Vec::new(),
            own_home: None,
            hidden_home: None,
            hidden: Vec::new(),
            denied_read: None,
            proxy: None,
            network_allow: Vec::new(),
            refused_hosts: Vec::new(),
            rerun_allowing: None,
            note: None,
        }
    }

    /// The layers among `counted` this host did not fully enforce, as `layer level
    /// (detail)`: empty when each is whole. Protected paths that are only partial because
    /// some do not exist in this workspace are not counted. The surfaces count the
    /// confinement layers ([`CONFINEMENT`]).
    pub fn unenforced(&self, counted: &[Layer]) -> Vec<String> {
        if !self.mode.is_sandboxed() {
            return vec![format!("the sandbox is off (mode {})", self.mode)];
        }
        self.not_whole(counted)
            .map(|l| format!("{} {} ({})", l.layer, l.level.name(), l.detail))
            .collect()
    }

    /// The layers among `counted` not fully enforced, by name and level, for a line a
    /// person reads first: `network partial, protected paths none, …`.
    pub fn missing(&self, counted: &[Layer]) -> String {
        self.not_whole(counted)
            .map(|l| format!("{} {}", l.layer, l.level.name()))
            .collect::<Vec<_>>()
            .join(", ")
    }

    fn not_whole<'a>(&'a self, counted: &'a [Layer]) -> impl Iterator<Item = &'a LayerReport> {
        self.layers
            .iter()
            .filter(|l| counted.contains(&l.layer))
            .filter(|l| match l.level {
                Level::Full => false,
                Level::Partial => l.layer != Layer::ProtectedPaths,
                Level::None => true,
            })
    }

    /// Every layer on one line, for `corral sandbox report` and the posture's header:
    /// `sandbox workspace-write, network off: landlock: full; network: full; …`.
    pub fn line(&self) -> String {
        let mut out = format!("sandbox {}", self.what());
        let layers: Vec<String> = self
            .layers
            .iter()
            .map(|l| format!("{}: {}", l.layer, l.level.name()))
            .collect();
        if !layers.is_empty() {
            out.push_str(": ");
            out.push_str(&layers.join("; "));
        }
        self.push_note(&mut out);
        out
    }

    /// The status line a result shows: `sandbox: workspace-write, network off` when
    /// every confinement layer holds; otherwise the mode followed by only the
    /// confinement layers missing or partial, and where to read the rest. Resource
    /// limits never count: a host without them still confines what a command reaches.
    pub fn status(&self) -> String {
        let mut out = format!("sandbox: {}", self.what());
        if self.mode.is_sandboxed() {
            if let Some(note) = &self.note {
                // The surface's note names the missing layers already.
                out.push_str("; ");
                out.push_str(note);
            } else {
                let missing = self.missing(CONFINEMENT);
                if !missing.is_empty() {
                    out.push_str(&format!(
                        "; not enforced here: {missing} (`corral sandbox report` says why)"
                    ));
                }
            }
        }
        out
    }

    /// Whether `line` is a result's status line (see [`status`](Self::status)), as opposed
    /// to the `sandbox: …` notes that follow it.
    pub fn is_status(line: &str) -> bool {
        line.strip_prefix("sandbox: ").is_some_and(|rest| {
            SandboxMode::ALL.iter().any(|m| {
                rest.strip_prefix(m.name())
                    .is_some_and(|t| t.is_empty() || t.starts_with([',', ';', ' ']))
            })
        })
    }

    /// `MODE, network …` and any rerun, without the layers.
    fn what(&self) -> String {
        let mut out = self.mode.to_string();
        if self.mode.is_sandboxed() {
            out.push_str(if self.network {
                ", network on"
            } else if self.proxy.is_some() && !self.network_allow.is_empty() {
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
        out
    }

    fn push_note(&self, out: &mut String) {
        if let Some(note) = &self.note {
            out.push_str(" — ");
            out.push_str(note);
        }
    }
}

/// The status line a run last showed: a result shows the line on a run's first
/// sandboxed result and again only when it changes.
#[derive(Debug, Default)]
pub struct StatusShown(std::sync::Mutex<Option<String>>);

impl StatusShown {
    /// Whether `line` differs from the line this run last showed; records it as shown.
    pub fn fresh(&self, line: &str) -> bool {
        let mut last = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if last.as_deref() == Some(line) {
            return false;
        }
        *last = Some(line.to_string());
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(levels: &[(Layer, Level)]) -> SandboxReport {
        SandboxReport {
            network: false,
            layers: levels
                .iter()
                .map(|&(layer, level)| LayerReport {
                    layer,
                    level,
                    detail: String::new(),
                })
                .collect(),
            ..SandboxReport::plain(SandboxMode::WorkspaceWrite)
        }
    }

    #[test]
    fn every_layer_holding_is_said_in_one_short_line() {
        let whole = report(&[
            (Layer::Landlock, Level::Full),
            (Layer::Network, Level::Full),
            // Partial only because some protected paths do not exist here: still whole.
            (Layer::ProtectedPaths, Level::Partial),
        ]);
        assert_eq!(whole.status(), "sandbox: workspace-write, network off");
        assert!(whole.status().len() <= 80);
        assert!(SandboxReport::is_status(&whole.status()));
        assert!(whole.line().contains("landlock: full; network: full"));

        let missing = report(&[
            (Layer::Landlock, Level::Partial),
            (Layer::Seccomp, Level::None),
            (Layer::Memory, Level::Partial),
        ]);
        assert_eq!(
            missing.status(),
            "sandbox: workspace-write, network off; not enforced here: landlock partial, \
             seccomp none (`corral sandbox report` says why)"
        );
        assert!(SandboxReport::is_status(&missing.status()));
    }

    #[test]
    fn resource_limits_never_reach_the_status_line() {
        let limited = report(&[
            (Layer::Landlock, Level::Full),
            (Layer::Seccomp, Level::Full),
            (Layer::Memory, Level::Partial),
            (Layer::PidsMax, Level::None),
        ]);
        assert_eq!(limited.status(), "sandbox: workspace-write, network off");
    }

    #[test]
    fn the_notes_after_the_status_line_are_not_taken_for_it() {
        for note in [
            "sandbox: denied a write to /x",
            "sandbox: this may have been refused by the sandbox",
            "sandbox: moved .git aside",
            "sandbox: the network proxy refused example.com",
            "sandbox workspace-write, network off: landlock: full",
        ] {
            assert!(!SandboxReport::is_status(note), "{note}");
        }
        let rerun = SandboxReport {
            rerun_with: Some(PathBuf::from("/w/out")),
            ..report(&[(Layer::Landlock, Level::Full)])
        };
        assert_eq!(
            rerun.status(),
            "sandbox: workspace-write, network off (rerun with /w/out writable, approved)"
        );
        assert!(SandboxReport::is_status(&rerun.status()));
    }

    #[test]
    fn every_layer_is_confinement_or_a_resource_limit_once() {
        for layer in Layer::ALL {
            let confines = CONFINEMENT.contains(&layer);
            let limits = RESOURCE_LIMITS.contains(&layer);
            assert!(
                confines != limits,
                "{layer} must be in exactly one of the two sets"
            );
        }
    }
}
