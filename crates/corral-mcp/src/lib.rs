//! corral's MCP server: the library's calls as MCP tools, over stdio.
//!
//! One connection is one [`corral::Run`]: opened before the first message is read, closed
//! when the client disconnects (stdin reaches EOF) or the process gets SIGTERM/SIGINT.
//! Whatever is still running then is ended, and the run's end is recorded in the trace.
//!
//! The tools are `exec` and `shell` (foreground calls); `shell_start`, `shell_poll` and
//! `shell_kill` (background handles); and `shell_write`, `shell_keys` and `shell_screen`
//! (a handle's input and, for one started with `tty: true`, its terminal). `shell_resize`
//! is not offered: `shell_start` takes `rows` and `cols`, and the tool list stays smaller.
//! Their input schemas are generated from the library's request types; every result
//! carries the text the model reads (`content`) and the fields a program reads
//! (`structuredContent`). A command that runs and fails is a
//! normal result; a request the policy or the grammar refuses is a tool error whose text
//! says what to do instead.
//!
//! While a foreground call runs, a client that sent a `progressToken` gets progress
//! notifications (elapsed time, bytes so far, the last line) at most twice a second; a
//! `notifications/cancelled` for the call ends the command's whole process tree. When the
//! policy says *ask*, the client is asked through elicitation; a client that cannot be
//! asked, a person who declines, or no answer within two minutes refuses the call.
//!
//! Logs go to stderr, never stdout: stdout carries the protocol.

mod approver;
mod notify;
mod progress;
mod server;
mod tools;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use corral::{ApprovalMode, Config, Policy, PolicyFiles, Run};

pub use server::CorralServer;

/// The MCP protocol versions this server speaks, oldest first. The 2026-07-28 revision
/// (no `initialize`, no server-to-client requests) is not offered: approvals need an
/// elicitation request in the middle of a call.
pub const PROTOCOL_VERSIONS: &[&str] = &["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

/// What `corral mcp --help` says about the protocol.
pub const PROTOCOL_HELP: &str = "Serves MCP over stdio (newline-delimited JSON-RPC) to one client; logs go to stderr.\n\
Protocol versions: 2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25 (from the rmcp SDK, which also knows\n\
2026-07-28; that revision is not offered: it forbids the mid-call elicitation approvals use).\n\
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
    /// The bounds every call obeys (default: [`Config::default`]).
    pub config: Config,
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
        matches!(self, Error::Corral(e) if e.kind() == corral::ErrorKind::InvalidRequest)
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
    let workspace = match options.workspace {
        Some(dir) => dir,
        None => std::env::current_dir().map_err(|source| Error::Io {
            context: "reading the current directory",
            source,
        })?,
    };
    let policy =
        PolicyFiles::discover(&workspace, &options.policy_files)?.load_onto(Policy::default())?;
    let mode = policy
        .approval_mode()
        .unwrap_or(ApprovalMode::UnlessTrusted);
    let approver = approver::ElicitApprover::new(tokio::runtime::Handle::current());
    let notifier = notify::Notifier::new(tokio::runtime::Handle::current());
    let mut builder = Run::builder(workspace)
        .config(options.config)
        .policy(policy)
        .approval(mode)
        .approver(approver.clone());
    builder = server::watch_handles(builder, notifier.clone());
    if let Some(store) = options.store {
        builder = builder.store(store);
    }
    let run = Arc::new(builder.open()?);
    for gone in run.abandoned() {
        eprintln!(
            "corral mcp: closed run {} as aborted: its corral (pid {}) had ended without closing it",
            gone.run_id, gone.pid
        );
    }
    server::serve(run, approver, notifier).await
}
