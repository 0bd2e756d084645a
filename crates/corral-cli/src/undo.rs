//! `corral undo`: put the workspace's files back as they were before a call, or before a
//! whole run (see `corral::undo`). A person's command: MCP offers it to the model only
//! when `corral mcp --undo-tool` says so.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;
use clap::Args;
use corral::trace::Store;
use corral::undo::{UndoPlan, UndoTarget};

use crate::exit::{BadRequest, Done};

#[derive(Debug, Args)]
pub struct UndoArgs {
    /// The step to undo: its number in the run (`corral trace show` lists them). Default:
    /// the last call in this workspace that changed a file.
    pub step: Option<i64>,
    /// Undo every step of RUN (with STEP: the run STEP is in; default the newest run of
    /// the workspace).
    #[arg(long, value_name = "RUN")]
    pub run: Option<String>,
    /// List what would change back, and change nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Workspace root (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
}

pub fn run(store: Option<PathBuf>, args: UndoArgs) -> anyhow::Result<Done> {
    let path = match store {
        Some(p) => p,
        None => corral::default_store_path()
            .context("no trace location: set CORRAL_STORE or HOME, or pass --store")?,
    };
    let store = Store::open_existing(&path)?;
    let dir = corral::undo::store_dir(&path);
    let workspace = crate::workspace::workspace_or_cwd(args.workspace)?;
    let workspace = workspace
        .canonicalize()
        .with_context(|| format!("resolving the workspace {}", workspace.display()))?;
    let target = match (args.step, args.run) {
        (None, None) => UndoTarget::Last { workspace },
        (None, Some(run)) => UndoTarget::Run(run),
        (Some(seq), run) => UndoTarget::Step(step_id(&store, &workspace, run, seq)?),
    };
    let plan = corral::undo::plan(&store, &dir, &target)?;
    let mut out = std::io::stdout().lock();
    list(&plan, args.dry_run, &mut out)?;
    if !plan.conflicts.is_empty() || args.dry_run {
        return Ok(Done::Status(i32::from(!plan.conflicts.is_empty())));
    }
    corral::undo::apply(&plan, &dir)?;
    Ok(Done::Status(0))
}

/// The global id of step `seq` of `run`, or of the newest run in `workspace`.
fn step_id(
    store: &Store,
    workspace: &std::path::Path,
    run: Option<String>,
    seq: i64,
) -> anyhow::Result<i64> {
    let run = match run {
        Some(run) => run,
        None => {
            let ws = corral::trace::escape_path(workspace).into_owned();
            store
                .runs(usize::MAX >> 1)?
                .into_iter()
                .find(|r| r.workspace == ws)
                .map(|r| r.id)
                .ok_or_else(|| BadRequest(format!("no run in {}", workspace.display())))?
        }
    };
    store
        .steps(Some(&run), usize::MAX >> 1)?
        .into_iter()
        .find(|s| s.seq == seq)
        .map(|s| s.id)
        .ok_or_else(|| BadRequest(format!("run {run} has no step {seq}")).into())
}

/// What changes back, one file a line. A name is a model's choice: it is written as
/// `corral::person` renders it, whether or not stdout is a terminal.
fn list(plan: &UndoPlan, dry_run: bool, out: &mut dyn Write) -> std::io::Result<()> {
    let show = |p: &PathBuf| corral::person::path(p);
    if !plan.conflicts.is_empty() {
        writeln!(
            out,
            "not undone: these files changed since the call, and undo would overwrite that work:"
        )?;
        for p in &plan.conflicts {
            writeln!(out, "  {}", show(p))?;
        }
        return Ok(());
    }
    let (restore, remove) = if dry_run {
        ("would restore", "would remove")
    } else {
        ("restored", "removed")
    };
    for p in &plan.restore {
        writeln!(out, "{restore}  {}", show(p))?;
    }
    for p in &plan.remove {
        writeln!(out, "{remove}  {}", show(p))?;
    }
    if plan.is_empty() {
        writeln!(out, "nothing to undo")?;
    }
    Ok(())
}
