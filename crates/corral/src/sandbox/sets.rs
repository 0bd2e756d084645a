//! The paths a call may not read and may not write, computed once for the box and for
//! corral's own process alike.
//!
//! corral reaches the workspace for the model in two ways: a command in the box, and its
//! own process (the file tools, `apply_patch`). Both take their rules from one [`Sets`],
//! made by [`Sets::of`] and nowhere else: the box builder (`super::prepare`) mounts over
//! what it hides and keeps read-only, and the file tools ask it about each path they touch
//! ([`Sets::reach`]), so a path the box hides is one the file tools refuse. A later kind
//! of path is a new [`Reach`] variant, not a second check.
//!
//! What it is made from:
//!
//! 1. The read denies as the run's view found them (`deny_read` expanded, the secrets
//!    outside the home, corral's own files; see `super::host_view`), less those that hold
//!    the workspace or a writable root (the box keeps those readable, and says so).
//! 2. The same read denies by their patterns, for a path made after the view was read:
//!    the box's mounts are made once per run (`SandboxMounts`), so it hides such a path
//!    from the next call on, and the file tools refuse it by its name at once.
//! 3. The protected paths in the workspace (`SandboxConfig::protected_in`): read-only.
//! 4. corral's own state and policy files: never written.
//! 5. Root's files by their mode, as the run's view found them (`reach::root_files`),
//!    less those in or around what the box writes.
//!
//! Outside a box of corral's (`full`, `external`) nothing is hidden, as nothing is from a
//! command; the protected paths and corral's own files stay read-only for the file tools
//! in every mode. The check is by path, as the box's mounts are: a hard link in the
//! workspace to a hidden file reads as its file, in the box and here (`docs/sandbox.md` says so).

use std::path::{Path, PathBuf};

use super::host_view::HostView;
use super::reach::{self, Hidden};
use crate::config::sandbox::{SandboxConfig, SandboxMode};

/// What a call may not read or write (see the module docs).
#[derive(Debug, Clone, Default)]
pub(crate) struct Sets {
    /// What the box hides (existing, canonical), and what it keeps readable because it
    /// holds the workspace or a writable root.
    pub hidden: Hidden,
    /// The read denies by pattern (step 2), made when first asked: the box needs only
    /// the paths, so a box's call does not pay for them.
    named: std::sync::OnceLock<Vec<Named>>,
    /// The patterns, and what the box writes (a pattern that names one hides nothing).
    patterns: Vec<String>,
    needed: Vec<PathBuf>,
    /// The protected paths in the workspace (step 3), as `protected_in` names them.
    pub read_only: Vec<PathBuf>,
    /// corral's own files (step 4).
    own: Vec<PathBuf>,
    /// The box writes nothing.
    read_only_mode: bool,
}

/// What a path is to the call (see [`Sets::reach`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub(crate) enum Reach {
    /// Read and written as the policy says.
    Reachable,
    /// Read, never written.
    ReadOnly { rule: ReadOnlyRule },
    /// Neither read nor written, nor listed: the box does not show it.
    Hidden { rule: HiddenRule },
}

/// Why a path is hidden.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub(crate) enum HiddenRule {
    /// A read deny: `path` is what it names (canonical), `pattern` the entry that names
    /// it where one does (the secrets outside the home have none).
    ReadDeny {
        path: PathBuf,
        pattern: Option<String>,
    },
    /// corral's own files: the trace, its captures, the policy files, the trust store.
    Own { path: PathBuf },
}

/// Why a path is read-only.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub(crate) enum ReadOnlyRule {
    /// The run's sandbox is `read-only`.
    Mode,
    /// A protected path: `.git`, `corral.toml`, `.corral` (see `git_dir`).
    Protected { path: PathBuf },
    /// corral's own state or policy.
    Own { path: PathBuf },
}

/// A read deny's pattern as a directory and a name in it (`*` in the name a glob).
#[derive(Debug, Clone)]
struct Named {
    pattern: String,
    /// The pattern's directory, canonical where it exists.
    dir: PathBuf,
    name: NameMatch,
}

#[derive(Debug, Clone)]
enum NameMatch {
    Exact(std::ffi::OsString),
    Glob(globset::GlobMatcher),
}

impl Named {
    fn of(pattern: &str, home: Option<&Path>) -> Option<Named> {
        let path = reach::named(std::slice::from_ref(&pattern.to_string()), home).next()?;
        let (dir, name) = (path.parent()?, path.file_name()?);
        let text = name.to_string_lossy();
        let name = if text.contains('*') {
            NameMatch::Glob(globset::Glob::new(&text).ok()?.compile_matcher())
        } else {
            NameMatch::Exact(name.to_os_string())
        };
        Some(Named {
            pattern: pattern.to_string(),
            dir: dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf()),
            name,
        })
    }

    /// Whether `path` is what this names, or beneath it.
    fn names(&self, path: &Path) -> bool {
        let Ok(rest) = path.strip_prefix(&self.dir) else {
            return false;
        };
        let Some(first) = rest.components().next() else {
            return false;
        };
        let first = first.as_os_str();
        match &self.name {
            NameMatch::Exact(name) => first == name,
            NameMatch::Glob(glob) => glob.is_match(first),
        }
    }
}

