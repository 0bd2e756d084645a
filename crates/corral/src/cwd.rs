//! Where a call starts. By default every call starts at the workspace root, or at the
//! `cwd` it names (relative to the root). With [`Config::persist_cwd`](crate::Config)
//! the run keeps a directory, as a shell session does: a line whose last command is a
//! `cd` that succeeded, or a call given a `cwd`, sets where the run's later calls start,
//! and a `cwd` is then relative to that directory. Every foreground result then names
//! the directory it ran in. A kept directory that has since vanished is a clear error for
//! the call that meets it (and the run is back at the root).

use std::path::{Path, PathBuf};

use crate::ctx::Ctx;
use crate::error::{Error, Result};
use crate::os_text::escape_path;
use crate::outcome::Outcome;
use crate::paths::canonical_dir;

impl Ctx {
    /// The working directory for a call: `dir` under the directory the run starts calls
    /// in (the workspace root, or the kept one), which must exist and stay inside the
    /// workspace. With `persist_cwd`, a `dir` given is kept for later calls.
    pub(crate) fn resolve_cwd(&self, dir: Option<&Path>) -> Result<PathBuf> {
        let base = self.start_dir()?;
        let Some(dir) = dir.filter(|d| !d.as_os_str().is_empty()) else {
            return Ok(base);
        };
        let resolved = canonical_dir(&base.join(dir), "cwd")?;
        if !resolved.starts_with(&self.workspace) {
            return Err(Error::invalid(format!(
                "cwd {} resolves to {}, outside the workspace {}: choose a directory inside the workspace",
                escape_path(dir),
                escape_path(&resolved),
                self.workspace.display()
            )));
        }
        if self.config.persist_cwd {
            *self.kept() = Some(resolved.clone());
        }
        Ok(resolved)
    }

    /// Where calls start: the kept directory while it exists, else the workspace root.
    fn start_dir(&self) -> Result<PathBuf> {
        let mut kept = self.kept();
        match kept.as_ref() {
            Some(dir) if dir.is_dir() => Ok(dir.clone()),
            Some(dir) => {
                let gone = dir.clone();
                *kept = None;
                Err(Error::invalid(format!(
                    "the run's working directory {} (kept from an earlier call) no longer exists; \
                     the run is back at the workspace root: give this call a cwd, or send it again",
                    self.relative(&gone)
                )))
            }
            None => Ok(self.workspace.clone()),
        }
    }

    /// After a line ran: keep the directory its final `cd` entered, and name where the
    /// call ran, when the run keeps a directory.
    pub(crate) fn keep_cwd(&self, start: &Path, ended_in: Option<PathBuf>, outcome: &mut Outcome) {
        if !self.config.persist_cwd {
            return;
        }
        let ran_in = self.relative(start);
        let mut note = format!("in {ran_in}");
        // A `cd` out of the workspace is refused before the line runs, and checked again
        // when it is reached: what it entered is inside.
        if let Some(dir) = ended_in.filter(|d| d.starts_with(&self.workspace)) {
            note.push_str(&format!("; later calls start in {}", self.relative(&dir)));
            *self.kept() = Some(dir);
        }
        outcome.observation = insert_second_line(&outcome.observation, &note);
    }

    /// `dir` as a model reads it: relative to the workspace root (`.` for the root).
    fn relative(&self, dir: &Path) -> String {
        match dir.strip_prefix(&self.workspace) {
            Ok(rel) if rel.as_os_str().is_empty() => ".".to_string(),
            Ok(rel) => rel.display().to_string(),
            Err(_) => dir.display().to_string(),
        }
    }

    fn kept(&self) -> std::sync::MutexGuard<'_, Option<PathBuf>> {
        self.kept_cwd.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// `text` with `line` after its first line.
fn insert_second_line(text: &str, line: &str) -> String {
    match text.split_once('\n') {
        Some((first, rest)) => format!("{first}\n{line}\n{rest}"),
        None => format!("{text}\n{line}\n"),
    }
}
