//! `corral mcp`: serve the tools over stdio until the client leaves. The server is
//! `corral_mcp`; this only turns the flags into its options and its errors into a status.

use std::path::PathBuf;

use crate::args::McpArgs;
use crate::exit::Done;

pub fn run(store: Option<PathBuf>, args: McpArgs) -> anyhow::Result<Done> {
    let workspace = crate::policy::workspace_or_cwd(args.workspace.clone())?;
    let mut config = args.sandbox.config(&workspace)?;
    if let Some(timeout) = args.timeout {
        config.timeout = timeout;
    }
    config.host_shell =
        args.host_shell
            .resolve(&workspace, &args.config, corral::MCP_DEFAULT_HOST_SHELL)?;
    let options = corral_mcp::ServeOptions {
        workspace: args.workspace,
        policy_files: args.config,
        store,
        config,
    };
    match corral_mcp::serve_stdio_blocking(options) {
        Ok(()) => Ok(Done::Status(0)),
        // A corral error keeps its kind, so a bad workspace or policy file exits 2.
        Err(corral_mcp::Error::Corral(e)) => Err(e.into()),
        Err(e) => Err(e.into()),
    }
}