impl Sets {
    /// The sets for a call under `config` in `workspace`: `view` the run's view of the
    /// host (`None` outside a box), `writable` what the box writes (a read deny that holds
    /// one stays readable), `own` corral's own files.
    pub(crate) fn of(
        config: &SandboxConfig,
        workspace: &Path,
        view: Option<&HostView>,
        writable: &[PathBuf],
        own: &[PathBuf],
    ) -> Sets {
        let mut sets = Sets {
            read_only: config.protected_in(workspace),
            own: own.to_vec(),
            read_only_mode: config.mode == SandboxMode::ReadOnly,
            ..Sets::default()
        };
        let Some(view) = view.filter(|_| config.mode.is_sandboxed()) else {
            return sets;
        };
        let mut needed = vec![view.workspace.clone()];
        needed.extend(writable.iter().cloned());
        sets.hidden = hide(view.denied.clone(), &needed);
        // Root's files by mode: those in or around what the box writes are left to it.
        let mut by_mode = view.by_mode.clone();
        by_mode.paths.retain(|p| {
            !needed
                .iter()
                // A report made without a workspace names an empty one.
                .filter(|n| !n.as_os_str().is_empty())
                .any(|n| n.starts_with(p) || p.starts_with(n))
        });
        sets.hidden.paths.extend(by_mode.paths.iter().cloned());
        sets.hidden.paths.sort();
        sets.hidden.paths.dedup();
        sets.hidden.by_mode = by_mode;
        sets.patterns = config.deny_read.clone();
        sets.needed = needed;
        sets
    }

    /// The read denies by pattern, but those that name what the box writes.
    fn named(&self) -> &[Named] {
        self.named.get_or_init(|| {
            let home = super::home();
            self.patterns
                .iter()
                .filter_map(|p| Named::of(p, home.as_deref()))
                .filter(|n| !self.needed.iter().any(|w| n.names(w)))
                .collect()
        })
    }

    /// The sets for what corral's own process does in `workspace` on a call's behalf
    /// (the file tools): those a call's box would be built from, but for the box's own
    /// directories, which lie outside every path the file tools reach.
    pub(crate) fn for_own_process(
        config: &SandboxConfig,
        workspace: &Path,
        shared: &super::RunSandbox,
    ) -> Sets {
        let view = config
            .mode
            .is_sandboxed()
            .then(|| shared.view.get(config, workspace, &shared.own));
        let (writable, _) = super::roots(config, workspace, shared);
        Sets::of(config, workspace, view.as_deref(), &writable, &shared.own)
    }

    /// The protected paths the box mounts read-only: none in a `read-only` box, which
    /// writes nothing anyway.
    pub(crate) fn mounted_read_only(&self) -> &[PathBuf] {
        if self.read_only_mode {
            &[]
        } else {
            &self.read_only
        }
    }

    /// What `path` (absolute, links resolved) is to the call: hidden first, then
    /// read-only for a write.
    pub(crate) fn reach(&self, path: &Path) -> Reach {
        if let Some(rule) = self.hidden_by(path) {
            return Reach::Hidden { rule };
        }
        let rule =
            if self.read_only_mode {
                Some(ReadOnlyRule::Mode)
            } else if let Some(p) = self.read_only.iter().find(|p| {
                path.starts_with(p) || p.canonicalize().is_ok_and(|c| path.starts_with(c))
            }) {
                Some(ReadOnlyRule::Protected { path: p.clone() })
            } else {
                self.own
                    .iter()
                    .find(|p| path.starts_with(p))
                    .map(|p| ReadOnlyRule::Own { path: p.clone() })
            };
        match rule {
            Some(rule) => Reach::ReadOnly { rule },
            None => Reach::Reachable,
        }
    }

    /// Why `path` is hidden, if it is: beneath a hidden path, or named by a read deny's
    /// pattern.
    pub(crate) fn hidden_by(&self, path: &Path) -> Option<HiddenRule> {
        let pattern_of = |p: &Path| {
            self.named()
                .iter()
                .find(|n| n.names(p))
                .map(|n| n.pattern.clone())
        };
        if let Some(hidden) = self.hidden.paths.iter().find(|h| path.starts_with(h)) {
            if self.own.iter().any(|o| hidden.starts_with(o)) {
                return Some(HiddenRule::Own {
                    path: hidden.clone(),
                });
            }
            return Some(HiddenRule::ReadDeny {
                path: hidden.clone(),
                pattern: pattern_of(hidden),
            });
        }
        // Made after the view was read: the pattern names it.
        let named = self.named().iter().find(|n| n.names(path))?;
        let rest = path.strip_prefix(&named.dir).ok()?;
        Some(HiddenRule::ReadDeny {
            path: named.dir.join(rest.components().next()?),
            pattern: Some(named.pattern.clone()),
        })
    }
}

