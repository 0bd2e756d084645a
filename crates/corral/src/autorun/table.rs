//! The files host programs run or trust on their own, by path in a workspace: the one
//! table of them (`docs/sandbox.md` shows it). Each row is a file that names a program
//! for a host tool to run (a hook, a wrapper, a toolchain path, a task or server
//! command) and says which tool runs it. What derives it: each tool's documentation of
//! the files it reads from a project on its own (on opening the folder, on every
//! command, or before a commit); a test per row writes it in a box and checks the host
//! keeps the person's version.
//!
//! Why a table and not a mechanism: nothing on disk marks a file as one a host tool
//! will run (it is read by name, by a program outside the box, at a time of its own),
//! so no kernel feature or descriptor can tell the class apart. What is derived rather
//! than listed is derived: the directory each repository's `core.hooksPath` names, and
//! a nested repository's config and hooks by what they set. A row the table lacks is
//! still confined to the workspace, and its change is undone by `corral undo`.

/// What a row names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// A file at this path.
    File,
    /// A directory at this path: every file below it.
    Dir,
    /// Files whose names match a pattern (`*` only) in the directory the path names
    /// (`.github/copilot*`, `*.code-workspace`).
    Pattern,
}

/// What the box does with a row's path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Treatment {
    /// A call may write it as it writes anything else; the workspace keeps the person's
    /// version and the change waits for a person (`corral review`).
    Held,
    /// Read-only in the box (git's metadata, corral's own configuration): see
    /// `config::git_dir` and the protected paths.
    ReadOnly,
    /// Named in the result when a call changes it, not held: its tool asks the person
    /// by the file's hash before it runs anything (`direnv allow`, `mise trust`).
    Reported,
}

/// One row of the table.
#[derive(Debug, Clone, Copy)]
pub struct Row {
    /// The path relative to the workspace root.
    pub path: &'static str,
    /// A file, a directory or a pattern of names.
    pub shape: Shape,
    /// Which host program runs it, and how.
    pub runs: &'static str,
    /// What the box does with it.
    pub treatment: Treatment,
}

const fn held(path: &'static str, shape: Shape, runs: &'static str) -> Row {
    Row {
        path,
        shape,
        runs,
        treatment: Treatment::Held,
    }
}

