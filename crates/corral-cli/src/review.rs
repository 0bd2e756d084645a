//! `corral review`: what calls wrote to files the host runs on its own (git hooks and
//! config, an agent client's settings, an editor's tasks), held for the person instead of
//! left in the workspace (see `corral::held`). A person's command: the model is only told
//! that a change waits.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;
use clap::{Args, Subcommand};
use corral::{
    Held, HeldApplied as Applied, HeldAppliedAs as AppliedAs, HeldChange as Change, HeldError,
    HeldStore,
};
use serde_json::json;

use crate::exit::{BadRequest, Done};

/// Exit statuses, as `corral review --help` states them.
const EXIT_HELP: &str = "\
Exit status: 0 done (or nothing held); 1 not applied: the file changed since the call \
started (the three versions are shown) or a directory on its way is a symlink; 2 no held \
change has that ID; 125 corral itself failed.";

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true, after_help = EXIT_HELP)]
pub struct ReviewArgs {
    #[command(subcommand)]
    pub command: Option<ReviewCommand>,
    /// Print as JSON.
    #[arg(long, global = true)]
    pub json: bool,
}

#[derive(Debug, Subcommand)]
pub enum ReviewCommand {
    /// The change as a diff, from your version when the call started to the call's.
    #[command(after_help = EXIT_HELP)]
    Show {
        /// The held change's ID (`corral review` lists them).
        id: String,
    },
    /// Write the call's version into the workspace, if the file is still the version the
    /// call started from; then forget the held change.
    #[command(after_help = EXIT_HELP)]
    Apply {
        /// The held change's ID.
        id: String,
    },
    /// Forget the held change; the workspace keeps its file as it is.
    #[command(after_help = EXIT_HELP)]
    Drop {
        /// The held change's ID.
        id: String,
    },
}

/// The exit status of an apply refused because the file changed since the call.
const NOT_APPLIED: i32 = 1;

pub fn run(store: Option<PathBuf>, args: ReviewArgs) -> anyhow::Result<Done> {
    let path = match store {
        Some(p) => p,
        None => corral::default_store_path()
            .context("no state directory: set CORRAL_STATE_DIR or HOME, or pass --state")?,
    };
    let held = HeldStore::beside_trace(&path);
    let mut out = std::io::stdout().lock();
    let json = args.json;
    let done = match args.command {
        None => list(&held, json, &mut out),
        Some(ReviewCommand::Show { id }) => show(&held, &id, json, &mut out),
        Some(ReviewCommand::Apply { id }) => apply(&held, &id, json, &mut out),
        Some(ReviewCommand::Drop { id }) => drop(&held, &id, json, &mut out),
    };
    done.map_err(bad_request)
}

/// An unknown ID or a path refused is the request's fault: exit 2.
fn bad_request(err: anyhow::Error) -> anyhow::Error {
    match err.downcast_ref::<HeldError>() {
        Some(e @ (HeldError::Unknown { .. } | HeldError::Path { .. })) => {
            BadRequest(e.to_string()).into()
        }
        _ => err,
    }
}

fn list(store: &HeldStore, json: bool, out: &mut dyn Write) -> anyhow::Result<Done> {
    let all = store.list()?;
    if json {
        let rows = all
            .iter()
            .map(|h| Ok(row(h, store.change(&h.id)?)))
            .collect::<anyhow::Result<Vec<_>>>()?;
        serde_json::to_writer_pretty(&mut *out, &rows)?;
        writeln!(out)?;
        return Ok(Done::Status(0));
    }
    if all.is_empty() {
        writeln!(out, "nothing held")?;
        return Ok(Done::Status(0));
    }
    let mut workspace = None;
    for h in &all {
        if workspace != Some(&h.workspace) {
            writeln!(out, "in {}:", corral::person::path(&h.workspace))?;
            workspace = Some(&h.workspace);
        }
        writeln!(
            out,
            "  {}  {}  {}  run by {}  held {}",
            h.id,
            corral::person::path(&h.path),
            change_words(h, &store.change(&h.id)?),
            corral::person::value(&h.runs),
            crate::trace::when(h.made_ms),
        )?;
    }
    writeln!(
        out,
        "see one: corral review show ID; then corral review apply ID, or corral review drop ID"
    )?;
    Ok(Done::Status(0))
}

