//! The command line as typed: clap only checks its shape; `exec.rs` and `trace.rs` turn
//! it into library requests.

use std::ffi::{OsStr, OsString};
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Subcommand, ValueEnum};

// What decides whether a command may start. Files and flags stack as layers on top of
// the operator (`$CORRAL_POLICY`), user and project (`corral.toml`) files; a deny in any
// layer beats an allow in any other.
#[derive(Debug, Clone, Args)]
pub struct PolicyArgs {
    /// A policy file to stack on the operator, user and workspace (corral.toml) files
    /// (repeatable; `--policy` is the same).
    #[arg(long = "config", visible_alias = "policy", value_name = "FILE")]
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
    /// Who sends the command: `person` (the default; your own one-liners and
    /// `NAME=value` run without a question) or `model`, for an agent driving the command
    /// line: exactly `corral mcp`'s posture (its policy, approval, built-in asks for what
    /// destroys work, and its sandbox unless `--sandbox` names one).
    #[arg(long, value_name = "person|model", env = "CORRAL_CALLER", default_value = "person", value_parser = ["person", "model"])]
    pub caller: String,
}

#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub enum PolicyCommand {
    /// The decision for every stage and redirect, with rule, layer and origin, and what the
    /// approval mode makes of it. Exit 0 runs, 1 asks the approver, 2 refused.
    Check {
        /// Workspace root (default: the current directory).
        #[arg(long, value_name = "DIR")]
        workspace: Option<PathBuf>,
        /// Check a command line instead of an argv.
        #[arg(long, value_name = "LINE", conflicts_with = "argv", value_parser = Utf8Text("--line", CHECK_ARGV))]
        line: Option<String>,
        /// Whose defaults: cli (corral exec/shell), mcp (corral mcp) or library.
        #[arg(long, value_name = "SURFACE", default_value = "cli", value_parser = surface)]
        surface: corral::Surface,
        #[command(flatten)]
        policy: PolicyArgs,
        #[command(flatten)]
        sandbox: crate::sandbox::SandboxArgs,
        #[command(flatten)]
        host_shell: HostShellArgs,
        /// Print the checks as JSON.
        #[arg(long)]
        json: bool,
        /// The argv to check, after `--`: bytes, checked as `corral exec` would.
        #[arg(trailing_var_arg = true, value_name = "PROGRAM [ARG]...")]
        argv: Vec<OsString>,
    },
    /// The effective layered policy, approval mode and sandbox a surface uses in a workspace.
    Show {
        /// Workspace root (default: the current directory).
        #[arg(long, value_name = "DIR")]
        workspace: Option<PathBuf>,
        /// Whose defaults: cli (corral exec/shell), mcp (corral mcp) or library.
        #[arg(long, value_name = "SURFACE", default_value = "cli", value_parser = surface)]
        surface: corral::Surface,
        #[command(flatten)]
        policy: PolicyArgs,
        #[command(flatten)]
        sandbox: crate::sandbox::SandboxArgs,
    },
    /// Trust the workspace's corral.toml as it is now, so its allow rules and approval
    /// apply. Until then (and after any change) it only tightens the policy.
    Trust {
        /// Workspace root (default: the current directory).
        #[arg(long, value_name = "DIR")]
        workspace: Option<PathBuf>,
    },
}

#[derive(Debug, Args)]
pub struct ExecArgs {
    /// Workspace root (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    /// Working directory, relative to the workspace root.
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    /// Wall-clock limit, e.g. 500ms, 3s, 2m (default 15m).
    #[arg(long, value_name = "DUR", value_parser = duration)]
    pub timeout: Option<Duration>,
    /// Set an environment variable for the command (repeatable); VALUE may be any bytes.
    #[arg(long = "env", value_name = "NAME=VALUE", value_parser = EnvPair)]
    pub env: Vec<(String, OsString)>,
    /// Print the structured result as JSON instead of passing the output through.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub policy: PolicyArgs,
    #[command(flatten)]
    pub sandbox: crate::sandbox::SandboxArgs,
    /// The program and its arguments, after `--`: bytes, passed on unchanged.
    #[arg(
        required = true,
        trailing_var_arg = true,
        value_name = "PROGRAM [ARG]..."
    )]
    pub argv: Vec<OsString>,
}

