//! The command line as typed: clap only checks its shape; `exec.rs` and `trace.rs` turn
//! it into library requests.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};

#[derive(Debug, Parser)]
#[command(
    name = "corral",
    version,
    about = "Run commands for AI agents: no shell, bounded output, every process contained, everything traced."
)]
pub struct Cli {
    /// The trace database (default: $XDG_STATE_HOME/corral/trace.db).
    #[arg(long, global = true, env = "CORRAL_STORE", value_name = "PATH")]
    pub store: Option<PathBuf>,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run PROGRAM with ARGs (no shell), passing its output through and exiting with its status.
    Exec(ExecArgs),
    /// Run a command line in corral's own grammar (no shell): `corral shell 'make 2>&1 | tail -n 20'`.
    Shell(ShellArgs),
    /// Read the trace: runs, steps, captured output, refusals; prune old captures.
    #[command(subcommand)]
    Trace(TraceCommand),
    /// Ask the policy, without running anything.
    #[command(subcommand)]
    Policy(PolicyCommand),
    /// The sandbox: what this host can enforce (`corral sandbox report`).
    #[command(subcommand)]
    Sandbox(crate::sandbox::SandboxCommand),
    /// Serve exec, shell and background handles as MCP tools over stdio, for an agent client.
    #[command(after_help = corral_mcp::PROTOCOL_HELP)]
    Mcp(McpArgs),
}

/// What decides whether a command may start. Files and flags stack as layers on top of
/// the operator (`$CORRAL_POLICY`), user and project (`corral.toml`) files; a deny in any
/// layer beats an allow in any other.
#[derive(Debug, Clone, Args)]
pub struct PolicyArgs {
    /// A policy file to stack on top (repeatable).
    #[arg(long = "policy", value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Allow commands matching PATTERN (a program name, or a glob over the joined argv: "cargo test*").
    #[arg(long, value_name = "PATTERN")]
    pub allow: Vec<String>,
    /// Refuse commands matching PATTERN.
    #[arg(long, value_name = "PATTERN")]
    pub deny: Vec<String>,
    /// Ask before running commands matching PATTERN.
    #[arg(long, value_name = "PATTERN")]
    pub ask: Vec<String>,
    /// When to ask: never, on-request, unless-trusted, on-failure (default: the policy's, else on-request).
    #[arg(long, value_name = "MODE")]
    pub approval: Option<String>,
    /// Approve whatever the policy would ask about (denies still refuse).
    #[arg(long, short = 'y')]
    pub yes: bool,
}

#[derive(Debug, Subcommand)]
pub enum PolicyCommand {
    /// The decision for every stage and redirect, with rule, layer and origin. Exit 0 allow, 1 ask, 2 deny.
    Check {
        /// Workspace root (default: the current directory).
        #[arg(long, value_name = "DIR")]
        workspace: Option<PathBuf>,
        /// Check a command line instead of an argv.
        #[arg(long, value_name = "LINE", conflicts_with = "argv")]
        line: Option<String>,
        #[command(flatten)]
        policy: PolicyArgs,
        /// Print the checks as JSON.
        #[arg(long)]
        json: bool,
        /// The argv to check, after `--`.
        #[arg(trailing_var_arg = true, value_name = "PROGRAM [ARG]...")]
        argv: Vec<String>,
    },
    /// The effective layered policy for a workspace.
    Show {
        /// Workspace root (default: the current directory).
        #[arg(long, value_name = "DIR")]
        workspace: Option<PathBuf>,
        #[command(flatten)]
        policy: PolicyArgs,
    },
}

#[derive(Debug, Args)]
pub struct ExecArgs {
    /// Workspace root (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    /// Working directory, relative to the workspace root.
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<String>,
    /// Wall-clock limit, e.g. 500ms, 3s, 2m (default 15m).
    #[arg(long, value_name = "DUR", value_parser = duration)]
    pub timeout: Option<Duration>,
    /// Set an environment variable for the command (repeatable).
    #[arg(long = "env", value_name = "NAME=VALUE", value_parser = env_pair)]
    pub env: Vec<(String, String)>,
    /// Print the structured result as JSON instead of passing the output through.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub policy: PolicyArgs,
    #[command(flatten)]
    pub sandbox: crate::sandbox::SandboxArgs,
    /// The program and its arguments, after `--`.
    #[arg(
        required = true,
        trailing_var_arg = true,
        value_name = "PROGRAM [ARG]..."
    )]
    pub argv: Vec<String>,
}

