//! `list_dir`: what a directory holds, a few levels down, bounded.

use std::path::Path;

use serde::{Deserialize, Serialize};

use corral_policy::Act;

use super::access::FileOutcome;
use crate::error::{Error, Result};
use crate::run::Run;

/// The most entries one listing shows.
const MAX_ENTRIES: usize = 500;
/// Directories listed by name only: their contents are tooling's, not the project's.
const NOT_DESCENDED: &[&str] = &[".git", "node_modules", "target", ".venv", "__pycache__"];

/// List a directory.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListDirRequest {
    /// Directory, relative to the workspace (default: its root).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Levels to descend, 1 to 5 (default 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub depth: Option<usize>,
}

impl ListDirRequest {
    /// List `path`.
    pub fn new(path: impl Into<String>) -> Self {
        Self {
            path: Some(path.into()),
            depth: None,
        }
    }
}

impl Run {
    /// List a directory inside the workspace: directories end in `/`, files show their
    /// size, symbolic links their target; `.git`, `node_modules`, `target` and the like
    /// are named but not entered.
    pub fn list_dir(&self, request: &ListDirRequest) -> Result<FileOutcome> {
        let call = serde_json::to_string(request).unwrap_or_default();
        self.file_step("list_dir", call, |step| {
            let asked = request.path.as_deref().unwrap_or(".");
            let path = self.resolve_file(asked, false)?;
            self.check_files("list_dir", step, &[(Act::Read, path.clone())])?;
            if !path.is_dir() {
                return Err(Error::invalid(format!(
                    "{asked} is not a directory: read a file with read_file, or list its parent"
                )));
            }
            let depth = request.depth.unwrap_or(2).clamp(1, 5);
            let mut out = Vec::new();
            let mut more = 0usize;
            walk(&path, "", depth, &mut out, &mut more);
            let mut text = format!("{}/\n", self.show_path(&path));
            for line in &out {
                text.push_str(line);
                text.push('\n');
            }
            if out.is_empty() {
                text.push_str("(empty)\n");
            }
            if more > 0 {
                text.push_str(&format!(
                    "[… {more} more entries not shown: list a subdirectory]\n"
                ));
            }
            Ok(text)
        })
    }
}

fn walk(dir: &Path, indent: &str, depth: usize, out: &mut Vec<String>, more: &mut usize) {
    let Ok(read) = std::fs::read_dir(dir) else {
        out.push(format!("{indent}  (cannot be read)"));
        return;
    };
    let mut entries: Vec<_> = read.filter_map(|e| e.ok()).collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        if out.len() >= MAX_ENTRIES {
            *more += 1;
            continue;
        }
        let name = entry.file_name().to_string_lossy().into_owned();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_symlink() {
            let target = std::fs::read_link(entry.path())
                .map(|t| t.display().to_string())
                .unwrap_or_default();
            out.push(format!("{indent}  {name} -> {target}"));
        } else if kind.is_dir() {
            out.push(format!("{indent}  {name}/"));
            if depth > 1 && !NOT_DESCENDED.contains(&name.as_str()) {
                walk(&entry.path(), &format!("{indent}  "), depth - 1, out, more);
            }
        } else {
            let size = entry.metadata().map(|m| m.len()).unwrap_or(0);
            out.push(format!("{indent}  {name} ({size} bytes)"));
        }
    }
}
