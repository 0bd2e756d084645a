//! corral's MCP server: the library's calls as MCP tools, over stdio or Streamable HTTP.
//!
//! Over stdio ([`serve_stdio`]), one connection is one [`corral::Run`]: opened before the
//! first message is read, closed when the client disconnects (stdin reaches EOF) or the
//! process gets SIGTERM/SIGINT. Whatever is still running then is ended, and the run's end
//! is recorded in the trace. corral reads stdin itself so that every request, even one
//! that is not JSON or is over the message limit, gets a JSON-RPC answer.
//!
//! Over Streamable HTTP ([`serve_http`], `corral mcp --listen`), each MCP session is one
//! run, isolated from the others, ended by the client, an idle timeout or the server's
//! stop; a bearer token, `Origin` checks and TLS decide who gets in.
//!
//! The tools are `exec` and `shell` (foreground calls); `shell_start`, `shell_poll` and
//! `shell_kill` (background handles); `shell_write`, `shell_keys` and `shell_screen` (a
//! handle's input and, for one started with `tty: true`, its terminal); and `output`
//! (part of a capture this run made). `shell_resize` is not offered: `shell_start` takes
//! `rows` and `cols`, and the tool list stays smaller. Their input schemas are generated
//! from the library's request types, and each declares an output schema. Every result
//! carries the text the model reads twice, as `content` and as
//! `structuredContent.observation` (clients differ in which they hand a model), beside the
//! fields a program reads. A command that runs and fails is a normal result; so is a
//! request the grammar or the policy refused, or a person declined (`status: refused` or
//! `declined`, with `rule`, `layer` and `hint`), so that an agent reads what to do instead
//! and goes on. A request corral cannot understand is a tool error.
//!
//! While a foreground call runs, a client that sent a `progressToken` gets progress
//! notifications (elapsed time, bytes so far, the last line) at most twice a second; a
//! `notifications/cancelled` for the call ends the command's whole process tree. When the
//! policy says *ask*, the client is asked through elicitation; a client that cannot be
//! asked, a person who declines, or no answer within two minutes refuses the call.
//!
//! # The default posture
//!
//! The run gets [`corral::Surface::Mcp`]'s posture ([`corral::Posture`]): calls run in a
//! `workspace-write` sandbox with the network off (one network namespace for the run,
//! loopback up), approval `on-failure`, and, when this host enforces every sandbox layer,
//! a policy that allows what no rule asks about or denies, inline programs included; the
//! workspace's and the operator's `ask`/`deny` rules still apply, and so do the built-in
//! asks for what destroys work inside the box (layer `built-in: destroys work`). A write the
//! sandbox refused is offered to the person as a rerun with that path added. Where a layer
//! is missing or partial, the policy falls back to asking about everything not known to
//! be safe (`unless-trusted`), and the startup log, the server's instructions and every
//! result's sandbox line say so. `--sandbox`, `--network`, `--writable`, `--approval`
//! and the policy files change it; `corral policy show --surface mcp` prints it.
//!
//! Logs go to stderr, never stdout: stdout carries the protocol.

#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod approver;
mod http;
mod jsonrpc;
mod notify;
mod progress;
mod rounds;
mod server;
mod stdio;
mod template;
mod tools;

use std::path::PathBuf;
use std::time::Duration;

use corral::{ApprovalMode, Config, sandbox::SandboxMode};

pub use http::{
    DEFAULT_IDLE_TIMEOUT, DEFAULT_MAX_SESSIONS, HttpOptions, MCP_PATH, MIN_TOKEN_CHARS, TOKEN_VAR,
    TokenSource, serve_http, serve_http_blocking,
};
pub use server::CorralServer;
pub use stdio::DEFAULT_MAX_MESSAGE_BYTES;

/// The MCP protocol versions this server speaks, oldest first. On 2026-07-28 (no
/// `initialize`, no requests from the server in the middle of a call) an approval is an
/// input-required round: the call ends with the question, and runs when the client sends
/// it again with the person's answer.
pub const PROTOCOL_VERSIONS: &[&str] = &[
    "2024-11-05",
    "2025-03-26",
    "2025-06-18",
    "2025-11-25",
    "2026-07-28",
];

