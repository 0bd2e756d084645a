//! Where corral's own files are, and the one way a directory is resolved.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// Where the trace lives when nothing says otherwise: `$CORRAL_STORE`, else
/// `$XDG_STATE_HOME/corral/trace.db`, else `~/.local/state/corral/trace.db`.
///
/// Outside the workspace on purpose: the trace is not a file the agent wrote.
pub fn default_store_path() -> Option<PathBuf> {
    let non_empty = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    non_empty("CORRAL_STORE").or_else(|| {
        let state = non_empty("XDG_STATE_HOME")
            .or_else(|| non_empty("HOME").map(|h| h.join(".local/state")))?;
        Some(state.join("corral").join("trace.db"))
    })
}

/// Whether `path` is the store a command finds without being told: the default one,
/// not one chosen by `CORRAL_STORE` (which the reader of a command may not have set).
pub(crate) fn is_found_untold(path: &Path) -> bool {
    std::env::var_os("CORRAL_STORE").is_none_or(|v| v.is_empty())
        && default_store_path().is_some_and(|default| {
            default == path || std::fs::canonicalize(&default).is_ok_and(|d| d == path)
        })
}

/// Resolve `path` to a canonical directory, or say precisely why it is not one.
pub(crate) fn canonical_dir(path: &Path, what: &str) -> Result<PathBuf> {
    let canonical = path.canonicalize().map_err(|e| {
        Error::invalid(format!(
            "{what} {} does not exist or cannot be reached ({}): create it or name another",
            path.display(),
            crate::redirect::plain(&e)
        ))
    })?;
    if !canonical.is_dir() {
        return Err(Error::invalid(format!(
            "{what} {} is not a directory: name a directory",
            path.display()
        )));
    }
    Ok(canonical)
}
