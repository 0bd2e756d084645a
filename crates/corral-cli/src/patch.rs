//! `corral patch`: apply a patch in Codex's format, read on stdin, to the workspace, all
//! of it or none, with the same confinement and policy checks a model's `apply_patch` gets.

use std::io::Read;
use std::path::PathBuf;

use anyhow::Context;
use clap::Args;
use corral::patch::PatchRequest;

use crate::args::PolicyArgs;
use crate::exit::Done;

#[derive(Debug, Args)]
pub struct PatchArgs {
    /// Workspace root (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    #[command(flatten)]
    pub policy: PolicyArgs,
    #[command(flatten)]
    pub sandbox: crate::sandbox::SandboxArgs,
}

pub fn run(store: Option<PathBuf>, args: PatchArgs) -> anyhow::Result<Done> {
    let mut patch = String::new();
    std::io::stdin()
        .read_to_string(&mut patch)
        .context("reading the patch from stdin")?;
    if patch.trim().is_empty() {
        return Err(corral::Error::invalid_request(
            "no patch on stdin: pipe one in, e.g. `corral patch < fix.patch`, starting with `*** Begin Patch`",
        )
        .into());
    }
    let run = crate::exec::open_run(
        store,
        args.workspace,
        &args.policy,
        &args.sandbox,
        None,
        crate::exec::Calls::Other,
    )?;
    let result = run.apply_patch(&PatchRequest::new(patch));
    run.close()?;
    print!("{}", result?.observation);
    Ok(Done::Status(0))
}
