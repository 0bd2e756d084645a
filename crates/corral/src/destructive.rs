//! The built-in asks for what destroys work **inside** the sandbox: the box keeps a command
//! from writing outside the workspace, not from wiping the workspace or its history.
//!
//! They are ordinary exec rules with effect `ask` in one layer, [`LAYER`], with origin
//! `builtin`, so everything the policy does for a rule holds for them: they are checked
//! through wrappers (`env git reset --hard`, `bash -c 'git reset --hard'`, `sudo`,
//! `xargs`, …), an `allow` in another layer does not lift them (ask beats allow), and
//! `corral policy show --surface mcp` lists them. `corral mcp` adds them on its default
//! posture; to run one without being asked, a person approves it when asked.
//!
//! Patterns are globs over the joined argv (see [`crate::policy`]); `*` crosses spaces, so
//! `git reset*--hard*` holds for `git reset -q --hard HEAD~1`. What they do not see: a
//! command inside a line the grammar cannot parse, or an inline program
//! (`python3 -c 'shutil.rmtree(".")'`); the sandbox still keeps those inside the workspace.
//!
//! | pattern | why |
//! |---|---|
#![doc = include_str!("destructive_table.md")]

use std::path::Path;

use corral_policy::{Act, Effect, Layer, Origin, Rule};

/// The layer the built-in asks live in.
pub const LAYER: &str = "built-in: destroys work";

/// Where git takes options before its subcommand: `git -C dir …`, `git -c k=v …`.
const GIT_PREFIXES: &str = "git{, -C *, -c *} ";

/// Git subcommands that throw away work: (pattern after `git `, why).
pub const GIT: &[(&str, &str)] = &[
    ("reset*--hard*", "discards uncommitted changes"),
    ("reset*--merge*", "discards uncommitted changes"),
    ("clean* -*f*", "deletes untracked files"),
    ("clean*--force*", "deletes untracked files"),
    (
        "checkout {.,./,:/,-- .,-- ./,-- :/}",
        "discards every uncommitted change",
    ),
    ("checkout* -f*", "discards uncommitted changes"),
    ("checkout*--force*", "discards uncommitted changes"),
    ("restore* {.,./,:/}", "discards every uncommitted change"),
    ("switch*--discard-changes*", "discards uncommitted changes"),
    ("switch*--force*", "discards uncommitted changes"),
    ("stash drop*", "deletes a stash"),
    ("stash clear*", "deletes every stash"),
    ("branch* -D *", "deletes a branch whatever its merge state"),
    ("push*--force*", "rewrites the remote's history"),
    ("push* -f*", "rewrites the remote's history"),
    ("push* +*", "rewrites the remote's history"),
    ("push*--mirror*", "rewrites the remote's refs"),
    ("push*--delete*", "deletes remote refs"),
    ("filter-branch*", "rewrites history"),
    ("filter-repo*", "rewrites history"),
    (
        "reflog expire*",
        "drops the record that lets lost commits be found",
    ),
    ("gc*--prune=now*", "deletes unreachable commits now"),
    ("update-ref -d*", "deletes a ref"),
];

/// `rm` targets that are the workspace, its parent, its history, home or the root:
/// matched after any flags (`rm -rf .`, `rm -r -f -- ..`).
pub const RM_TARGETS: &str = "{.,./,..,../,/,~,~/,[*],./[*],.git,.git/,./.git}";

/// Directories at the top of a workspace that are build output or caches, so removing one
/// is routine (`rm -rf target`); any other top-level directory is a large part of the work.
pub const GENERATED: &[&str] = &[
    "target",
    "node_modules",
    "build",
    "dist",
    "out",
    "bin",
    "obj",
    "coverage",
    "tmp",
    ".venv",
    "venv",
    ".tox",
    ".nox",
    "__pycache__",
    ".pytest_cache",
    ".mypy_cache",
    ".ruff_cache",
    ".cache",
    ".next",
    ".nuxt",
    ".turbo",
    ".parcel-cache",
    ".gradle",
    ".terraform",
    "_build",
    "zig-cache",
    "zig-out",
];

fn rule(pattern: &str) -> Rule {
    Rule::new(Act::Exec, pattern, Effect::Ask, Origin::Builtin)
        .unwrap_or_else(|e| panic!("built-in pattern {pattern:?}: {e}"))
}