/// Split `paths` into those hidden and those kept visible because one of `needed` lies
/// beneath them. Called from [`Sets::of`] only (a test holds it so): one computation of
/// what a call hides.
fn hide(paths: Vec<PathBuf>, needed: &[PathBuf]) -> Hidden {
    let mut hidden = Hidden::default();
    for p in paths {
        if needed.iter().any(|n| n.starts_with(&p)) {
            hidden.kept.push(p);
        } else {
            hidden.paths.push(p);
        }
    }
    hidden
}

impl std::fmt::Display for HiddenRule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HiddenRule::ReadDeny {
                path,
                pattern: Some(pattern),
            } => write!(
                f,
                "{} is hidden by the sandbox's read deny `{pattern}`",
                path.display()
            ),
            HiddenRule::ReadDeny {
                path,
                pattern: None,
            } => write!(
                f,
                "{} is hidden by the sandbox's read denies (a secret outside the home)",
                path.display()
            ),
            HiddenRule::Own { path } => write!(
                f,
                "{} is corral's own (its trace, captures, policy or trust store), hidden \
                 by the sandbox",
                path.display()
            ),
        }
    }
}

impl HiddenRule {
    /// The rule as a client's `rule` field shows it: the pattern, or the path.
    pub(crate) fn name(&self) -> String {
        match self {
            HiddenRule::ReadDeny {
                pattern: Some(pattern),
                ..
            } => pattern.clone(),
            HiddenRule::ReadDeny { path, .. } | HiddenRule::Own { path } => {
                path.display().to_string()
            }
        }
    }

    /// What to do instead, one sentence.
    pub(crate) fn instead(&self) -> &'static str {
        match self {
            HiddenRule::ReadDeny { pattern: None, .. } => {
                "Work without it: no setting lifts this deny, which keeps the host's \
                 secrets outside the home from every call."
            }
            HiddenRule::ReadDeny { .. } => {
                "Work without it: the read denies hold for every sandboxed call and for \
                 the file tools; a person who wants it read does so outside corral's sandbox."
            }
            HiddenRule::Own { .. } => {
                "corral's own files are not the task's: work on the workspace's other files."
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_above_the_workspace_stays_visible() {
        let h = hide(
            vec![
                PathBuf::from("/home/me/.ssh"),
                PathBuf::from("/home/me/src"),
            ],
            &[PathBuf::from("/home/me/src/ws")],
        );
        assert_eq!(h.paths, vec![PathBuf::from("/home/me/.ssh")]);
        assert_eq!(h.kept, vec![PathBuf::from("/home/me/src")]);
    }

    #[test]
    fn a_pattern_names_a_path_made_later() {
        let named = Named::of("/nowhere/home/.cargo/credentials*", None).unwrap();
        assert!(named.names(Path::new("/nowhere/home/.cargo/credentials.toml")));
        assert!(named.names(Path::new("/nowhere/home/.cargo/credentials/x")));
        assert!(!named.names(Path::new("/nowhere/home/.cargo/config.toml")));
        let exact = Named::of("/nowhere/home/.ssh", None).unwrap();
        assert!(exact.names(Path::new("/nowhere/home/.ssh/id_ed25519")));
        assert!(!exact.names(Path::new("/nowhere/home/.sshd")));
    }

    /// One computation of what a call hides: `hide` is called from `Sets::of` only, and
    /// no other module has a `hide` of its own over the read denies.
    #[test]
    fn hide_is_called_from_one_function() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut calls = Vec::new();
        let mut stack = vec![src];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    stack.push(path);
                    continue;
                }
                if path.extension().is_none_or(|e| e != "rs") {
                    continue;
                }
                let text = std::fs::read_to_string(&path).unwrap();
                // Up to the unit tests, which call it to test it.
                let code = text.split("#[cfg(test)]").next().unwrap_or_default();
                for (n, line) in code.lines().enumerate() {
                    let called = line.contains("hide(") && !line.contains("fn hide(");
                    let word = line.find("hide(").is_some_and(|at| {
                        !line[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_')
                    });
                    if called && word && !line.trim_start().starts_with("//") {
                        calls.push(format!("{}:{}", path.display(), n + 1));
                    }
                }
            }
        }
        assert_eq!(calls.len(), 1, "{calls:#?}");
        assert!(calls[0].contains("sandbox/sets.rs"), "{calls:#?}");
    }
}