#[derive(Debug, Args)]
pub struct ShellArgs {
    /// Workspace root (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    /// Directory the line starts in, relative to the workspace root.
    #[arg(long, value_name = "DIR", value_parser = Utf8Text("--cwd", EXEC_ARGV))]
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
    /// `cd DIR`. A line is UTF-8 text.
    #[arg(value_name = "LINE", value_parser = Utf8Text("LINE", EXEC_ARGV))]
    pub line: String,
}

#[derive(Debug, Args)]
pub struct McpArgs {
    /// Workspace root every call runs in (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    /// A policy file to stack on the other policy files (repeatable).
    ///
    /// Stacked on the operator's, the user's and the workspace's (corral.toml).
    /// `--policy` is the same.
    #[arg(long = "config", visible_alias = "policy", value_name = "FILE")]
    pub config: Vec<PathBuf>,
    /// Wall-clock limit for a call that sets none, e.g. 30s, 10m (default 15m).
    #[arg(long, value_name = "DUR", value_parser = duration)]
    pub timeout: Option<Duration>,
    /// Also offer read_file, write_file, list_dir and apply_patch.
    ///
    /// For clients without file tools of their own.
    #[arg(long)]
    pub file_tools: bool,
    /// Also offer undo, which puts back what a call of the run changed.
    ///
    /// Without it, undo is yours alone: corral undo.
    #[arg(long)]
    pub undo_tool: bool,
    /// When to ask the person: never, on-request, unless-trusted, on-failure.
    ///
    /// Default: the policy's, else on-failure where this host enforces every sandbox
    /// layer, else unless-trusted.
    #[arg(long, value_name = "MODE")]
    pub approval: Option<String>,
    /// The largest message a client may send, e.g. 8MiB (the default), 64MiB.
    ///
    /// A longer one is answered with an error naming the limit, and skipped.
    #[arg(long, value_name = "SIZE", value_parser = message_size)]
    pub max_message: Option<usize>,
    /// Keep a working directory per run, set by a final `cd DIR` or a call's cwd.
    ///
    /// A line ending in `cd DIR`, or a call's cwd, sets where later calls start (also
    /// `[shell] persist_cwd = true`).
    #[arg(long)]
    pub persist_cwd: bool,
    #[command(flatten)]
    pub http: McpHttpArgs,
    #[command(flatten)]
    pub sandbox: crate::sandbox::SandboxArgs,
    #[command(flatten)]
    pub host_shell: HostShellArgs,
}

// Whether a line outside corral's grammar may run through the host's `bash -c`.
#[derive(Debug, Args)]
pub struct HostShellArgs {
    /// How a line outside the grammar runs: sandboxed, ask or never.
    ///
    /// Such a line has a loop, `$( )`, `$VAR` or `[[ ]]`. sandboxed: with `bash -c` in a
    /// sandbox this host enforces fully; ask: there, or when a person approves. Default:
    /// `[shell] host_shell` in the policy files, else never (sandboxed for corral mcp).
    #[arg(long = "host-shell", value_name = "MODE", value_parser = host_shell_mode)]
    pub host_shell: Option<corral::config::host_shell::HostShell>,
}

fn host_shell_mode(name: &str) -> Result<corral::config::host_shell::HostShell, String> {
    corral::config::host_shell::HostShell::from_name(name)
        .ok_or_else(|| "not a host-shell mode; choose sandboxed, ask or never".to_string())
}

impl HostShellArgs {
    /// The mode for a run with these policy `files`: the flag (else `default`), set by the
    /// trusted files where the flag is absent and tightened by every file.
    pub fn resolve(
        &self,
        files: &corral::PolicyFiles,
        default: corral::config::host_shell::HostShell,
    ) -> anyhow::Result<corral::config::host_shell::HostShell> {
        Ok(match self.host_shell {
            // A flag is the person's own choice; a file can only tighten it.
            Some(flag) => files
                .host_shell(corral::config::host_shell::HostShell::Ask)?
                .stricter(flag),
            None => files.host_shell(default)?,
        })
    }
}

