//! Files the host runs on its own, held for the person.
//!
//! Host programs run files of a workspace without anyone typing a command: Claude Code
//! its settings' hooks, an MCP client the servers `.mcp.json` names, VS Code a task that
//! runs on opening the folder, git the hooks `core.hooksPath` names, rustup the toolchain
//! `rust-toolchain.toml` points at. A box that may write the workspace could rewrite
//! them, and the person's next step on the host would run the box's code. The class is
//! named once, in [`table::ROWS`] (plus the directory each repository's `core.hooksPath`
//! names); corral's own process, its file tools and the box all take it from here.
//!
//! A call may write these paths as it writes anything else, but the workspace keeps the
//! person's version (see [`copies`]): each that exists when the call starts is seen by
//! the box as a per-call copy bound over it, and one that appears during the call is
//! moved out at its end. What differs is kept in the held store (`crate::held`) for the
//! person to review and apply (`corral review`), and the result says so in one line.
//!
//! What is not held: the project's own code that a person's tools run on their own (a
//! `build.rs` rust-analyzer builds on opening, a test a test explorer runs, an
//! `eslint.config.js`), and what a held hook runs in turn (`lint-staged` reading
//! `package.json`): the class names the hook's own files.

pub(crate) mod copies;
pub(crate) mod nested_git;
pub mod table;

use std::path::{Path, PathBuf};

use table::{ROWS, Shape, Treatment};

/// A path of the class in a workspace: relative to its root, with what runs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ClassPath {
    pub rel: PathBuf,
    pub dir: bool,
    pub runs: &'static str,
}

/// The held paths of `workspace` that exist now: each row's file or directory, the
/// files a pattern matches, and the directory `core.hooksPath` names. A path reached
/// through a symbolic link is not listed (the box sees the link, and where it leads is
/// either read-only to it or a path of its own in this list).
pub(crate) fn existing(workspace: &Path) -> Vec<ClassPath> {
    let Ok(roots) = crate::beneath::Roots::open([workspace.to_path_buf()]) else {
        return Vec::new();
    };
    let kind = |rel: &Path| kind(&roots, workspace, rel);
    let mut out = Vec::new();
    for row in ROWS.iter().filter(|r| r.treatment == Treatment::Held) {
        match row.shape {
            Shape::File | Shape::Dir => {
                let rel = PathBuf::from(row.path);
                if let Some(dir) = kind(&rel) {
                    out.push(ClassPath {
                        rel,
                        dir,
                        runs: row.runs,
                    });
                }
            }
            Shape::Pattern => {
                let (parent, pattern) = match row.path.rsplit_once('/') {
                    Some((parent, pattern)) => (PathBuf::from(parent), pattern),
                    None => (PathBuf::new(), row.path),
                };
                for name in names_in(&roots, &workspace.join(&parent)) {
                    if !table::matches(pattern, &name) {
                        continue;
                    }
                    let rel = parent.join(name);
                    if let Some(dir) = kind(&rel) {
                        out.push(ClassPath {
                            rel,
                            dir,
                            runs: row.runs,
                        });
                    }
                }
            }
        }
    }
    if let Some(rel) = hooks_path(workspace)
        && !out.iter().any(|c| rel.starts_with(&c.rel))
        && kind(&rel) == Some(true)
    {
        out.push(ClassPath {
            rel,
            dir: true,
            runs: "git: the hooks `core.hooksPath` names, run by `git commit` and others",
        });
    }
    out
}

/// The reported rows (`.envrc`, `mise.toml`) as they are in `workspace`: their path, what
/// runs them, and their content (`None`: absent or unreadable).
pub(crate) fn reported(workspace: &Path) -> Vec<(PathBuf, &'static str, Option<Vec<u8>>)> {
    let Ok(roots) = crate::beneath::Roots::open([workspace.to_path_buf()]) else {
        return Vec::new();
    };
    ROWS.iter()
        .filter(|r| r.treatment == Treatment::Reported)
        .map(|r| {
            let content = roots
                .read_at_most(&workspace.join(r.path), 1 << 20)
                .ok()
                .flatten();
            (PathBuf::from(r.path), r.runs, content)
        })
        .collect()
}

