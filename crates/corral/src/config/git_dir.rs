//! The git metadata a `workspace-write` box keeps read-only.
//!
//! Git runs programs named in its metadata: hooks, `core.fsmonitor`, `core.pager`,
//! filters, aliases. A box that can rewrite `.git` can make the person's next `git
//! status` on the host run its code, and per-file protection of a writable `.git` cannot
//! hold: git itself must write there (`index.lock`, `HEAD.lock`, `ORIG_HEAD`), and a
//! directory that can be renamed can be copied back with a new `config`. So by default the
//! whole `.git` is read-only in the box: a bind mount, which cannot be renamed, removed
//! or replaced, with `.git/modules/*` inside it. A `.git` *file* (`gitdir: …`, a linked
//! worktree or a submodule) is read-only, and so are the directory it names and that
//! directory's common directory (`commondir`, the main repository's `.git`). A command
//! that needs to write there (`git commit`) fails in the box, and the result says how to
//! allow it. The `.git` of each submodule checked out in the workspace (found from the
//! module directories in `.git/modules`, which the box cannot change) is read-only too:
//! git reads it when the person runs `git status` at the top. Other nested `sub/.git`
//! directories (a repository inside the work tree that is no submodule) are not covered.
//!
//! With `[sandbox] git_write = true` (trusted policy files and flags only) git may write
//! its metadata, and only what runs code or points elsewhere stays read-only: `hooks/`,
//! `config`, `config.worktree`, `commondir` and `info/`.

use std::path::{Path, PathBuf};

/// What stays read-only inside a git directory with `git_write`.
pub const GIT_WRITE_PROTECTED: &[&str] =
    &["hooks", "config", "config.worktree", "commondir", "info"];

/// The paths the protected entry `entry` (relative to `workspace`) stands for: itself,
/// except `.git`, which is expanded as the module docs say.
pub(crate) fn expand(workspace: &Path, entry: &str, git_write: bool) -> Vec<PathBuf> {
    let path = workspace.join(entry);
    if entry.trim_end_matches('/') != ".git" {
        return vec![path];
    }
    let mut out = Vec::new();
    let mut dirs = Vec::new();
    match std::fs::symlink_metadata(&path) {
        Ok(meta) if meta.is_file() => {
            out.push(path.clone());
            dirs.extend(pointed_to(&path, workspace, "gitdir: ", workspace));
        }
        // A directory, or absent (then it could be created: the report says so).
        _ => dirs.push(path),
    }
    if let Some(common) = dirs
        .first()
        .and_then(|d| pointed_to(&d.join("commondir"), d, "", workspace))
    {
        dirs.push(common);
    }
    let modules = dirs.first().map(|d| d.join("modules"));
    for dir in dirs {
        if git_write {
            out.extend(GIT_WRITE_PROTECTED.iter().map(|name| dir.join(name)));
        } else {
            out.push(dir);
        }
    }
    if let Some(modules) = modules {
        for git in submodule_gits(&modules, workspace) {
            match std::fs::symlink_metadata(&git) {
                Ok(meta) if meta.is_dir() && git_write => {
                    out.extend(GIT_WRITE_PROTECTED.iter().map(|name| git.join(name)));
                }
                Ok(_) => out.push(git),
                Err(_) => {}
            }
        }
    }
    out.dedup();
    out
}

/// How deep submodules of submodules are followed.
const MODULE_DEPTH: usize = 4;

