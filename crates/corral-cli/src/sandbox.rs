//! `corral sandbox report`, and the `--sandbox`, `--network`, `--writable`,
//! `--pid-namespace` and `--git-write` flags of `corral exec`, `corral shell` and `corral
//! mcp`.

use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};
use corral::{Config, sandbox::SandboxMode};

use crate::exit::Done;

#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub enum SandboxCommand {
    /// What this host can enforce, layer by layer, for a workspace-write sandbox with the
    /// network off.
    Report {
        /// The workspace a call would run in: its protected paths are reported as a
        /// call there would have them (default: the current directory).
        #[arg(long, value_name = "DIR")]
        workspace: Option<PathBuf>,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
}

// The sandbox of an `exec` or `shell` call, or of every call `corral mcp` serves.
#[derive(Debug, Clone, Default, Args)]
pub struct SandboxArgs {
    /// read-only, workspace-write, full (no sandbox) or external (the caller's own box).
    ///
    /// Default: full for exec and shell, workspace-write for mcp.
    #[arg(long = "sandbox", value_name = "MODE", value_parser = sandbox_mode)]
    pub mode: Option<SandboxMode>,
    /// Network in the sandboxed modes: on, off (the default), or allow=DOMAIN[,DOMAIN…].
    ///
    /// allow= lets only those names through corral's proxy (wildcards like *.npmjs.org;
    /// presets npm, pypi, crates, go, github).
    #[arg(long, value_name = "on|off|allow=DOMAINS", value_parser = network)]
    pub network: Option<Network>,
    /// Another directory the command may write in workspace-write (repeatable).
    #[arg(long = "writable", value_name = "DIR")]
    pub writable: Vec<PathBuf>,
    /// A PID namespace per call: on (default) or off.
    ///
    /// As an ordinary user, per sandboxed call. Everything in it ends with the call, and
    /// `ps` or `kill` in a command reach only the call's processes.
    #[arg(long = "pid-namespace", value_name = "on|off", value_parser = on_off)]
    pub pid_namespace: Option<bool>,
    /// Kept for old scripts; does nothing: git writes its own data in the box by default.
    ///
    /// Its hooks, config and `info/` stay read-only, and `corral undo` puts refs and the
    /// index back. `[sandbox] git_write = false` makes the whole `.git` read-only.
    #[arg(long = "git-write")]
    pub git_write: bool,
    /// The most memory one call's processes may use together, e.g. 4G, 512M or none.
    ///
    /// Default: `[limits] memory` of the policy files, else half the host's memory.
    /// Where corral gives calls a cgroup with the memory controller.
    #[arg(long = "memory", value_name = "SIZE", value_parser = corral::config::MemoryMax::parse)]
    pub memory: Option<corral::config::MemoryMax>,
}

fn sandbox_mode(name: &str) -> Result<SandboxMode, String> {
    SandboxMode::from_name(name).ok_or_else(|| {
        "not a sandbox mode; choose read-only, workspace-write, full or external".to_string()
    })
}

/// The `--network` flag.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Network {
    On,
    Off,
    /// Only these names (entries as given), through the proxy.
    Allow(Vec<String>),
}

fn network(text: &str) -> Result<Network, String> {
    if let Some(list) = text.strip_prefix("allow=") {
        let entries: Vec<String> = list
            .split(',')
            .map(str::trim)
            .filter(|e| !e.is_empty())
            .map(str::to_string)
            .collect();
        if entries.is_empty() {
            return Err("allow= needs at least one domain, e.g. allow=registry.npmjs.org".into());
        }
        corral::sandbox::domains::AllowList::parse(&entries)?;
        return Ok(Network::Allow(entries));
    }
    match on_off(text) {
        Ok(true) => Ok(Network::On),
        Ok(false) => Ok(Network::Off),
        Err(_) => Err("say on or off, or allow=DOMAIN[,DOMAIN…]".to_string()),
    }
}

fn on_off(text: &str) -> Result<bool, String> {
    match text {
        "on" => Ok(true),
        "off" => Ok(false),
        _ => Err("say on or off".to_string()),
    }
}

impl SandboxArgs {
    /// The run's configuration with these flags applied.
    pub fn config(&self, workspace: &Path) -> anyhow::Result<Config> {
        let mut config = Config::default();
        if let Some(mode) = self.mode {
            config.sandbox.mode = mode;
        }
        match &self.network {
            Some(Network::On) => config.sandbox.network = true,
            Some(Network::Off) | None => config.sandbox.network = false,
            Some(Network::Allow(entries)) => {
                config.sandbox.network = false;
                config.sandbox.network_allow = entries.clone();
            }
        }
        for dir in &self.writable {
            config.sandbox.writable_roots.push(workspace.join(dir));
        }
        if let Some(on) = self.pid_namespace {
            config.pid_namespace = on;
        }
        if self.git_write {
            eprintln!(
                "corral: note: --git-write does nothing now: git writes its own data in the \
                 box by default (`[sandbox] git_write = false` keeps the whole .git read-only)"
            );
        }
        if let Some(memory) = self.memory {
            config.memory_max = memory;
        }
        Ok(config)
    }
}

pub fn run(command: SandboxCommand) -> anyhow::Result<Done> {
    match command {
        SandboxCommand::Report { workspace, json } => {
            let workspace = crate::workspace::workspace_or_cwd(workspace)?;
            let report = corral::sandbox::enforcement::host_report_for(Some(&workspace));
            if json {
                println!("{}", serde_json::to_string_pretty(&report)?);
            } else {
                println!(
                    "what this host enforces for --sandbox workspace-write --network off in {}:",
                    workspace.display()
                );
                for l in &report.layers {
                    println!("  {:<16} {:<8} {}", l.layer, l.level.name(), l.detail);
                }
            }
            Ok(Done::Status(0))
        }
    }
}
