//! Where policy comes from: files stacked as layers, each rule remembering its file and
//! line.
//!
//! | layer | file | when |
//! |---|---|---|
//! | `operator` | `$CORRAL_POLICY` | the environment names it (it must exist) |
//! | `user` | `$XDG_CONFIG_HOME/corral/config.toml` (`~/.config/corral/config.toml`) | it exists |
//! | `project` | `<workspace>/corral.toml` | it exists |
//! | `file:N` | each `--policy FILE`, in order | given |
//!
//! A deny in any layer beats an allow in any other, so nothing a project or a flag stacks
//! on top can lift what the operator denied.

use std::path::{Path, PathBuf};

use corral_policy::Policy;
use serde::Serialize;

use crate::error::{Error, Result};

/// The policy files that apply to a workspace, in the order they are stacked.
#[derive(Debug, Clone, Default, Serialize)]
pub struct PolicyFiles {
    /// `(layer, path)`, lowest first.
    pub files: Vec<(String, PathBuf)>,
}

impl PolicyFiles {
    /// The operator, user and project files that exist for `workspace`, then `extra`.
    pub fn discover(workspace: &Path, extra: &[PathBuf]) -> Result<Self> {
        let mut files = Vec::new();
        if let Some(operator) = std::env::var_os("CORRAL_POLICY").filter(|v| !v.is_empty()) {
            let path = PathBuf::from(operator);
            if !path.is_file() {
                return Err(Error::invalid(format!(
                    "CORRAL_POLICY names {}, which is not a readable file: fix the path or unset it",
                    path.display()
                )));
            }
            files.push(("operator".to_string(), path));
        }
        if let Some(user) = user_config_path().filter(|p| p.is_file()) {
            files.push(("user".to_string(), user));
        }
        let project = workspace.join("corral.toml");
        if project.is_file() {
            files.push(("project".to_string(), project));
        }
        for (i, path) in extra.iter().enumerate() {
            files.push((format!("file:{}", i + 1), path.clone()));
        }
        Ok(Self { files })
    }

    /// Stack every file onto `base`, in order.
    pub fn load_onto(&self, mut base: Policy) -> Result<Policy> {
        for (layer, path) in &self.files {
            let text = std::fs::read_to_string(path).map_err(|e| {
                Error::invalid(format!(
                    "policy file {} cannot be read ({e}): fix or remove it",
                    path.display()
                ))
            })?;
            let file = corral_policy::config::parse(&text, &path.display().to_string(), layer)
                .map_err(|e| Error::invalid(e.to_string()))?;
            base.push_file(file);
        }
        Ok(base)
    }
}

impl PolicyFiles {
    /// The host-shell mode the files set (`[shell] host_shell`), the strictest of them;
    /// `None` when none sets it.
    pub fn host_shell(&self) -> Result<Option<crate::HostShell>> {
        let mut mode: Option<crate::HostShell> = None;
        for (layer, path) in &self.files {
            let text = std::fs::read_to_string(path).map_err(|e| {
                Error::invalid(format!(
                    "policy file {} cannot be read ({e}): fix or remove it",
                    path.display()
                ))
            })?;
            let file = corral_policy::config::parse(&text, &path.display().to_string(), layer)
                .map_err(|e| Error::invalid(e.to_string()))?;
            if let Some(set) = file
                .host_shell
                .as_deref()
                .and_then(crate::HostShell::from_name)
            {
                mode = Some(mode.map_or(set, |m| m.stricter(set)));
            }
        }
        Ok(mode)
    }
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
