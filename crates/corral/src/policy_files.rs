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
//!
//! The workspace's `corral.toml` can be written by the commands corral runs, so it is
//! taken in full only when a person trusted its exact content ([`crate::trust::TrustStore`],
//! `corral policy trust`). Until then it only tightens: its denies and asks apply, its
//! allow rules and `approval` are ignored, and the policy's notices say so
//! ([`corral_policy::Policy::notices`]), which every result and `corral policy show`
//! repeat. An untrusted one that is a symbolic link out of the workspace is not read at
//! all (a command may have linked it to a file it may not read).

use std::path::{Path, PathBuf};

use corral_policy::Policy;
use serde::Serialize;

use crate::error::{Error, Result};
pub use crate::paths::user_config_path;
use crate::trust::TrustStore;

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

    /// Stack every file onto `base`, in order, with trust as kept in the default
    /// [`TrustStore`].
    pub fn load_onto(&self, base: Policy) -> Result<Policy> {
        self.load_trusting(base, TrustStore::default_location().as_ref())
    }

    /// Stack every file onto `base`, in order; the workspace file (layer `project`) is
    /// trusted only if `trust` holds its content.
    pub fn load_trusting(&self, mut base: Policy, trust: Option<&TrustStore>) -> Result<Policy> {
        let (files, left_out) = self.read(trust)?;
        base.read_from_files();
        for read in files {
            let untrusted = read.untrusted(trust);
            let mut file = read.file;
            file.untrusted = untrusted;
            base.push_file(file);
        }
        for notice in left_out {
            base.push_notice(notice);
        }
        Ok(base)
    }

    /// Every file, read and parsed, lowest layer first; and what was said of a workspace
    /// file nobody trusted that could not be taken (it does not parse, or is over
    /// [`MAX_UNTRUSTED`]): such a file is left out, with a notice, rather than stop
    /// every run in the workspace (a command may have written it). A trusted file's or
    /// another layer's error stays an error.
    fn read(&self, trust: Option<&TrustStore>) -> Result<(Vec<ReadFile<'_>>, Vec<String>)> {
        let mut files = Vec::new();
        let mut left_out = Vec::new();
        for (layer, path) in &self.files {
            if layer == "project"
                && let Some(target) = linked_outside(path)
                && !trust.is_some_and(|t| {
                    t.is_trusted(path, &crate::trust::read_regular(path).unwrap_or_default())
                })
            {
                // Not parsed: its errors would show the model pieces of a file it may not
                // read (a key's name, a line and column).
                left_out.push(format!(
                    "{} is not trusted and was left out: it is a symbolic link to {}, outside \
                     the workspace. Replace it with the file itself, or run `corral policy trust`",
                    path.display(),
                    target.display()
                ));
                continue;
            }
            let bytes = crate::trust::read_regular(path).map_err(|e| {
                Error::invalid(format!(
                    "policy file {} cannot be read ({e}): fix or remove it",
                    path.display()
                ))
            })?;
            let untrusted =
                layer == "project" && !trust.is_some_and(|t| t.is_trusted(path, &bytes));
            let skip = |why: String| {
                format!(
                    "{} is not trusted and was left out: {why}. Fix or remove it, then run `corral policy trust`",
                    path.display()
                )
            };
            if untrusted && bytes.len() > MAX_UNTRUSTED {
                left_out.push(skip(format!(
                    "it is {} bytes, over the {MAX_UNTRUSTED} an untrusted policy file may be",
                    bytes.len()
                )));
                continue;
            }
            let parsed = String::from_utf8(bytes)
                .map_err(|_| "it is not UTF-8 text".to_string())
                .and_then(|text| {
                    corral_policy::config::parse(&text, &path.display().to_string(), layer)
                        .map(|file| (text, file))
                        .map_err(|e| e.to_string())
                });
            match parsed {
                Ok((text, file)) => files.push(ReadFile {
                    layer,
                    path,
                    text,
                    file,
                }),
                Err(why) if untrusted => left_out.push(skip(why)),
                Err(why) => return Err(Error::invalid(why)),
            }
        }
        Ok((files, left_out))
    }
}

/// Where `path` leads, when it is a symbolic link whose target is outside the directory
/// that holds it (the workspace, for its `corral.toml`).
fn linked_outside(path: &Path) -> Option<PathBuf> {
    if !std::fs::symlink_metadata(path)
        .ok()?
        .file_type()
        .is_symlink()
    {
        return None;
    }
    let dir = path.parent()?.canonicalize().ok()?;
    let target = path
        .canonicalize()
        .unwrap_or_else(|_| std::fs::read_link(path).unwrap_or_default());
    (!target.starts_with(&dir)).then_some(target)
}

/// The largest workspace policy file nobody trusted that is read at all.
const MAX_UNTRUSTED: usize = 1 << 20;

/// One policy file as read: where it is, its text and what it says.
struct ReadFile<'a> {
    layer: &'a str,
    path: &'a std::path::Path,
    text: String,
    file: corral_policy::config::PolicyFile,
}

impl ReadFile<'_> {
    /// A workspace file (layer `project`) nobody trusted in this content.
    fn untrusted(&self, trust: Option<&TrustStore>) -> bool {
        self.layer == "project"
            && !trust.is_some_and(|t| t.is_trusted(self.path, self.text.as_bytes()))
    }
}