/// The symbolic links at or on the way to a held path of `workspace`, with their
/// targets: a host program reading `.claude/settings.json` follows `.claude` wherever it
/// leads in the workspace, so a link a call makes there is taken away.
pub(crate) fn links(workspace: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    use rustix::fs::FileType;
    let Ok(roots) = crate::beneath::Roots::open([workspace.to_path_buf()]) else {
        return Vec::new();
    };
    let link = |rel: &Path| match roots.lstat(&workspace.join(rel)) {
        Ok(Some((FileType::Symlink, target))) => Some(target),
        _ => None,
    };
    let mut out: Vec<(PathBuf, Vec<u8>)> = Vec::new();
    let mut paths: Vec<PathBuf> = Vec::new();
    for row in ROWS.iter().filter(|r| r.treatment == Treatment::Held) {
        match row.shape {
            Shape::File | Shape::Dir => paths.push(PathBuf::from(row.path)),
            Shape::Pattern => {
                let (parent, pattern) = match row.path.rsplit_once('/') {
                    Some((parent, pattern)) => (PathBuf::from(parent), pattern),
                    None => (PathBuf::new(), row.path),
                };
                paths.push(parent.clone());
                for name in names_in(&roots, &workspace.join(&parent)) {
                    if table::matches(pattern, &name) {
                        paths.push(parent.join(name));
                    }
                }
            }
        }
    }
    for path in paths {
        let mut prefix = PathBuf::new();
        for part in path.components() {
            prefix.push(part);
            if let Some(target) = link(&prefix) {
                if !out.iter().any(|(p, _)| *p == prefix) {
                    out.push((prefix.clone(), target));
                }
                break;
            }
        }
    }
    out.sort();
    out
}

/// What runs `rel` (relative to `workspace`) when it is a held path or lies in one,
/// whether or not it exists yet: a row's file, a file in a row's directory or one its
/// pattern names, a file in the directory `core.hooksPath` names, or a nested
/// repository's `config` or hook. What corral's own process writes for a model (the file
/// tools, `apply_patch`) is held to this, as the box is.
pub(crate) fn runs(workspace: &Path, rel: &Path) -> Option<&'static str> {
    for row in ROWS.iter().filter(|r| r.treatment == Treatment::Held) {
        let path = Path::new(row.path);
        let hit = match row.shape {
            Shape::File => rel == path,
            Shape::Dir => rel.starts_with(path),
            Shape::Pattern => {
                let (parent, pattern) = match row.path.rsplit_once('/') {
                    Some((parent, pattern)) => (Path::new(parent), pattern),
                    None => (Path::new(""), row.path),
                };
                rel.parent() == Some(parent)
                    && rel
                        .file_name()
                        .and_then(|n| n.to_str())
                        .is_some_and(|n| table::matches(pattern, n))
            }
        };
        if hit {
            return Some(row.runs);
        }
    }
    if hooks_path(workspace).is_some_and(|hooks| rel.starts_with(hooks)) {
        return Some("git: the hooks `core.hooksPath` names, run by `git commit` and others");
    }
    // A nested repository's config or hooks (the top `.git` is a protected path).
    let parts: Vec<_> = rel.components().collect();
    let nested = parts.iter().skip(1).position(|c| c.as_os_str() == ".git");
    if let Some(at) = nested {
        let rest: PathBuf = parts[at + 2..].iter().collect();
        if rest == Path::new("config") || rest.starts_with("hooks") {
            return Some(nested_git::RUNS);
        }
    }
    None
}

/// `Some(true)` for a directory, `Some(false)` for a regular file at `rel` (not a
/// symbolic link, nor below one); `None` otherwise.
fn kind(roots: &crate::beneath::Roots, workspace: &Path, rel: &Path) -> Option<bool> {
    use rustix::fs::FileType;
    if rel.as_os_str().is_empty() {
        return Some(true);
    }
    match roots.lstat(&workspace.join(rel)) {
        Ok(Some((FileType::Directory, _))) => Some(true),
        Ok(Some((FileType::RegularFile, _))) => Some(false),
        _ => None,
    }
}

