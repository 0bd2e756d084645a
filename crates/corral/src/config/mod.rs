//! A run's configuration: the bounds every call obeys unless the call narrows them.

pub(crate) mod git_dir;
pub mod host_shell;
pub mod sandbox;

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::env::EnvPolicy;

/// How long a foreground command may run when neither the run nor the call says otherwise.
///
/// Generous on purpose: it is a ceiling on a wedged command, not a budget, and a tighter
/// default would kill honest cold builds.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(15 * 60);

/// The time between SIGTERM and SIGKILL when corral ends a command.
pub const DEFAULT_KILL_GRACE: Duration = Duration::from_secs(2);

pub use crate::request::{DEFAULT_OUTPUT_BUDGET, MAX_OUTPUT_BUDGET, MIN_OUTPUT_BUDGET};

/// The least a read the model asks for (`output`, `read_file`) shows, whatever the
/// window's budget: a model that asks for lines wants them, and a page the size of the
/// window would cost it three calls where one did before the window shrank.
pub const MIN_READ_BUDGET: usize = 32 * 1024;

/// The configuration of a [`Run`](crate::Run).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Wall-clock ceiling for a foreground call that sets none of its own.
    #[serde(with = "humantime_serde")]
    pub timeout: Duration,
    /// Time between SIGTERM and SIGKILL when a command is ended.
    #[serde(with = "humantime_serde")]
    pub kill_grace: Duration,
    /// After a command's main process exits, how long to keep reading output that
    /// something it left behind still writes, before that leftover is ended.
    #[serde(with = "humantime_serde")]
    pub drain_grace: Duration,
    /// Bytes of output text per observation (both streams together).
    pub output_budget: usize,
    /// Scan each call's output for the lines that say why it failed, and show those a
    /// cut window leaves out where its marker is (the default). Off, a cut window shows
    /// its head and tail alone, and the capture does a little less work per byte.
    pub failure_lines: bool,
    /// What environment commands see.
    pub env: EnvPolicy,
    /// Keep the captures of this many most recent runs.
    pub keep_runs: usize,
    /// And at most this many bytes of captures in all; the newest finished run and runs
    /// still going are kept whatever their size.
    pub max_capture_bytes: u64,
    /// The most processes and threads one call may have at once (`pids.max` of its
    /// cgroup), so a fork bomb stops; `None` for no bound. Applies only where corral
    /// contains calls in a cgroup with a `pids` controller: the outcome's `containment`
    /// ends in `+pids` or `+pids-v1` when it did. Threads count: keep it well above what
    /// a parallel build on the host's cores needs.
    pub pids_max: Option<u32>,
    /// The most memory one call's processes may use together (`memory.max` of its
    /// cgroup, with `memory.oom.group` so the whole call ends, and no swap): by default
    /// half of the smaller of the host's memory and the limits of corral's own cgroups,
    /// so a runaway call cannot take the machine or corral with it. A call ended by it
    /// says so. Applies only where corral contains calls in a cgroup with a `memory`
    /// controller: the sandbox report's `memory` layer says whether it did.
    pub memory_max: MemoryMax,
    /// Added to corral's own niceness for every call's processes (default 10), whose
    /// `RLIMIT_NICE` is 0, so they cannot raise it back: a busy build cannot starve the
    /// process that answers the model. 0 leaves calls at corral's own.
    pub nice: u8,
    /// Contain each call in a cgroup of its own where the host allows it (the default).
    /// `false` uses the weaker process-group + subreaper layer even where cgroups work.
    pub cgroups: bool,
    /// Give each call a PID namespace of its own where the host allows it (root, or for a
    /// sandboxed call an ordinary user where user namespaces are allowed; the default): everything in it is killed when the call ends, whatever cgroup, session
    /// or group it moved to, and its commands see only their own processes in `/proc`.
    /// The outcome's `containment` ends in `+pid-ns` when it did.
    pub pid_namespace: bool,
    /// Bytes a foreground call's capture keeps on disk per stream; past it, the head is
    /// kept and the tail keeps rolling.
    pub capture_cap: u64,
    /// Live background handles a run may have at once; the next start is refused.
    pub max_handles: usize,
    /// Bytes one `shell_poll` returns at most (the newest, when more is waiting).
    pub poll_window: usize,
    /// Bytes a handle's capture keeps on disk; past it, the head is kept and the tail
    /// keeps rolling.
    pub handle_capture_cap: u64,
    /// The sandbox commands run in (default: `full`, no sandbox).
    pub sandbox: crate::config::sandbox::SandboxConfig,
    /// How an observation that left output out names the call that reads it: the
    /// `output` tool (the default) or the `corral trace output` command.
    pub read_more: ReadMore,
    /// Whether a line outside corral's grammar may run through the host's `bash -c`
    /// (default: never; see [`HostShell`](crate::host_shell::HostShell)).
    pub host_shell: crate::config::host_shell::HostShell,
    /// Whether a line that ends with `cd DIR`, or a call given a `cwd`, sets the directory
    /// the run's later calls start in (default: off; every call starts at the workspace
    /// root, or at its own `cwd`).
    #[serde(default)]
    pub persist_cwd: bool,
    /// Record the workspace before each call that may write, so a person can undo what
    /// it did (`corral undo`; see [`crate::undo`]). On by default.
    pub record: bool,
    /// Keep the undo records of this many most recent runs that changed files (default
    /// 100)...
    pub undo_keep_runs: usize,
    /// ...and of none that started longer ago than this (default 30 days). A run still
    /// going and the newest that changed files are kept; blobs no kept record names are
    /// removed (see `undo::prune`).
    #[serde(with = "humantime_serde")]
    pub undo_keep_for: Duration,
    /// How much a record for undo may hold: past either bound the workspace is not
    /// recorded, and calls that would destroy work are asked about (default 50,000
    /// files, 200 MB; `[undo] max_files`, `max_mb`).
    pub undo_budget: UndoBudget,
}

