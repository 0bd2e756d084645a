//! `corral mcp`: serve the tools over stdio (or Streamable HTTP with `--listen`) until the
//! client leaves or a signal arrives. The server is `corral_mcp`; this only turns the
//! flags into its options and its errors into a status.

use std::path::PathBuf;

use crate::args::{McpArgs, McpHttpArgs};
use crate::exit::Done;

/// Serve as `args` say; `exporter` says where OpenTelemetry spans go, when they do.
pub fn run(
    store: Option<PathBuf>,
    args: McpArgs,
    exporter: Option<String>,
) -> anyhow::Result<Done> {
    let workspace = crate::workspace::workspace_or_cwd(args.workspace.clone())?;
    let mut config = args.sandbox.config(&workspace)?;
    if let Some(timeout) = args.timeout {
        config.timeout = timeout;
    }
    let approval = crate::policy::approval_flag(args.approval.as_deref())?;
    let files = corral::PolicyFiles::discover(&workspace, &args.config)?;
    config.host_shell = args
        .host_shell
        .resolve(&files, corral::Surface::Mcp.host_shell())?;
    crate::policy::apply_file_settings(&files, &mut config, args.sandbox.memory.is_some())?;
    config.persist_cwd |= args.persist_cwd;
    let options = corral_mcp::ServeOptions {
        workspace: args.workspace,
        policy_files: args.config,
        store,
        config,
        file_tools: args.file_tools,
        undo_tool: args.undo_tool,
        sandbox: args.sandbox.mode,
        approval,
        max_message_bytes: args.max_message,
        notes: exporter.into_iter().collect(),
    };
    let served = match http_options(args.http)? {
        Some(http) => corral_mcp::serve_http_blocking(options, http),
        None => corral_mcp::serve_stdio_blocking(options),
    };
    match served {
        Ok(()) => Ok(Done::Status(0)),
        // A corral error keeps its kind, so a bad workspace or policy file exits 2.
        Err(corral_mcp::Error::Corral(e)) => Err(e.into()),
        Err(e) if e.is_invalid_request() => {
            Err(corral::Error::invalid_request(e.to_string()).into())
        }
        Err(e) => Err(e.into()),
    }
}

fn http_options(args: McpHttpArgs) -> anyhow::Result<Option<corral_mcp::HttpOptions>> {
    let Some(listen) = args.listen else {
        return Ok(None);
    };
    let mut http = corral_mcp::HttpOptions::new(listen);
    if let Some(idle) = args.idle_timeout {
        http.idle_timeout = idle;
    }
    if let Some(max) = args.max_sessions {
        http.max_sessions = max as usize;
    }
    http.token = token(args.token_file);
    http.tls = args.tls_cert.zip(args.tls_key);
    http.allowed_origins = args.allow_origin;
    Ok(Some(http))
}

/// Where the bearer token comes from: --token-file, else CORRAL_MCP_TOKEN, else the
/// state directory (the server checks and reads it).
fn token(file: Option<PathBuf>) -> corral_mcp::TokenSource {
    match (file, std::env::var(corral_mcp::TOKEN_VAR)) {
        (Some(path), _) => corral_mcp::TokenSource::File(path),
        (None, Ok(text)) => corral_mcp::TokenSource::Given {
            text,
            from: corral_mcp::TOKEN_VAR.to_string(),
        },
        (None, Err(_)) => corral_mcp::TokenSource::StateDir,
    }
}