/// `text` with glob characters made literal.
fn literal(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '{' | '}' | ',') {
            out.push('[');
            out.push(c);
            out.push(']');
        } else {
            out.push(c);
        }
    }
    out
}

/// The built-in asks for `workspace`: the fixed table, `rm` of the workspace by its path,
/// and `rm` of any top-level directory it holds now that is not build output.
pub fn layer(workspace: &Path) -> Layer {
    let mut layer = Layer::new(LAYER);
    for (pattern, _) in GIT {
        layer.push(rule(&format!("{GIT_PREFIXES}{pattern}")));
    }
    let ws = literal(&workspace.display().to_string());
    let mut targets = vec![ws.clone(), format!("{ws}/"), format!("{ws}/[*]")];
    if let Ok(entries) = std::fs::read_dir(workspace) {
        let mut names: Vec<String> = entries
            .flatten()
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n != ".git" && !GENERATED.contains(&n.as_str()))
            .collect();
        names.sort();
        for name in names {
            let name = literal(&name);
            targets.extend([
                name.clone(),
                format!("{name}/"),
                format!("./{name}"),
                format!("./{name}/"),
                format!("{ws}/{name}"),
                format!("{ws}/{name}/"),
            ]);
        }
    }
    let workspace_targets = format!("{{{}}}", targets.join(","));
    for targets in [RM_TARGETS, workspace_targets.as_str()] {
        layer.push(rule(&format!("rm * {targets}")));
        layer.push(rule(&format!("rm * {targets} *")));
    }
    layer
}

#[cfg(test)]
mod tests {
    use super::*;
    use corral_policy::Policy;

    fn policy(ws: &Path) -> Policy {
        Policy::permissive().with_layer(layer(ws))
    }

    fn effect(p: &Policy, argv: &[&str]) -> Effect {
        let argv: Vec<String> = argv.iter().map(|s| s.to_string()).collect();
        p.check_command(&corral_policy::CommandCheck {
            argv: &argv,
            program_path: None,
        })
        .effect
    }

    #[test]
    fn what_destroys_work_is_asked_about_through_wrappers() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("src")).unwrap();
        std::fs::create_dir(dir.path().join("target")).unwrap();
        let p = policy(dir.path());
        let ws = dir.path().display().to_string();
        for argv in [
            &["git", "reset", "--hard"][..],
            &["git", "reset", "-q", "--hard", "HEAD~1"],
            &["git", "-C", "sub", "reset", "--hard"],
            &["env", "git", "reset", "--hard"],
            &["bash", "-c", "git reset --hard"],
            &["git", "clean", "-fdx"],
            &["git", "checkout", "--", "."],
            &["git", "push", "--force", "origin", "main"],
            &["git", "push", "origin", "+main"],
            &["rm", "-rf", "."],
            &["rm", "-r", "-f", "--", ".."],
            &["rm", "-rf", "*"],
            &["rm", "-rf", "src"],
            &["rm", "-rf", "./src/"],
            &["rm", "-rf", &ws],
            &["sudo", "rm", "-rf", "/"],
            &["bash", "-c", "rm -rf ~"],
        ] {
            assert_eq!(effect(&p, argv), Effect::Ask, "{argv:?}");
        }
    }

    #[test]
    fn routine_commands_are_not() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("src")).unwrap();
        std::fs::create_dir(dir.path().join("target")).unwrap();
        let p = policy(dir.path());
        for argv in [
            &["git", "status"][..],
            &["git", "reset", "HEAD", "a.txt"],
            &["git", "clean", "-n"],
            &["git", "checkout", "main"],
            &["git", "push", "origin", "main"],
            &["git", "commit", "-m", "fix the build"],
            &["rm", "-rf", "target"],
            &["rm", "-f", "src/a.o"],
            &["rm", "-rf", "src/generated"],
            &["rm", "scratch.txt"],
        ] {
            assert_eq!(effect(&p, argv), Effect::Allow, "{argv:?}");
        }
    }

    #[test]
    fn the_table_in_the_docs_is_the_table_in_the_code() {
        let doc = include_str!("destructive_table.md");
        for (pattern, why) in GIT {
            let row = format!("| `git {pattern}` | {why} |");
            assert!(doc.contains(&row), "missing row: {row}");
        }
        assert!(doc.contains(RM_TARGETS));
    }
}