/// Every row. The directory a repository's `core.hooksPath` names is one more, found
/// from its configuration (see [`super::hooks_path`]); nested `.git` directories are
/// checked by what their `config` sets (see `super::nested_git`).
pub const ROWS: &[Row] = &[
    held(
        ".claude/settings.json",
        Shape::File,
        "Claude Code: its permissions and the hooks it runs",
    ),
    held(
        ".claude/settings.local.json",
        Shape::File,
        "Claude Code: its permissions and the hooks it runs",
    ),
    held(".claude/hooks", Shape::Dir, "Claude Code: hook scripts"),
    held(
        ".mcp.json",
        Shape::File,
        "MCP clients (Claude Code, Cursor): each server is a command they start",
    ),
    held(
        ".codex",
        Shape::Dir,
        "Codex: its configuration (MCP servers, sandbox, approvals)",
    ),
    held(
        ".cursor",
        Shape::Dir,
        "Cursor: its MCP servers, hooks and rules",
    ),
    held(
        ".gemini/settings.json",
        Shape::File,
        "Gemini CLI: its MCP servers and tools",
    ),
    held(
        ".github/copilot*",
        Shape::Pattern,
        "GitHub Copilot: its instructions and setup steps",
    ),
    held(
        ".vscode/tasks.json",
        Shape::File,
        "VS Code: tasks, some run on opening the folder",
    ),
    held(
        ".vscode/settings.json",
        Shape::File,
        "VS Code: the programs its extensions start",
    ),
    held(
        ".vscode/launch.json",
        Shape::File,
        "VS Code: debug launch commands",
    ),
    held(
        "*.code-workspace",
        Shape::Pattern,
        "VS Code: a workspace's tasks and settings",
    ),
    held(
        ".idea/runConfigurations",
        Shape::Dir,
        "JetBrains IDEs: run configurations",
    ),
    held(
        ".idea/workspace.xml",
        Shape::File,
        "JetBrains IDEs: run configurations",
    ),
    held(".zed/tasks.json", Shape::File, "Zed: tasks"),
    held(
        ".zed/settings.json",
        Shape::File,
        "Zed: the language servers it starts",
    ),
    held(
        ".devcontainer/devcontainer.json",
        Shape::File,
        "Dev Containers: `initializeCommand` runs on the host",
    ),
    held(
        ".devcontainer.json",
        Shape::File,
        "Dev Containers: `initializeCommand` runs on the host",
    ),
    held(
        ".husky",
        Shape::Dir,
        "husky: the git hooks `git commit` runs",
    ),
    held(
        "lefthook.yml",
        Shape::File,
        "lefthook: the git hooks `git commit` runs",
    ),
    held(
        ".lefthook.yml",
        Shape::File,
        "lefthook: the git hooks `git commit` runs",
    ),
    held(
        ".pre-commit-config.yaml",
        Shape::File,
        "pre-commit: the git hooks `git commit` runs",
    ),
    held(
        ".cargo/config.toml",
        Shape::File,
        "cargo and rust-analyzer (on opening): rustc wrappers, runners, aliases, env",
    ),
    held(
        ".cargo/config",
        Shape::File,
        "cargo and rust-analyzer (on opening): rustc wrappers, runners, aliases, env",
    ),
    held(
        "rust-toolchain.toml",
        Shape::File,
        "rustup: `path` names a toolchain every cargo runs",
    ),
    held(
        "rust-toolchain",
        Shape::File,
        "rustup: `path` names a toolchain every cargo runs",
    ),
    held(
        ".yarnrc.yml",
        Shape::File,
        "yarn: `yarnPath` runs for every yarn",
    ),
    held(
        ".npmrc",
        Shape::File,
        "npm: `script-shell`, `node-options` and `git` name programs it runs",
    ),
    Row {
        path: ".git",
        shape: Shape::Dir,
        runs: "git: hooks, `core.fsmonitor`, filters and aliases in its metadata",
        treatment: Treatment::ReadOnly,
    },
    Row {
        path: "corral.toml",
        shape: Shape::File,
        runs: "corral: its policy, trusted by hash",
        treatment: Treatment::ReadOnly,
    },
    Row {
        path: ".corral",
        shape: Shape::Dir,
        runs: "corral: its policy files, trusted by hash",
        treatment: Treatment::ReadOnly,
    },
    Row {
        path: ".envrc",
        shape: Shape::File,
        runs: "direnv: runs once `direnv allow` approved this content",
        treatment: Treatment::Reported,
    },
    Row {
        path: "mise.toml",
        shape: Shape::File,
        runs: "mise: runs once `mise trust` approved this content",
        treatment: Treatment::Reported,
    },
];

/// Whether `name` matches `pattern`, whose `*`s stand for any run of characters.
pub(crate) fn matches(pattern: &str, name: &str) -> bool {
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or_default();
    let Some(mut rest) = name.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    for (i, part) in parts.iter().enumerate() {
        if i + 1 == parts.len() {
            return rest.len() >= part.len() && rest.ends_with(part);
        }
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_match_as_a_shell_does() {
        assert!(matches("copilot*", "copilot-instructions.md"));
        assert!(matches("*.code-workspace", "app.code-workspace"));
        assert!(!matches("*.code-workspace", "app.code-workspace.bak"));
        assert!(!matches("copilot*", "xcopilot"));
        assert!(matches("a*b*c", "aXbYc"));
        assert!(!matches("a*b*c", "aXbY"));
    }

    #[test]
    fn every_row_is_a_relative_path_named_once() {
        for (i, row) in ROWS.iter().enumerate() {
            assert!(
                !row.path.starts_with('/') && !row.path.contains(".."),
                "{row:?}"
            );
            assert!(!row.runs.is_empty(), "{row:?}");
            assert!(
                ROWS[..i].iter().all(|r| r.path != row.path),
                "{} twice",
                row.path
            );
        }
    }
}