// `corral mcp --listen`: Streamable HTTP instead of stdio.
#[derive(Debug, Args)]
pub struct McpHttpArgs {
    /// Serve MCP over Streamable HTTP at http://ADDR:PORT/mcp instead of stdio.
    ///
    /// One run per session (port 0: any free port; the bound address is logged). A bearer
    /// token is required on every request, loopback included.
    #[arg(long, value_name = "ADDR:PORT")]
    pub listen: Option<std::net::SocketAddr>,
    /// End a session idle this long, and every process it started (default 30m).
    #[arg(long, value_name = "DUR", value_parser = duration, requires = "listen")]
    pub idle_timeout: Option<Duration>,
    /// Refuse a new session while this many are live (default 64).
    #[arg(long, value_name = "N", requires = "listen", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_sessions: Option<u32>,
    /// The bearer token is this file's content (trimmed, 32 characters at least).
    ///
    /// The file must lie outside the workspace and every writable root; clients send
    /// `Authorization: Bearer TOKEN`. CORRAL_MCP_TOKEN sets it too; with neither, corral
    /// makes one in its state directory (mcp-token, 0600), reuses it on every start, and
    /// logs where it is.
    #[arg(long, value_name = "FILE", requires = "listen")]
    pub token_file: Option<PathBuf>,
    /// Serve HTTPS with this PEM certificate chain (with --tls-key).
    #[arg(long, value_name = "FILE", requires_all = ["listen", "tls_key"])]
    pub tls_cert: Option<PathBuf>,
    /// The PEM private key of --tls-cert.
    #[arg(long, value_name = "FILE", requires_all = ["listen", "tls_cert"])]
    pub tls_key: Option<PathBuf>,
    // Its help is an attribute, not a doc comment: rustdoc would read the URL as a link.
    #[arg(
        long,
        value_name = "ORIGIN",
        requires = "listen",
        help = "Also accept requests whose Origin is ORIGIN (repeatable)",
        long_help = "Also accept requests whose Origin is ORIGIN (repeatable), e.g. https://app.example.com:443"
    )]
    pub allow_origin: Vec<String>,
}