fn show(store: &HeldStore, id: &str, json: bool, out: &mut dyn Write) -> anyhow::Result<Done> {
    let h = store.get(id)?;
    let diff = store.diff(id)?;
    if json {
        let mut value = row(&h, store.change(id)?);
        value["diff"] = json!(diff);
        serde_json::to_writer_pretty(&mut *out, &value)?;
        writeln!(out)?;
        return Ok(Done::Status(0));
    }
    writeln!(
        out,
        "{}: {} in {}, run by {}, held {}",
        h.id,
        corral::person::path(&h.path),
        corral::person::path(&h.workspace),
        corral::person::value(&h.runs),
        crate::trace::when(h.made_ms),
    )?;
    out.write_all(diff.as_bytes())?;
    writeln!(
        out,
        "apply it: corral review apply {id}; or forget it: corral review drop {id}",
        id = h.id
    )?;
    Ok(Done::Status(0))
}

fn apply(store: &HeldStore, id: &str, json: bool, out: &mut dyn Write) -> anyhow::Result<Done> {
    let applied = match store.apply(id) {
        Ok(applied) => applied,
        Err(HeldError::Conflict(conflict)) => {
            if json {
                serde_json::to_writer_pretty(&mut *out, &json!({ "conflict": conflict }))?;
                writeln!(out)?;
            } else {
                out.write_all(conflict.shown().as_bytes())?;
            }
            eprintln!("corral: {}", HeldError::Conflict(conflict));
            return Ok(Done::Status(NOT_APPLIED));
        }
        Err(e @ HeldError::Through { .. }) => {
            eprintln!("corral: {e}");
            return Ok(Done::Status(NOT_APPLIED));
        }
        Err(e) => return Err(e.into()),
    };
    if json {
        serde_json::to_writer_pretty(&mut *out, &json!({ "applied": applied }))?;
        writeln!(out)?;
    } else {
        writeln!(out, "{}", applied_words(&applied))?;
    }
    Ok(Done::Status(0))
}

fn drop(store: &HeldStore, id: &str, json: bool, out: &mut dyn Write) -> anyhow::Result<Done> {
    let h = store.get(id)?;
    store.drop(id)?;
    if json {
        serde_json::to_writer_pretty(&mut *out, &json!({ "dropped": h }))?;
        writeln!(out)?;
    } else {
        writeln!(
            out,
            "dropped {}: {} stays as it is in the workspace",
            h.id,
            corral::person::path(&h.path)
        )?;
    }
    Ok(Done::Status(0))
}

/// A held change and its size, as JSON.
fn row(h: &Held, change: Change) -> serde_json::Value {
    let mut value = json!(h);
    value["change"] = json!(change);
    value
}

/// How much a held change changes, in a few words.
fn change_words(h: &Held, change: &Change) -> String {
    let made = h.base_sha256.is_none();
    match (h.held_sha256.is_none(), change) {
        (true, _) => "removed".into(),
        (false, Change::Lines { added, .. }) if made => {
            format!("new, +{added} lines")
        }
        (false, Change::Lines { added, removed }) => format!("+{added} -{removed}"),
        (false, Change::Bytes { held, .. }) if made => {
            format!("new, {} bytes", held.unwrap_or(0))
        }
        (false, Change::Bytes { base, held }) => {
            format!("{} -> {} bytes", base.unwrap_or(0), held.unwrap_or(0))
        }
    }
}

fn applied_words(a: &Applied) -> String {
    let path = corral::person::path(&a.entry.path);
    match a.how {
        AppliedAs::Written => format!(
            "applied {}: {path} written (mode {:04o})",
            a.entry.id,
            a.entry.mode.unwrap_or(0o644)
        ),
        AppliedAs::Removed => format!("applied {}: {path} removed", a.entry.id),
        AppliedAs::AlreadySo => format!(
            "{}: {path} already holds that version; the held change is forgotten",
            a.entry.id
        ),
    }
}
