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
//! With `[sandbox] git_write` (the default in the sandboxed postures; `git_write = false`
//! in any layer restores the whole-`.git` mount above) git writes its own data in the
//! box: objects, refs, `packed-refs`, `HEAD`, `index`, `logs`, `ORIG_HEAD`, `FETCH_HEAD`,
//! `COMMIT_EDITMSG`, `rebase-*`, `MERGE_*`. `.git` itself stays writable (git renames
//! `index.lock` over `index`, `HEAD.lock` over `HEAD`). What runs code or points git
//! elsewhere stays read-only: [`GIT_WRITE_PROTECTED`] in each git directory (the work
//! tree's, the one a `.git` file names and its common directory), the same in every
//! module's git directory under `modules/` ([`MODULE_PROTECTED`]), and the files a
//! `config`'s `include.path` or `includeIf.*.path` names inside the workspace. The undo
//! record then holds the refs and the index (see `undo::walk`).

use std::path::{Path, PathBuf};

/// What stays read-only inside a git directory with `git_write`: what names a program
/// git runs (`hooks/`, `config` and `config.worktree` with `core.fsmonitor`, filters,
/// aliases; `info/` with `attributes` naming filters) or points git at another directory
/// (`commondir`, `worktrees/` with each linked tree's `gitdir`, `objects/info/alternates`).
/// The git rows of the class `autorun::table` names read-only.
pub const GIT_WRITE_PROTECTED: &[&str] = &[
    "hooks",
    "config",
    "config.worktree",
    "commondir",
    "info",
    "worktrees",
    "objects/info/alternates",
];

/// What stays read-only in each module's git directory (`modules/NAME`) with
/// `git_write`: what of it runs code. Its refs, objects and index git writes.
pub const MODULE_PROTECTED: &[&str] = &["config", "hooks", "info"];

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
        Ok(_) => dirs.push(path),
        // Absent: a `.git` a call makes is moved out whole after it (`appeared.rs`).
        Err(_) => return vec![path],
    }
    if let Some(common) = dirs
        .first()
        .and_then(|d| pointed_to(&d.join("commondir"), d, "", workspace))
    {
        dirs.push(common);
    }
    let modules = dirs.first().map(|d| d.join("modules"));
    for dir in &dirs {
        if git_write {
            out.extend(GIT_WRITE_PROTECTED.iter().map(|name| dir.join(name)));
            out.extend(included(dir, workspace));
        } else {
            out.push(dir.clone());
        }
    }
    if let Some(modules) = modules {
        if git_write {
            for module in module_dirs(&modules) {
                out.extend(MODULE_PROTECTED.iter().map(|name| module.join(name)));
                out.extend(included(&module, workspace));
            }
        }
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
    let mut seen = std::collections::HashSet::new();
    out.retain(|p| seen.insert(p.clone()));
    out
}

/// The files inside `workspace` that the `config` of the git directory `dir` includes
/// (`include.path`, `includeIf.*.path`; a relative one from `dir`, as git takes it): git
/// reads them as its config, so a box that could write one could name a program there.
/// A path outside the workspace is the box's to read only anyway.
fn included(dir: &Path, workspace: &Path) -> Vec<PathBuf> {
    let Some(text) = read_small(dir, "config", 1 << 20) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut section = String::new();
    for line in text.lines() {
        let line = line.trim();
        if let Some(header) = line.strip_prefix('[') {
            section = header
                .split([']', ' ', '"', '.'])
                .next()
                .unwrap_or_default()
                .to_ascii_lowercase();
            continue;
        }
        if section != "include" && section != "includeif" {
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        if !key.trim().eq_ignore_ascii_case("path") {
            continue;
        }
        let value = value.trim().trim_matches('"');
        if value.is_empty() || value.starts_with('~') {
            continue;
        }
        let path = normalise(&dir.join(value));
        if path.starts_with(workspace) || path.starts_with(normalise(workspace)) {
            out.push(path);
        }
    }
    out
}

/// `path` with its `.` and `..` taken away lexically (an included file may not exist yet).
fn normalise(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// Every module's git directory under `modules` (a directory holding a `HEAD`), to
/// [`MODULE_DEPTH`] levels: a module named `a/b` is `modules/a/b`, a module's own
/// submodules are under its `modules`.
fn module_dirs(modules: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut pending = vec![(modules.to_path_buf(), 0)];
    while let Some((dir, depth)) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            if !entry.file_type().is_ok_and(|t| t.is_dir()) {
                continue;
            }
            let module = entry.path();
            if std::fs::symlink_metadata(module.join("HEAD")).is_ok() {
                out.push(module.clone());
            }
            if depth < MODULE_DEPTH {
                pending.push((module, depth + 1));
            }
        }
    }
    out.sort();
    out
}

/// With `git_write`, the workspace's `.git` directory (not a `.git` file, nor a link),
/// which the box mounts over itself, writable: a mount point cannot be renamed or
/// removed, so the box cannot move `.git` aside and put a copy with a `config` of its
/// own in its place.
pub(crate) fn own_mount(workspace: &Path, git_write: bool) -> Option<PathBuf> {
    let git = workspace.join(".git");
    (git_write && std::fs::symlink_metadata(&git).is_ok_and(|m| m.is_dir()))
        .then(|| git.canonicalize().ok())
        .flatten()
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
    fn with_git_write_modules_worktrees_alternates_and_includes_stay_read_only() {
        let ws = tempfile::tempdir().unwrap();
        let w = ws.path();
        std::fs::create_dir_all(w.join(".git/modules/lib/modules/deep")).unwrap();
        std::fs::write(w.join(".git/modules/lib/HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::write(w.join(".git/modules/lib/modules/deep/HEAD"), "x\n").unwrap();
        std::fs::write(
            w.join(".git/config"),
            "[include]\n\tpath = ../tools/git.inc\n[includeIf \"gitdir:~/x/\"]\n\tpath = \"/elsewhere/c\"\n[include]\n\tpath = ~/.gitconfig.extra\n",
        )
        .unwrap();
        let paths = expand(w, ".git", true);
        for rel in [
            ".git/worktrees",
            ".git/objects/info/alternates",
            ".git/modules/lib/config",
            ".git/modules/lib/hooks",
            ".git/modules/lib/info",
            ".git/modules/lib/modules/deep/config",
            "tools/git.inc",
        ] {
            assert!(paths.contains(&w.join(rel)), "{rel}: {paths:?}");
        }
        assert!(!paths.contains(&w.join(".git")), "{paths:?}");
        assert!(!paths.contains(&w.join(".git/modules/lib")), "{paths:?}");
        assert!(
            !paths.iter().any(|p| p.starts_with("/elsewhere")),
            "{paths:?}"
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