/// The `.git` of every submodule the repository has checked out in `workspace`: each
/// module's git directory under `modules` (itself inside the read-only `.git`, so a
/// command cannot change what it says) names its work tree (`core.worktree`). Git
/// reads a submodule's `.git` when the person runs `git status` at the top: a command
/// that replaced the `.git` file with a directory of its own, with a `config` naming an
/// fsmonitor, would run its code on the host.
fn submodule_gits(modules: &Path, workspace: &Path) -> Vec<PathBuf> {
    let Ok(workspace) = workspace.canonicalize() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut pending = vec![(modules.to_path_buf(), 0)];
    while let Some((dir, depth)) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let module = entry.path();
            if !entry.file_type().is_ok_and(|t| t.is_dir()) {
                continue;
            }
            if let Some(tree) = work_tree(&module)
                && tree.starts_with(&workspace)
                && tree != workspace
            {
                out.push(tree.join(".git"));
            }
            if depth < MODULE_DEPTH {
                // A module named `a/b` is a directory `a/b`; a module's own submodules
                // are under its `modules`.
                pending.push((module.clone(), depth + 1));
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// The work tree a module's git directory names (`worktree = …` in its `config`,
/// relative to the directory), resolved.
fn work_tree(module: &Path) -> Option<PathBuf> {
    let text = read_small(module, "config", 64 * 1024)?;
    let value = text.lines().find_map(|line| {
        let (key, value) = line.split_once('=')?;
        key.trim()
            .eq_ignore_ascii_case("worktree")
            .then(|| value.trim().trim_matches('"').to_string())
    })?;
    module.join(value).canonicalize().ok()
}

/// The directory a small pointer file names (`gitdir: PATH` in a `.git` file, a bare
/// `PATH` in `commondir`), relative to `base`; `None` unless it is an existing directory
/// that does not hold `workspace` (the file's content may be a command's: a read-only
/// mount over the workspace or above would take its writes away, never give more).
fn pointed_to(file: &Path, base: &Path, prefix: &str, workspace: &Path) -> Option<PathBuf> {
    let text = read_small(file.parent()?, file.file_name()?, 4096)?;
    let named = text.lines().next()?.strip_prefix(prefix)?.trim();
    if named.is_empty() {
        return None;
    }
    let dir = base.join(named).canonicalize().ok()?;
    let workspace = workspace.canonicalize().ok()?;
    (dir.is_dir() && !workspace.starts_with(&dir)).then_some(dir)
}

/// The text of the small file `name` in `dir`, through the resolver: not followed if a
/// link, never waited on or read if a pipe or a device (a command may have made any of
/// these files: a `commondir` that is a named pipe would hold every run's start), and
/// `None` when it is missing, larger than `limit`, or not text.
fn read_small(dir: &Path, name: impl AsRef<Path>, limit: u64) -> Option<String> {
    let bytes = crate::beneath::read_in(dir, name.as_ref(), limit).ok()??;
    String::from_utf8(bytes).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_git_directory_is_protected_whole_or_by_its_code_paths() {
        let ws = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(ws.path().join(".git/hooks")).unwrap();
        assert_eq!(expand(ws.path(), ".git", false), [ws.path().join(".git")]);
        let written = expand(ws.path(), ".git", true);
        assert!(written.contains(&ws.path().join(".git/hooks")));
        assert!(written.contains(&ws.path().join(".git/config")));
        assert!(!written.contains(&ws.path().join(".git")));
        assert_eq!(
            expand(ws.path(), "corral.toml", false),
            [ws.path().join("corral.toml")]
        );
    }

    #[test]
    fn a_git_file_protects_itself_its_directory_and_the_common_one() {
        let dir = tempfile::tempdir().unwrap();
        let main = dir.path().join("main/.git");
        let linked = main.join("worktrees/wt");
        std::fs::create_dir_all(&linked).unwrap();
        std::fs::write(linked.join("commondir"), "../..\n").unwrap();
        let ws = dir.path().join("wt");
        std::fs::create_dir_all(&ws).unwrap();
        std::fs::write(ws.join(".git"), format!("gitdir: {}\n", linked.display())).unwrap();
        let paths = expand(&ws, ".git", false);
        let main = main.canonicalize().unwrap();
        assert_eq!(
            paths,
            [ws.join(".git"), linked.canonicalize().unwrap(), main]
        );
    }

    #[test]
    fn a_checked_out_submodules_git_is_protected() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        let module = ws.join(".git/modules/lib");
        let nested = module.join("modules/deep");
        std::fs::create_dir_all(&nested).unwrap();
        std::fs::create_dir_all(ws.join("lib/deep")).unwrap();
        std::fs::write(module.join("config"), "[core]\n\tworktree = ../../../lib\n").unwrap();
        std::fs::write(
            nested.join("config"),
            "[core]\n\tworktree = ../../../../../lib/deep\n",
        )
        .unwrap();
        std::fs::write(ws.join("lib/.git"), "gitdir: ../.git/modules/lib\n").unwrap();
        std::fs::write(
            ws.join("lib/deep/.git"),
            "gitdir: ../../.git/modules/lib/modules/deep\n",
        )
        .unwrap();
        // A module whose tree is outside the workspace, or is the workspace, is passed over.
        std::fs::create_dir_all(ws.join(".git/modules/out")).unwrap();
        std::fs::write(
            ws.join(".git/modules/out/config"),
            "[core]\n\tworktree = ../../../..\n",
        )
        .unwrap();
        let paths = expand(&ws, ".git", false);
        let real = ws.canonicalize().unwrap();
        assert!(paths.contains(&real.join("lib/.git")), "{paths:?}");
        assert!(paths.contains(&real.join("lib/deep/.git")), "{paths:?}");
        assert_eq!(paths.len(), 3, "{paths:?}");
    }

    /// A named pipe where git keeps a small file (a command may make one: with
    /// `git_write` a module's `config` is writable) is passed over, never opened to wait
    /// for a writer: the run's start does not hang on it.
    #[test]
    fn a_pipe_where_a_pointer_or_config_was_expected_is_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        let linked = dir.path().join("main/.git/worktrees/wt");
        std::fs::create_dir_all(ws.join(".git/modules/lib")).unwrap();
        std::fs::create_dir_all(&linked).unwrap();
        for pipe in [ws.join(".git/modules/lib/config"), linked.join("commondir")] {
            let made = std::process::Command::new("mkfifo")
                .arg(&pipe)
                .status()
                .unwrap();
            assert!(made.success(), "mkfifo {pipe:?}");
        }
        let (done, expanded) = std::sync::mpsc::channel();
        let (ws_dir, git_file) = (ws.clone(), ws.join("wt"));
        std::thread::spawn(move || {
            let whole = expand(&ws_dir, ".git", false);
            std::fs::create_dir_all(&git_file).unwrap();
            std::fs::write(
                git_file.join(".git"),
                format!("gitdir: {}\n", linked.display()),
            )
            .unwrap();
            let pointed = expand(&git_file, ".git", false);
            let _ = done.send((whole, pointed));
        });
        let (whole, pointed) = expanded
            .recv_timeout(std::time::Duration::from_secs(20))
            .expect("expand waited on a named pipe");
        assert_eq!(whole, [ws.join(".git")]);
        // The linked directory is still read-only; its pipe names no common directory.
        assert_eq!(pointed.len(), 2, "{pointed:?}");
    }

    #[test]
    fn a_pointer_at_the_workspace_or_above_is_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        std::fs::create_dir_all(&ws).unwrap();
        for named in [".", "..", "/", "/nonexistent", ""] {
            std::fs::write(ws.join(".git"), format!("gitdir: {named}\n")).unwrap();
            assert_eq!(expand(&ws, ".git", false), [ws.join(".git")], "{named:?}");
        }
    }
}