/// How much a record for undo may hold (see [`Config::undo_budget`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct UndoBudget {
    /// Files (and empty directories and links).
    pub files: usize,
    /// Bytes of their content.
    pub bytes: u64,
    /// Bytes one run's records may add to the undo store (`[undo] store_max_mb`); `None`
    /// for the default: 1 GB, or a tenth of the state filesystem's free space as the run
    /// starts, whichever is less. A record past it is skipped and said, and the call
    /// counts as unrecorded (its destructive commands are asked about).
    #[serde(default)]
    pub store_bytes: Option<u64>,
}

/// The default [`UndoBudget`]: 50,000 files, 200 MB.
pub const DEFAULT_UNDO_BUDGET: UndoBudget = UndoBudget {
    files: 50_000,
    bytes: 200_000_000,
    store_bytes: None,
};

impl Default for UndoBudget {
    fn default() -> Self {
        DEFAULT_UNDO_BUDGET
    }
}

/// The most a foreground call's capture keeps on disk, per stream. Sized against
/// [`DEFAULT_MAX_CAPTURE_BYTES`]: a call that fills both streams keeps a quarter of it, so
/// retention never has to choose between the newest call and the ones before it.
pub const DEFAULT_CAPTURE_CAP: u64 = 256 << 20;

/// The most bytes of captures the trace keeps in all (the newest finished run and runs
/// still going are kept whatever their size).
pub const DEFAULT_MAX_CAPTURE_BYTES: u64 = 2 << 30;

/// The most a background handle's capture keeps on disk.
pub const DEFAULT_HANDLE_CAPTURE_CAP: u64 = 64 << 20;

impl Default for Config {
    fn default() -> Self {
        Self {
            timeout: DEFAULT_TIMEOUT,
            kill_grace: DEFAULT_KILL_GRACE,
            drain_grace: Duration::from_millis(250),
            output_budget: DEFAULT_OUTPUT_BUDGET,
            failure_lines: true,
            env: EnvPolicy::default(),
            keep_runs: 100,
            max_capture_bytes: DEFAULT_MAX_CAPTURE_BYTES,
            pids_max: Some(1024),
            memory_max: MemoryMax::Default,
            nice: DEFAULT_NICE,
            cgroups: true,
            pid_namespace: true,
            capture_cap: DEFAULT_CAPTURE_CAP,
            max_handles: 8,
            poll_window: 16 * 1024,
            handle_capture_cap: DEFAULT_HANDLE_CAPTURE_CAP,
            sandbox: crate::config::sandbox::SandboxConfig::default(),
            read_more: ReadMore::default(),
            host_shell: crate::config::host_shell::LIBRARY_DEFAULT_HOST_SHELL,
            persist_cwd: false,
            record: true,
            undo_keep_runs: 100,
            undo_keep_for: Duration::from_secs(30 * 24 * 3600),
            undo_budget: UndoBudget::default(),
        }
    }
}

