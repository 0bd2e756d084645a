//! Read denies: which paths a sandboxed call cannot read, and how a failed read of one
//! is told apart from any other failure.
//!
//! [`super::SandboxConfig::deny_read`] holds the patterns: `~/` is the person's home
//! (`$HOME`), a `*` in the last component matches names in its directory
//! (`~/.cargo/credentials*`), anything else is an absolute path. corral adds its own
//! store (the trace and its captures) and its trust store. Each existing path is hidden
//! in the call's mount namespace (see [`corral_sys::sandbox_reach`]): a directory shows
//! empty, a file cannot be opened. A path that holds the workspace or a writable root
//! is not hidden (the workspace stays readable), and the report says so.

use std::path::{Path, PathBuf};

pub use crate::config::sandbox::DEFAULT_DENY_READ;

pub(crate) mod root_files;

/// Secrets outside the home, hidden in every sandboxed call as well: the password and
/// group shadow files and the other users' homes under `/home`. (One that holds the
/// workspace or a writable root stays, as any deny does.) `/root` is not among them: a
/// root whose `HOME` is elsewhere (a CI job) keeps its toolchains and checkouts there.
pub(crate) fn outside_the_home(home: Option<&Path>) -> Vec<PathBuf> {
    let canonical = |p: &Path| p.canonicalize().ok();
    let home = home.and_then(canonical);
    let mut paths: Vec<PathBuf> = [
        "/etc/shadow",
        "/etc/gshadow",
        "/etc/shadow-",
        "/etc/gshadow-",
    ]
    .iter()
    .map(PathBuf::from)
    .filter(|p| p.exists())
    .collect();
    let not_home = |p: &PathBuf| {
        home.as_ref()
            .is_none_or(|h| !h.starts_with(p) && !p.starts_with(h))
    };
    if let Ok(homes) = std::fs::read_dir("/home") {
        paths.extend(
            homes
                .filter_map(Result::ok)
                .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
                .filter_map(|e| canonical(&e.path()))
                .filter(not_home),
        );
    }
    paths
}

/// Check a pattern: `~/…` or absolute, `*` only in the last component.
pub(crate) fn check_pattern(pattern: &str) -> Result<(), String> {
    let rest = pattern.strip_prefix("~/").unwrap_or(pattern);
    if !pattern.starts_with("~/") && !pattern.starts_with('/') {
        return Err(format!(
            "deny_read {pattern:?}: give an absolute path or one under the home directory (`~/…`)"
        ));
    }
    if let Some((dir, _)) = rest.rsplit_once('/')
        && dir.contains('*')
    {
        return Err(format!(
            "deny_read {pattern:?}: `*` is allowed only in the last component"
        ));
    }
    Ok(())
}

/// The paths `patterns` name, `~/` in `home` (a pattern in the home is left out without
/// one), globs as written.
pub(crate) fn named<'a>(
    patterns: &'a [String],
    home: Option<&'a Path>,
) -> impl Iterator<Item = PathBuf> + 'a {
    patterns
        .iter()
        .filter_map(move |pattern| match pattern.strip_prefix("~/") {
            Some(rest) => home.map(|h| h.join(rest)),
            None => Some(PathBuf::from(pattern)),
        })
}

/// The existing paths `patterns` name, canonical. Patterns under `~/` are skipped when
/// `home` is unknown.
pub(crate) fn expand(patterns: &[String], home: Option<&Path>) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for path in named(patterns, home) {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if name.contains('*') {
            let Some(dir) = path.parent() else { continue };
            let Ok(glob) = globset::Glob::new(&name) else {
                continue;
            };
            let glob = glob.compile_matcher();
            let Ok(entries) = std::fs::read_dir(dir) else {
                continue;
            };
            let mut found: Vec<PathBuf> = entries
                .flatten()
                .filter(|e| glob.is_match(e.file_name()))
                .map(|e| e.path())
                .collect();
            found.sort();
            out.extend(found);
        } else if path.symlink_metadata().is_ok() {
            out.push(path);
        }
    }
    let mut canonical: Vec<PathBuf> = out
        .into_iter()
        .filter_map(|p| p.canonicalize().ok())
        .collect();
    canonical.sort();
    canonical.dedup();
    canonical
}

/// What a call hides: the paths, and those left visible because they hold something
/// the call must reach (the workspace and the writable roots). Made by
/// `super::sets::Sets::of`, the one computation the box and the file tools share.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Hidden {
    pub paths: Vec<PathBuf>,
    pub kept: Vec<PathBuf>,
    /// Root's files hidden by their mode (`root_files`), also in `paths`; with the
    /// directories hidden whole past a bound, and whether the walk stopped at one.
    pub by_mode: root_files::Found,
}

/// A failed read of a hidden path, from a failed command's stderr: the first absolute
/// path a line names that lies beneath a hidden one, with the line.
pub(crate) fn denied_read(stderr: &str, hidden: &[PathBuf], home: Option<&Path>) -> Option<String> {
    if hidden.is_empty() {
        return None;
    }
    for line in stderr.lines() {
        for word in line.split(|c: char| {
            c.is_whitespace() || matches!(c, '\'' | '"' | '`' | '‘' | '’' | '(' | ')' | '[' | ']')
        }) {
            let word = word.trim_end_matches([':', ',', ';', '.']);
            let path = match (word.strip_prefix("~/"), home) {
                (Some(rest), Some(h)) => h.join(rest),
                _ if word.starts_with('/') => PathBuf::from(word),
                _ => continue,
            };
            if let Some(root) = hidden.iter().find(|h| path.starts_with(h)) {
                let mut text = line.trim().to_string();
                if text.chars().count() > 200 {
                    text = text.chars().take(199).collect::<String>() + "…";
                }
                return Some(format!(
                    "a read of {} (hidden by the sandbox's read denies: {} is in deny_read; \
                     from stderr: {text})",
                    path.display(),
                    root.display()
                ));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_are_checked() {
        assert!(check_pattern("~/.ssh").is_ok());
        assert!(check_pattern("/etc/shadow").is_ok());
        assert!(check_pattern("~/.cargo/credentials*").is_ok());
        assert!(check_pattern(".env").is_err());
        assert!(check_pattern("~/*/x").is_err());
    }

    #[test]
    fn a_failed_read_names_its_path() {
        let hidden = [PathBuf::from("/home/me/.ssh")];
        let d = denied_read(
            "cat: /home/me/.ssh/id_ed25519: No such file or directory",
            &hidden,
            None,
        )
        .unwrap();
        assert!(d.contains("/home/me/.ssh/id_ed25519"), "{d}");
        assert!(denied_read("cat: /home/me/x: No such file", &hidden, None).is_none());
    }
}