/// What `corral mcp --help` says about the protocol: paragraphs, not lines, which the
/// help wraps to the terminal.
pub const PROTOCOL_HELP: &str = "Serves MCP over stdio (newline-delimited JSON-RPC) to one client; logs go to \
stderr. Protocol versions: 2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25 and 2026-07-28 (there an \
approval is an input-required round: the call returns the question and runs when sent again with \
the answer). Messages over --max-message and lines that are not JSON get a JSON-RPC error.\n\n\
With --listen 127.0.0.1:PORT it serves Streamable HTTP at /mcp instead, one run per session; every \
request, loopback included, needs a bearer token (--token-file, CORRAL_MCP_TOKEN, else mcp-token made \
once in the state directory); off loopback it belongs behind TLS (--tls-cert/--tls-key).\n\n\
Connect a client: claude mcp add corral -- corral mcp --workspace .";

/// How long a person has to answer an approval question before the call is refused.
pub const APPROVAL_TIMEOUT: Duration = Duration::from_secs(120);

/// What `corral mcp` was told.
#[derive(Debug, Clone, Default)]
pub struct ServeOptions {
    /// The workspace root every call runs in (default: the current directory).
    pub workspace: Option<PathBuf>,
    /// Policy files stacked on top of the operator, user and project files.
    pub policy_files: Vec<PathBuf>,
    /// The trace database (default: [`corral::default_store_path`]).
    pub store: Option<PathBuf>,
    /// The bounds every call obeys (default: [`Config::default`]); its sandbox mode is
    /// the surface's default unless [`ServeOptions::sandbox`] names one.
    pub config: Config,
    /// Also offer the workspace file tools: `read_file`, `write_file`, `list_dir` and
    /// `apply_patch` (`--file-tools`).
    pub file_tools: bool,
    /// Also offer `undo`, which puts back what a call of the run changed
    /// (`--undo-tool`; otherwise undo is the person's, with `corral undo`).
    pub undo_tool: bool,
    /// The sandbox mode a flag chose (default: the MCP posture's, `workspace-write`).
    pub sandbox: Option<SandboxMode>,
    /// The approval mode a flag chose (default: the policy's, else the posture's).
    pub approval: Option<ApprovalMode>,
    /// The largest message read from the client, in bytes (default:
    /// [`DEFAULT_MAX_MESSAGE_BYTES`]); a longer one is answered with an error and skipped.
    pub max_message_bytes: Option<usize>,
    /// More for the startup log, one line each, after what the server says of itself
    /// (where OpenTelemetry spans go, say).
    pub notes: Vec<String>,
}

/// Why the server could not start or stopped abnormally.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The run could not be opened (bad workspace, policy file or store).
    #[error(transparent)]
    Corral(#[from] corral::Error),
    /// The async runtime or a signal handler could not be set up.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: &'static str,
        /// Why it failed.
        #[source]
        source: std::io::Error,
    },
    /// A flag or a file given to the server cannot be used.
    #[error("{0}")]
    Config(String),
    /// The MCP handshake with the client failed.
    #[error("the MCP client did not complete the handshake: {0}")]
    Handshake(String),
    /// The serving task failed.
    #[error("the MCP server stopped unexpectedly: {0}")]
    Serve(String),
}

impl Error {
    /// Whether the cause was a bad request (a workspace, file or flag to fix).
    pub fn is_invalid_request(&self) -> bool {
        match self {
            Error::Corral(e) => e.kind() == corral::ErrorKind::InvalidRequest,
            Error::Config(_) => true,
            _ => false,
        }
    }
}

/// Open the run `options` describe and serve it over this process's stdin and stdout
/// until the client disconnects or a SIGTERM/SIGINT arrives. Builds its own runtime.
pub fn serve_stdio_blocking(options: ServeOptions) -> Result<(), Error> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|source| Error::Io {
            context: "starting the async runtime",
            source,
        })?;
    let result = runtime.block_on(serve_stdio(options));
    // A read of stdin cannot be interrupted; do not wait for one at exit.
    runtime.shutdown_timeout(Duration::from_millis(100));
    result
}

/// [`serve_stdio_blocking`] inside a multi-threaded tokio runtime the caller owns.
pub async fn serve_stdio(options: ServeOptions) -> Result<(), Error> {
    let template = template::RunTemplate::new(&options)?;
    template.announce();
    let opened = template.open(&tokio::runtime::Handle::current())?;
    let max_message = options
        .max_message_bytes
        .unwrap_or(DEFAULT_MAX_MESSAGE_BYTES);
    server::serve(opened, max_message).await
}