/// How much a call's processes are niced by default (see [`Config::nice`]).
pub const DEFAULT_NICE: u8 = 10;

/// A call's memory bound (see [`Config::memory_max`]). Written and read as `"4G"`,
/// `"512M"`, `"1.5G"`, a number of bytes, `"none"` or `"default"`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum MemoryMax {
    /// Half of the smaller of the host's memory and corral's own cgroups' limits.
    #[default]
    Default,
    /// This many bytes.
    Bytes(u64),
    /// No bound of corral's.
    Unbounded,
}

impl MemoryMax {
    /// Parse `"4G"`, `"512M"`, `"1.5G"`, `"2048K"`, `"1073741824"`, `"none"`,
    /// `"default"` (units are binary: `G` is 2^30).
    pub fn parse(text: &str) -> Result<MemoryMax, String> {
        corral_policy::limits::parse_memory(text).map(MemoryMax::from)
    }
}

impl From<corral_policy::limits::MemoryLimit> for MemoryMax {
    fn from(limit: corral_policy::limits::MemoryLimit) -> Self {
        use corral_policy::limits::MemoryLimit;
        match limit {
            MemoryLimit::Default => MemoryMax::Default,
            MemoryLimit::Bytes(b) => MemoryMax::Bytes(b),
            MemoryLimit::Unbounded => MemoryMax::Unbounded,
        }
    }
}

impl std::fmt::Display for MemoryMax {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MemoryMax::Default => f.write_str("default"),
            MemoryMax::Unbounded => f.write_str("none"),
            MemoryMax::Bytes(b) => f.write_str(&human_bytes(*b)),
        }
    }
}

/// `4 GiB`, `512 MiB`, `1.5 GiB`: a size as a person reads it.
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [(&str, u32); 4] = [("TiB", 40), ("GiB", 30), ("MiB", 20), ("KiB", 10)];
    for (name, shift) in UNITS {
        let unit = 1u64 << shift;
        if bytes >= unit {
            let whole = bytes / unit;
            let tenths = (bytes % unit) * 10 / unit;
            return if tenths == 0 {
                format!("{whole} {name}")
            } else {
                format!("{whole}.{tenths} {name}")
            };
        }
    }
    format!("{bytes} B")
}

impl Serialize for MemoryMax {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            MemoryMax::Bytes(b) => s.serialize_u64(*b),
            other => s.serialize_str(&other.to_string()),
        }
    }
}

impl<'de> Deserialize<'de> for MemoryMax {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Bytes(u64),
            Text(String),
        }
        match Raw::deserialize(d)? {
            Raw::Bytes(b) => Ok(MemoryMax::Bytes(b)),
            Raw::Text(t) => MemoryMax::parse(&t).map_err(serde::de::Error::custom),
        }
    }
}

#[cfg(test)]
mod memory_tests {
    use super::*;

    #[test]
    fn sizes_read_and_print_as_people_write_them() {
        assert_eq!(MemoryMax::parse("4G"), Ok(MemoryMax::Bytes(4 << 30)));
        assert_eq!(MemoryMax::parse("none"), Ok(MemoryMax::Unbounded));
        assert!(MemoryMax::parse("lots").is_err());
        assert_eq!(human_bytes(4 << 30), "4 GiB");
        assert_eq!(human_bytes(3 << 29), "1.5 GiB");
    }
}

/// How an observation names the call that reads what it left out.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReadMore {
    /// The `output` tool and its arguments, as a model calls it:
    /// `output {"step":17,"stream":"stdout","lines":"41-642"}`.
    #[default]
    Tool,
    /// The `corral trace output` command, with `--store` when the run's store is not the
    /// default one: `corral trace output 17 --stream stdout --lines 41-642`.
    Command,
}