#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub enum TraceCommand {
    /// The most recent runs.
    Runs {
        /// How many, newest first.
        #[arg(long, default_value_t = 20)]
        limit: usize,
        /// Print the rows as JSON.
        #[arg(long)]
        json: bool,
    },
    /// A whole run as it happened: model turns, tool calls and the gate (default: the most recent run).
    Show {
        #[arg(long, value_name = "ID")]
        run: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// The most recent steps, of one run or of all.
    Steps {
        /// Only this run's steps (default: every run's).
        #[arg(long, value_name = "ID")]
        run: Option<String>,
        /// How many, newest first.
        #[arg(long, default_value_t = 50)]
        limit: usize,
        /// Print the rows as JSON.
        #[arg(long)]
        json: bool,
    },
    /// What was refused: every refusal and every denied or aborted approval.
    Refused {
        /// Only this run's refusals (default: every run's).
        #[arg(long, value_name = "ID")]
        run: Option<String>,
        /// How many, newest first.
        #[arg(long, default_value_t = 50)]
        limit: usize,
        /// Print the rows as JSON.
        #[arg(long)]
        json: bool,
    },
    /// What a run started in the background, and how each handle ended.
    Handles {
        /// The run (default: the most recent).
        #[arg(long, value_name = "ID")]
        run: Option<String>,
        /// Print the rows as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Print the full captured output of a step.
    Output(OutputArgs),
    /// Delete the captures of old runs (rows stay), the undo records of old runs with the
    /// stored content no record names any more, and the held changes of runs no longer in
    /// the trace.
    Prune {
        /// Keep the captures of this many most recent runs.
        #[arg(long, default_value_t = 100)]
        keep_runs: usize,
        /// And at most this many bytes of captures, e.g. 1GiB, 500MiB.
        #[arg(long, default_value = "1GiB", value_parser = size)]
        max_bytes: u64,
        /// Keep the undo records of this many most recent runs that changed files.
        #[arg(long, default_value_t = 100, value_name = "N")]
        undo_keep_runs: usize,
        /// And of none older than this many days (the newest run is always kept).
        #[arg(long, default_value_t = 30, value_name = "DAYS")]
        undo_keep_days: u64,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Stream {
    Stdout,
    Stderr,
}

fn surface(name: &str) -> Result<corral::Surface, String> {
    corral::Surface::from_name(name)
        .ok_or_else(|| "not a surface; choose cli, mcp or library".to_string())
}

fn duration(text: &str) -> Result<Duration, String> {
    corral::parse_duration(text).map_err(|e| e.to_string())
}

/// `NAME=VALUE`: the name UTF-8 text, the value any bytes.
#[derive(Clone)]
struct EnvPair;

impl clap::builder::TypedValueParser for EnvPair {
    type Value = (String, OsString);

    fn parse_ref(
        &self,
        _cmd: &clap::Command,
        _arg: Option<&clap::Arg>,
        value: &OsStr,
    ) -> Result<Self::Value, clap::Error> {
        use std::os::unix::ffi::OsStrExt;
        let bytes = value.as_bytes();
        let split = bytes.iter().position(|&b| b == b'=');
        let name = split.and_then(|i| std::str::from_utf8(&bytes[..i]).ok());
        match (split, name) {
            (Some(i), Some(name)) if !name.is_empty() => Ok((
                name.to_string(),
                OsStr::from_bytes(&bytes[i + 1..]).to_owned(),
            )),
            _ => Err(clap::Error::raw(
                clap::error::ErrorKind::ValueValidation,
                format!(
                    "--env expects NAME=VALUE with a UTF-8 NAME, got {}\n",
                    corral::trace::escape(value)
                ),
            )),
        }
    }
}

/// Text that must be UTF-8, with an error that says which argument, why, and what takes
/// bytes instead.
#[derive(Clone)]
struct Utf8Text(&'static str, &'static str);

/// What passes bytes in place of a `corral shell` line.
const EXEC_ARGV: &str = "run the program with `corral exec [--cwd DIR] -- PROGRAM ARG...`, \
                         which passes the directory and each argument as its bytes";

/// What checks bytes in place of a `--line`.
const CHECK_ARGV: &str = "check the argv instead: `corral policy check -- PROGRAM ARG...` takes each argument as its bytes";

impl clap::builder::TypedValueParser for Utf8Text {
    type Value = String;

    fn parse_ref(
        &self,
        _cmd: &clap::Command,
        _arg: Option<&clap::Arg>,
        value: &OsStr,
    ) -> Result<Self::Value, clap::Error> {
        value.to_str().map(str::to_string).ok_or_else(|| {
            clap::Error::raw(
                clap::error::ErrorKind::InvalidUtf8,
                format!(
                    "{} is not UTF-8 ({}): a command line is text. For bytes that are not \
                     UTF-8, {}\n",
                    self.0,
                    corral::trace::escape(value),
                    self.1
                ),
            )
        })
    }
}

fn message_size(text: &str) -> Result<usize, String> {
    match size(text)? {
        0 => Err("a message limit of 0 bytes refuses everything: give e.g. 8MiB".into()),
        n => usize::try_from(n).map_err(|_| format!("size {text:?} is too large")),
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

/// `corral trace output`: all of a capture, or part of it numbered like `grep -n`.
#[derive(Debug, clap::Args)]
#[command(group = clap::ArgGroup::new("part").multiple(false))]
pub struct OutputArgs {
    /// The step id (shown by `corral trace steps` and in elided results).
    #[arg(required_unless_present = "handle", conflicts_with = "handle")]
    pub step: Option<i64>,
    /// Which stream of the step.
    #[arg(long, value_enum, default_value_t = Stream::Stdout)]
    pub stream: Stream,
    /// A background handle's output instead (with --run; default: the newest run).
    #[arg(long)]
    pub handle: Option<u32>,
    /// The run the handle belongs to.
    #[arg(long, requires = "handle")]
    pub run: Option<String>,
    /// Lines A-B (from 1, both included; A- to the end).
    #[arg(long, group = "part")]
    pub lines: Option<String>,
    /// Bytes A-B (from 0, both included), unnumbered.
    #[arg(long, group = "part")]
    pub bytes: Option<String>,
    /// The first N lines.
    #[arg(long, group = "part")]
    pub head: Option<u64>,
    /// The last N lines.
    #[arg(long, group = "part")]
    pub tail: Option<u64>,
    /// The lines matching a regular expression.
    #[arg(long, group = "part")]
    pub grep: Option<String>,
    /// With --grep: lines of context around each match.
    #[arg(short = 'C', long, requires = "grep")]
    pub context: Option<u64>,
}