/// The names in the directory at `dir` (not through a symbolic link), sorted.
pub(crate) fn names_in(roots: &crate::beneath::Roots, dir: &Path) -> Vec<String> {
    let Ok(fd) = roots.dir(dir) else {
        return Vec::new();
    };
    let Ok(entries) = rustix::fs::Dir::read_from(&fd) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .flatten()
        .filter_map(|e| e.file_name().to_str().ok().map(str::to_string))
        .filter(|n| n != "." && n != "..")
        .collect();
    names.sort();
    names
}

/// The workspace-relative directory the repository's `core.hooksPath` names, when it
/// names one inside the workspace (`.husky`, `.githooks`). Git takes a relative value
/// from the top of the work tree.
pub(crate) fn hooks_path(workspace: &Path) -> Option<PathBuf> {
    let bytes = crate::beneath::read_in(workspace, Path::new(".git/config"), 1 << 20).ok()??;
    let config = String::from_utf8(bytes).ok()?;
    let value = config_value(&config, "core", "hookspath")?;
    let path = Path::new(&value);
    let rel = if path.is_absolute() {
        path.strip_prefix(workspace).ok()?.to_path_buf()
    } else {
        path.to_path_buf()
    };
    let rel: PathBuf = rel
        .components()
        .filter(|c| !matches!(c, std::path::Component::CurDir))
        .collect();
    if rel.as_os_str().is_empty()
        || rel
            .components()
            .any(|c| matches!(c, std::path::Component::ParentDir))
    {
        return None;
    }
    Some(rel)
}

/// The value of `section.key` (both compared without case, as git does for these) in
/// a git config file's text; the last one wins.
pub(crate) fn config_value(text: &str, section: &str, key: &str) -> Option<String> {
    let mut current = String::new();
    let mut found = None;
    for line in text.lines() {
        let line = line.trim();
        if let Some(header) = line.strip_prefix('[') {
            let name = header.split([']', ' ', '"']).next().unwrap_or_default();
            current = name.to_ascii_lowercase();
            continue;
        }
        if current != section {
            continue;
        }
        let Some((k, v)) = line.split_once('=') else {
            continue;
        };
        if k.trim().eq_ignore_ascii_case(key) {
            let v = v.trim();
            let v = v
                .strip_prefix('"')
                .and_then(|v| v.strip_suffix('"'))
                .unwrap_or(v);
            found = Some(v.to_string());
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_config_value_is_read_as_git_reads_it() {
        let text = "[core]\n\trepositoryformatversion = 0\n\thooksPath = .husky\n[remote \"o\"]\n\turl = x\n";
        assert_eq!(
            config_value(text, "core", "hookspath").as_deref(),
            Some(".husky")
        );
        assert_eq!(config_value(text, "remote", "url").as_deref(), Some("x"));
        assert_eq!(config_value(text, "core", "fsmonitor"), None);
    }

    #[test]
    fn the_class_is_found_as_it_is_in_a_workspace() {
        let ws = tempfile::tempdir().unwrap();
        let w = ws.path();
        std::fs::create_dir_all(w.join(".claude/hooks")).unwrap();
        std::fs::write(w.join(".claude/settings.json"), "{}").unwrap();
        std::fs::write(w.join(".mcp.json"), "{}").unwrap();
        std::fs::create_dir_all(w.join(".github")).unwrap();
        std::fs::write(w.join(".github/copilot-instructions.md"), "x").unwrap();
        std::fs::write(w.join("app.code-workspace"), "{}").unwrap();
        std::fs::create_dir_all(w.join("elsewhere")).unwrap();
        std::os::unix::fs::symlink(w.join("elsewhere"), w.join(".cursor")).unwrap();
        let found: Vec<String> = existing(w)
            .iter()
            .map(|c| c.rel.display().to_string())
            .collect();
        assert_eq!(
            found,
            [
                ".claude/settings.json",
                ".claude/hooks",
                ".mcp.json",
                ".github/copilot-instructions.md",
                "app.code-workspace"
            ]
        );
    }
}
