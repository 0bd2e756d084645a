//! Protected paths that appear during a call.
//!
//! A protected path that exists is bind-mounted read-only; one that does not exist cannot
//! be mounted over, and Landlock cannot refuse creating it inside a writable workspace. So
//! a `workspace-write` call may create `corral.toml`, a `.git` where there was none, or
//! (with `git_write`) `.git/commondir` or `.git/hooks`. Such a path is noticed after the
//! call, reported in the result (a `sandbox:` line) and in the trace (a `protected paths`
//! row at level `none`). So is a workspace root a call makes into a git directory (a
//! `HEAD`, `objects/`, `refs/` and a `config` there, which git reads when it finds no
//! `.git`). Git metadata is also moved out of the workspace, into corral's
//! quarantine (`quarantine/RUN/STEP/` beside the trace, hidden from the box), so the
//! person's next `git` never reads what the box planted; the result says how to restore
//! it. A new `corral.toml` stays where it is, untrusted until a person trusts it (see
//! [`crate::trust::TrustStore`]).

use std::path::{Path, PathBuf};

use super::{LayerReport, Level, SandboxConfig, SandboxMode};
use crate::outcome::Outcome;

/// A handle's protected paths that were absent when it started (see
/// `background::watch`).
#[derive(Debug)]
pub(crate) struct Watched {
    pub handle: u32,
    pub step: crate::outcome::StepRef,
    pub absent: Absent,
    /// What of the handle's unit runs after its end (`None`: nothing to wait for).
    pub remains: Option<std::sync::Arc<crate::spawn::RemainsSlot>>,
}

/// The protected paths that did not exist when a call started.
#[derive(Debug, Default)]
pub(crate) struct Absent {
    workspace: PathBuf,
    paths: Vec<PathBuf>,
    /// The workspace root was no git directory: git, finding no `.git`, takes a directory
    /// holding `HEAD`, `objects/` and `refs/` for one, with its `config`.
    root_not_git: bool,
}

impl Absent {
    /// Note which of `config`'s protected paths are absent before a call in `workspace`.
    pub(crate) fn before(config: &SandboxConfig, workspace: &Path) -> Absent {
        if config.mode != SandboxMode::WorkspaceWrite {
            return Absent::default();
        }
        let paths = config
            .protected_in(workspace)
            .into_iter()
            .filter(|p| std::fs::symlink_metadata(p).is_err())
            .collect();
        Absent {
            workspace: workspace.to_path_buf(),
            paths,
            root_not_git: !is_git_dir(workspace),
        }
    }

    /// What appeared since: the protected paths that exist now, and where the workspace
    /// root became a git directory, the files git reads there (`config`, `HEAD`,
    /// `commondir`), each with whether it is git metadata (moved out of the workspace).
    fn appeared(&self) -> Vec<(PathBuf, bool)> {
        let mut out: Vec<(PathBuf, bool)> = self
            .paths
            .iter()
            .filter(|p| std::fs::symlink_metadata(p).is_ok())
            .map(|p| {
                let shown = p.strip_prefix(&self.workspace).unwrap_or(p);
                (p.clone(), is_git_metadata(shown))
            })
            .collect();
        if self.root_not_git
            && !self.workspace.as_os_str().is_empty()
            && is_git_dir(&self.workspace)
        {
            for name in ROOT_GIT_FILES {
                let path = self.workspace.join(name);
                if std::fs::symlink_metadata(&path).is_ok() {
                    out.push((path, true));
                }
            }
        }
        out
    }

    /// Report on `outcome` every one of them that exists now, git metadata moved into
    /// `quarantine` first.
    pub(crate) fn report_appeared(&self, outcome: &mut Outcome, quarantine: Option<&Path>) {
        let Some((lines, layer)) = self.sweep(quarantine) else {
            return;
        };
        outcome.observation =
            outcome
                .observation
                .replacen('\n', &format!("\n{}\n", lines.join("\n")), 1);
        if let Some(report) = outcome.sandbox.as_mut() {
            report.layers.push(layer);
        }
    }

    /// Move every one of them that exists now and is git metadata into `quarantine`; what
    /// to tell the model of them, and the layer's report. `None` when none appeared.
    pub(crate) fn sweep(&self, quarantine: Option<&Path>) -> Option<(Vec<String>, LayerReport)> {
        let appeared = self.appeared();
        if appeared.is_empty() {
            return None;
        }
        let mut lines = Vec::new();
        let mut left = Vec::new();
        for (path, git) in &appeared {
            let shown = path.strip_prefix(&self.workspace).unwrap_or(path);
            let moved = quarantine
                .filter(|_| *git)
                .map(|dir| move_out(path, &dir.join(shown)));
            match moved {
                Some(Ok(to)) => lines.push(format!(
                    "sandbox: moved {}, created during the call, out of the workspace to {}: \
                     git would read it on your machine (hooks and config run programs); if \
                     you meant it, restore it with `mv {} {}`",
                    shown.display(),
                    to.display(),
                    to.display(),
                    path.display()
                )),
                Some(Err(e)) => left.push(format!(
                    "{} (it could not be moved aside: {e}; check it before running git here)",
                    shown.display()
                )),
                None => left.push(shown.display().to_string()),
            }
        }
        let detail = if left.is_empty() {
            "created during the call and moved out of the workspace".to_string()
        } else {
            format!(
                "created during the call, where the sandbox could not protect it: {}; \
                 a new corral.toml is untrusted until a person runs `corral policy trust`",
                left.join(", ")
            )
        };
        if !left.is_empty() {
            lines.push(format!("sandbox: protected path {detail}"));
        }
        let layer = LayerReport {
            layer: crate::outcome::sandbox_report::Layer::ProtectedPaths,
            level: if left.is_empty() {
                Level::Partial
            } else {
                Level::None
            },
            detail,
        };
        Some((lines, layer))
    }
}

