//! `write_file`: a whole file's new contents, written atomically.

use std::io::Write;
use std::path::Path;

use serde::{Deserialize, Serialize};

use corral_policy::Act;

use super::access::FileOutcome;
use crate::error::{Error, Result};
use crate::run::Run;

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

impl Run {
    /// Create or replace a file inside the workspace (a temporary file renamed over it,
    /// keeping its permissions), after the confinement and policy checks.
    pub fn write_file(&self, request: &WriteFileRequest) -> Result<FileOutcome> {
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
            let existed = path.exists();
            write_atomically(&path, request.content.as_bytes())?;
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

/// Write `bytes` to `path` through a temporary file in the same directory, renamed over
/// it, keeping an existing file's permissions; missing parent directories are created.
pub(crate) fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    let parent = path.parent().unwrap_or(Path::new("/"));
    std::fs::create_dir_all(parent)
        .map_err(|e| Error::io(format!("creating {}", parent.display()), e))?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temp = parent.join(format!(".{name}.corral-{}.tmp", std::process::id()));
    let written = (|| {
        let mut file = std::fs::File::create(&temp)?;
        file.write_all(bytes)?;
        if let Ok(meta) = std::fs::metadata(path) {
            file.set_permissions(meta.permissions())?;
        }
        file.sync_all()?;
        std::fs::rename(&temp, path)
    })();
    written.map_err(|e| {
        let _ = std::fs::remove_file(&temp);
        Error::io(format!("writing {}", path.display()), e)
    })
}
