//! Where corral's own files are, and the one way a directory is resolved.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// corral's own state directory (its trace and the policy files a person trusted), and
/// what chose it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateDir {
    /// The directory: `trace.db` and `trusted-policies` live in it.
    pub path: PathBuf,
    /// What chose it: `--state`, `CORRAL_STATE_DIR`, `XDG_STATE_HOME` or `HOME`.
    pub chosen_by: &'static str,
}

/// The directory `--state` named, set once at startup by the command line.
static STATE_FLAG: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();

/// Use `dir` as the state directory from now on, over every variable (`corral --state
/// DIR`). Only the first call counts.
pub fn use_state_dir(dir: PathBuf) {
    let _ = STATE_FLAG.set(dir);
}

fn non_empty(name: &str) -> Option<PathBuf> {
    std::env::var_os(name)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// corral's state directory: `--state DIR`, else `$CORRAL_STATE_DIR`, else
/// `$XDG_STATE_HOME/corral`, else `~/.local/state/corral`; `None` when none is set.
///
/// MCP clients start servers with a reduced environment (no `XDG_STATE_HOME`, often no
/// more than `HOME` and `PATH`), so a client's config passes `--state` or
/// `CORRAL_STATE_DIR` to make its server share the user's trace and trusted policies.
pub fn state_dir() -> Option<StateDir> {
    if let Some(path) = STATE_FLAG.get() {
        return Some(StateDir {
            path: path.clone(),
            chosen_by: "--state",
        });
    }
    if let Some(path) = non_empty("CORRAL_STATE_DIR") {
        return Some(StateDir {
            path,
            chosen_by: "CORRAL_STATE_DIR",
        });
    }
    if let Some(state) = non_empty("XDG_STATE_HOME") {
        return Some(StateDir {
            path: state.join("corral"),
            chosen_by: "XDG_STATE_HOME",
        });
    }
    non_empty("HOME").map(|home| StateDir {
        path: home.join(".local/state/corral"),
        chosen_by: "HOME",
    })
}

/// Where the trace lives when nothing says otherwise: `$CORRAL_STORE`, else `trace.db`
/// in the [`state_dir`].
///
/// Outside the workspace on purpose: the trace is not a file the agent wrote.
pub fn default_store_path() -> Option<PathBuf> {
    non_empty("CORRAL_STORE").or_else(|| Some(state_dir()?.path.join("trace.db")))
}

/// Where `corral mcp --listen` keeps the bearer token it made, when none was given:
/// `mcp-token` in the [`state_dir`], made once and reused, so that a client's configuration
/// stays valid across restarts. It is one of corral's own files, hidden from every box.
pub fn mcp_token_path() -> Option<PathBuf> {
    Some(state_dir()?.path.join("mcp-token"))
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

/// The user's corral configuration file: `$XDG_CONFIG_HOME/corral/config.toml`, else
/// `~/.config/corral/config.toml`.
pub fn user_config_path() -> Option<PathBuf> {
    let non_empty = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let dir =
        non_empty("XDG_CONFIG_HOME").or_else(|| non_empty("HOME").map(|h| h.join(".config")))?;
    Some(dir.join("corral").join("config.toml"))
}