/// What git reads in a directory it takes for a git directory, and runs programs from
/// (`config`: `core.fsmonitor`, hooks' path, aliases); without them it is none.
const ROOT_GIT_FILES: &[&str] = &["config", "HEAD", "commondir"];

/// Whether git would take `dir` for a git directory when it finds no `.git` there: a
/// `HEAD`, and `objects/` and `refs/` (or a `commondir` naming where they are).
fn is_git_dir(dir: &Path) -> bool {
    dir.join("HEAD").is_file()
        && (dir.join("commondir").is_file()
            || (dir.join("objects").is_dir() && dir.join("refs").is_dir()))
}

/// Whether `relative` (to the workspace) is git metadata: `.git` or anything in it.
fn is_git_metadata(relative: &Path) -> bool {
    relative
        .components()
        .next()
        .is_some_and(|c| c.as_os_str() == ".git")
}

/// Move `from` to a free name at `to`, its parent directories made: `to` itself, or `to.2`,
/// `to.3`, … where a sweep before this one already put something there (a handle that
/// plants the same `.git` again is swept at every call and at its end; a rename over the
/// first would fail and leave the second in the workspace). Where it went, which the
/// result names. A rename that never replaces (`RENAME_NOREPLACE`), or across
/// filesystems a copy to a new name and a removal. Symlinks are moved as links, never
/// followed.
fn move_out(from: &Path, to: &Path) -> std::io::Result<PathBuf> {
    use rustix::fs::{CWD, RenameFlags, renameat_with};
    use rustix::io::Errno;
    if let Some(parent) = to.parent() {
        std::fs::create_dir_all(parent)?;
    }
    for n in 1..=MOVES_OF_ONE_PATH {
        let candidate = if n == 1 {
            to.to_path_buf()
        } else {
            let mut name = to.as_os_str().to_owned();
            name.push(format!(".{n}"));
            PathBuf::from(name)
        };
        match renameat_with(CWD, from, CWD, &candidate, RenameFlags::NOREPLACE) {
            Ok(()) => return Ok(candidate),
            Err(Errno::EXIST | Errno::NOTEMPTY) => continue,
            Err(Errno::XDEV) => {
                if std::fs::symlink_metadata(&candidate).is_ok() {
                    continue;
                }
                copy(from, &candidate)?;
                if std::fs::symlink_metadata(from)?.is_dir() {
                    std::fs::remove_dir_all(from)?;
                } else {
                    std::fs::remove_file(from)?;
                }
                return Ok(candidate);
            }
            Err(e) => return Err(e.into()),
        }
    }
    Err(std::io::Error::other(format!(
        "{} already holds {MOVES_OF_ONE_PATH} of them",
        to.display()
    )))
}

/// How many times one path of one step is moved aside before corral stops making names:
/// past that the path is left and reported as not moved.
const MOVES_OF_ONE_PATH: u32 = 1000;

fn copy(from: &Path, to: &Path) -> std::io::Result<()> {
    let meta = std::fs::symlink_metadata(from)?;
    if meta.is_symlink() {
        std::os::unix::fs::symlink(std::fs::read_link(from)?, to)
    } else if meta.is_dir() {
        std::fs::create_dir(to)?;
        for entry in std::fs::read_dir(from)? {
            let entry = entry?;
            copy(&entry.path(), &to.join(entry.file_name()))?;
        }
        Ok(())
    } else if meta.is_file() {
        std::fs::copy(from, to).map(drop)
    } else {
        // A socket or a fifo: nothing git reads; it is left out of the copy.
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_planted_again_is_moved_beside_the_first() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        let quarantine = dir.path().join("quarantine/.git");
        for round in 1..=3 {
            std::fs::create_dir_all(ws.join(".git")).unwrap();
            std::fs::write(ws.join(".git/config"), format!("round {round}")).unwrap();
            let to = move_out(&ws.join(".git"), &quarantine).unwrap();
            assert!(!ws.join(".git").exists(), "round {round} left .git");
            assert_eq!(
                std::fs::read_to_string(to.join("config")).unwrap(),
                format!("round {round}")
            );
        }
        assert!(dir.path().join("quarantine/.git.3").is_dir());
    }
}
