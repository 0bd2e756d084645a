//! The workspace a command works in.

use std::path::PathBuf;

use anyhow::Context;

/// The workspace a flag names, or the current directory.
pub(crate) fn workspace_or_cwd(workspace: Option<PathBuf>) -> anyhow::Result<PathBuf> {
    match workspace {
        Some(dir) => Ok(dir),
        None => std::env::current_dir().context("reading the current directory"),
    }
}