#[derive(Debug, Args)]
pub struct ShellArgs {
    /// Workspace root (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    /// Directory the line starts in, relative to the workspace root.
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<String>,
    /// Wall-clock limit for the whole line, e.g. 500ms, 3s, 2m (default 15m).
    #[arg(long, value_name = "DUR", value_parser = duration)]
    pub timeout: Option<Duration>,
    /// Print the structured result as JSON instead of passing the output through.
    #[arg(long)]
    pub json: bool,
    /// Run the command (one command, no pipeline) on a pseudo-terminal, attached to this
    /// terminal when there is one: what you type goes to it, what it prints comes back.
    #[arg(long, conflicts_with = "json")]
    pub tty: bool,
    #[command(flatten)]
    pub policy: PolicyArgs,
    #[command(flatten)]
    pub sandbox: crate::sandbox::SandboxArgs,
    #[command(flatten)]
    pub host_shell: HostShellArgs,
    /// The command line: words, quotes, `|`, `&&`, `||`, `;`, redirects, here-documents,
    /// `cd DIR`.
    #[arg(value_name = "LINE")]
    pub line: String,
}

#[derive(Debug, Args)]
pub struct McpArgs {
    /// Workspace root every call runs in (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    /// A policy file to stack on the operator, user and workspace (corral.toml) files (repeatable).
    #[arg(long = "config", value_name = "FILE")]
    pub config: Vec<PathBuf>,
    /// Wall-clock limit for a call that sets none, e.g. 30s, 10m (default 15m).
    #[arg(long, value_name = "DUR", value_parser = duration)]
    pub timeout: Option<Duration>,
    #[command(flatten)]
    pub sandbox: crate::sandbox::SandboxArgs,
    #[command(flatten)]
    pub host_shell: HostShellArgs,
}

/// Whether a line outside corral's grammar may run through the host's `bash -c`.
#[derive(Debug, Args)]
pub struct HostShellArgs {
    /// A line outside the grammar (a loop, `$( )`, a glob, `&`): sandboxed (run it with
    /// `bash -c` in a sandbox this host enforces fully), ask (there, or when a person
    /// approves), or never. Default: `[shell] host_shell` in the policy files, else never.
    #[arg(long = "host-shell", value_name = "MODE", value_parser = host_shell_mode)]
    pub host_shell: Option<corral::HostShell>,
}

fn host_shell_mode(name: &str) -> Result<corral::HostShell, String> {
    corral::HostShell::from_name(name)
        .ok_or_else(|| "not a host-shell mode; choose sandboxed, ask or never".to_string())
}

impl HostShellArgs {
    /// The mode for a run in `workspace`: the flag, tightened by the policy files; without
    /// the flag, the files' setting, else `default`.
    pub fn resolve(
        &self,
        workspace: &std::path::Path,
        extra: &[PathBuf],
        default: corral::HostShell,
    ) -> anyhow::Result<corral::HostShell> {
        let files = corral::PolicyFiles::discover(workspace, extra)?.host_shell()?;
        Ok(match (self.host_shell, files) {
            (Some(flag), Some(files)) => flag.stricter(files),
            (Some(flag), None) => flag,
            (None, Some(files)) => files,
            (None, None) => default,
        })
    }
}

#[derive(Debug, Subcommand)]
pub enum TraceCommand {
    /// The most recent runs.
    Runs {
        #[arg(long, default_value_t = 20)]
        limit: usize,
        #[arg(long)]
        json: bool,
    },
    /// The most recent steps, of one run or of all.
    Steps {
        #[arg(long, value_name = "ID")]
        run: Option<String>,
        #[arg(long, default_value_t = 50)]
        limit: usize,
        #[arg(long)]
        json: bool,
    },
    /// What was refused: every refusal and every denied or aborted approval.
    Refused {
        #[arg(long, value_name = "ID")]
        run: Option<String>,
        #[arg(long, default_value_t = 50)]
        limit: usize,
        #[arg(long)]
        json: bool,
    },
    /// What a run started in the background, and how each handle ended.
    Handles {
        /// The run (default: the most recent).
        #[arg(long, value_name = "ID")]
        run: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Print the full captured output of a step.
    Output {
        /// The step id (shown by `corral trace steps` and in elided results).
        step: i64,
        #[arg(long, value_enum, default_value_t = Stream::Stdout)]
        stream: Stream,
    },
    /// Delete the captures of old runs (rows stay).
    Prune {
        /// Keep the captures of this many most recent runs.
        #[arg(long, default_value_t = 100)]
        keep_runs: usize,
        /// And at most this many bytes of captures, e.g. 1GiB, 500MiB.
        #[arg(long, default_value = "1GiB", value_parser = size)]
        max_bytes: u64,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Stream {
    Stdout,
    Stderr,
}

fn duration(text: &str) -> Result<Duration, String> {
    corral::parse_duration(text).map_err(|e| e.to_string())
}

fn env_pair(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((name, value)) if !name.is_empty() => Ok((name.to_string(), value.to_string())),
        _ => Err(format!("expected NAME=VALUE, got {text:?}")),
    }
}

fn size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: u64 = num
        .parse()
        .map_err(|_| format!("malformed size {text:?}: write e.g. 500MiB or 1GiB"))?;
    let mult: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        _ => {
            return Err(format!(
                "unknown size unit in {text:?}: use B, KiB, MiB or GiB"
            ));
        }
    };
    n.checked_mul(mult)
        .ok_or_else(|| format!("size {text:?} is too large"))
}
