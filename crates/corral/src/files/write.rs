//! `write_file`: a whole file's new contents, written atomically.

use serde::{Deserialize, Serialize};

use corral_policy::Act;

use super::access::FileOutcome;
use crate::beneath::Replace;
use crate::ctx::Ctx;
use crate::error::{Error, Result};

/// Create or replace a text file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WriteFileRequest {
    /// File path, relative to the workspace; missing directories are created.
    pub path: String,
    /// The whole new contents.
    pub content: String,
}

impl WriteFileRequest {
    /// Write `content` to `path`.
    pub fn new(path: impl Into<String>, content: impl Into<String>) -> Self {
        Self {
            path: path.into(),
            content: content.into(),
        }
    }
}

impl Ctx {
    /// Create or replace a file inside the workspace (a temporary file renamed over it,
    /// keeping its permissions), after the confinement and policy checks.
    pub(crate) fn write_file(&self, request: &WriteFileRequest) -> Result<FileOutcome> {
        // The call as recorded names the file and the size, not the whole contents: the
        // file itself is the record of what was written.
        let call = serde_json::json!({
            "path": request.path,
            "content_bytes": request.content.len(),
        })
        .to_string();
        self.file_step("write_file", call, |step| {
            let path = self.resolve_file(&request.path, true)?;
            self.check_files("write_file", step, &[(Act::Write, path.clone())])?;
            if path.is_dir() {
                return Err(Error::invalid(format!(
                    "{} is a directory: name a file",
                    request.path
                )));
            }
            let roots = self.file_roots()?;
            let existed = roots
                .exists(&path)
                .map_err(|e| Error::io(format!("looking at {}", path.display()), e))?;
            roots
                .write(&path, request.content.as_bytes(), Replace::Any)
                .map_err(|e| Error::io(format!("writing {}", path.display()), e))?;
            Ok(format!(
                "{} {} ({} bytes, {} lines)",
                if existed { "replaced" } else { "created" },
                self.show_path(&path),
                request.content.len(),
                request.content.lines().count()
            ))
        })
    }
}