impl PolicyFiles {
    /// The host-shell mode the files give a run whose own default is `default`: the
    /// strictest `[shell] host_shell` a trusted file sets, else `default`; a workspace file
    /// nobody trusted (see [`TrustStore`]) can only make it stricter.
    pub fn host_shell(
        &self,
        default: crate::host_shell::HostShell,
    ) -> Result<crate::host_shell::HostShell> {
        let trust = TrustStore::default_location();
        let mut trusted: Option<crate::host_shell::HostShell> = None;
        let mut untrusted: Option<crate::host_shell::HostShell> = None;
        for read in self.read(trust.as_ref())?.0 {
            let Some(set) = read
                .file
                .host_shell
                .as_deref()
                .and_then(crate::host_shell::HostShell::from_name)
            else {
                continue;
            };
            let slot = if read.untrusted(trust.as_ref()) {
                &mut untrusted
            } else {
                &mut trusted
            };
            *slot = Some(slot.map_or(set, |m| m.stricter(set)));
        }
        let mode = trusted.unwrap_or(default);
        Ok(untrusted.map_or(mode, |u| mode.stricter(u)))
    }

    /// What the files set besides rules and the host shell, from one read of each file
    /// and of the trust store (a command-line call or a server's start asks for all of
    /// it at once).
    pub fn settings(&self) -> Result<FileSettings> {
        use crate::config::MemoryMax;
        let trust = TrustStore::default_location();
        let mut settings = FileSettings::default();
        for read in self.read(trust.as_ref())?.0 {
            let untrusted = read.untrusted(trust.as_ref());
            let file = read.file;
            settings.persist_cwd = file.persist_cwd.or(settings.persist_cwd);
            settings.output_budget = file.output_budget.or(settings.output_budget);
            if let Some(limit) = file.limits_memory.map(MemoryMax::from) {
                let lowers = matches!(
                    (settings.memory_max, limit),
                    (Some(MemoryMax::Bytes(old)), MemoryMax::Bytes(new)) if new <= old
                );
                if !untrusted || lowers {
                    settings.memory_max = Some(limit);
                }
            }
            settings.undo.push(UndoBounds {
                untrusted,
                files: file.undo_max_files,
                mb: file.undo_max_mb,
                store_mb: file.undo_store_max_mb,
            });
        }
        Ok(settings)
    }

    /// `[output] budget` as the files set it (see [`FileSettings::output_budget`]).
    pub fn output_budget(&self) -> Result<Option<usize>> {
        Ok(self.settings()?.output_budget)
    }

    /// `[limits] memory` as the files set it (see [`FileSettings::memory_max`]).
    pub fn memory_max(&self) -> Result<Option<crate::config::MemoryMax>> {
        Ok(self.settings()?.memory_max)
    }

    /// `[undo]` bounds applied to `budget` (see [`FileSettings::undo_budget`]).
    pub fn undo_budget(
        &self,
        budget: crate::config::UndoBudget,
    ) -> Result<crate::config::UndoBudget> {
        Ok(self.settings()?.undo_budget(budget))
    }

    /// `[shell] persist_cwd` as the files set it (see [`FileSettings::persist_cwd`]).
    pub fn persist_cwd(&self) -> Result<Option<bool>> {
        Ok(self.settings()?.persist_cwd)
    }
}

/// What the policy files set besides rules, as [`PolicyFiles::settings`] read it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FileSettings {
    /// `[shell] persist_cwd`, the last file that sets it.
    pub persist_cwd: Option<bool>,
    /// `[output] budget`, the last file that sets it. A workspace file nobody trusted may
    /// set it too: it changes what a model is shown, not what runs.
    pub output_budget: Option<usize>,
    /// `[limits] memory`, the last trusted file that sets it; a workspace file nobody
    /// trusted may only lower a bound an earlier file set.
    pub memory_max: Option<crate::config::MemoryMax>,
    /// `[undo]` bounds, file by file, lowest layer first.
    undo: Vec<UndoBounds>,
}

#[derive(Debug, Clone, PartialEq)]
struct UndoBounds {
    untrusted: bool,
    files: Option<u64>,
    mb: Option<u64>,
    store_mb: Option<u64>,
}

impl FileSettings {
    /// `[undo] max_files`, `max_mb` and `store_max_mb` applied to `budget`, each from the last trusted
    /// file that sets it. A workspace file nobody trusted may only raise a bound: lowering
    /// it would leave calls unrecorded, so that they cannot be undone.
    pub fn undo_budget(&self, budget: crate::config::UndoBudget) -> crate::config::UndoBudget {
        let mut out = budget;
        for bounds in &self.undo {
            if let Some(files) = bounds.files {
                let files = usize::try_from(files).unwrap_or(usize::MAX);
                if !bounds.untrusted || files > out.files {
                    out.files = files;
                }
            }
            if let Some(mb) = bounds.mb {
                let bytes = mb.saturating_mul(1_000_000);
                if !bounds.untrusted || bytes > out.bytes {
                    out.bytes = bytes;
                }
            }
            if let Some(mb) = bounds.store_mb {
                let bytes = mb.saturating_mul(1_000_000);
                if !bounds.untrusted || out.store_bytes.is_none_or(|now| bytes > now) {
                    out.store_bytes = Some(bytes);
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests;
