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
//! allow it. Nested `sub/.git` directories are not covered.
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
    for dir in dirs {
        if git_write {
            out.extend(GIT_WRITE_PROTECTED.iter().map(|name| dir.join(name)));
        } else {
            out.push(dir);
        }
    }
    out.dedup();
    out
}

/// The directory a small pointer file names (`gitdir: PATH` in a `.git` file, a bare
/// `PATH` in `commondir`), relative to `base`; `None` unless it is an existing directory
/// that does not hold `workspace` (the file's content may be a command's: a read-only
/// mount over the workspace or above would take its writes away, never give more).
fn pointed_to(file: &Path, base: &Path, prefix: &str, workspace: &Path) -> Option<PathBuf> {
    use std::io::Read;
    let mut text = String::new();
    std::fs::File::open(file)
        .ok()?
        .take(4096)
        .read_to_string(&mut text)
        .ok()?;
    let named = text.lines().next()?.strip_prefix(prefix)?.trim();
    if named.is_empty() {
        return None;
    }
    let dir = base.join(named).canonicalize().ok()?;
    let workspace = workspace.canonicalize().ok()?;
    (dir.is_dir() && !workspace.starts_with(&dir)).then_some(dir)
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
