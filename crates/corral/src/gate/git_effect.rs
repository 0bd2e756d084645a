//! What a `git` command would destroy in its work tree, told from its words as git reads
//! them: its options before the subcommand (`-C`, `-c`, `--git-dir`, `--work-tree`, `-P`,
//! `--no-pager`, …) passed over, an alias resolved (from `-c alias.NAME=…`, the
//! repository's `config` and the user's git configuration files, read as text: git itself
//! is never run), and a long option known by any unambiguous start of its name, as git
//! knows it (`--har` is `--hard`).

use std::path::{Path, PathBuf};

use crate::destructive::Loss;

/// What a git command comes to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum GitEffect {
    /// It destroys work: what, in words, and whether undo puts it back.
    Destroys(String, Loss),
    /// It runs this shell line (an alias that starts with `!`).
    Line(String),
    /// Nothing this check knows destroys work.
    Keeps,
}

/// How many aliases deep one command is followed.
const ALIAS_DEPTH: usize = 8;

/// What `argv` (a `git` command run in `cwd`, with the assignments `env` in front of it)
/// would destroy.
pub(super) fn effect(argv: &[String], env: &[(String, String)], cwd: &Path) -> GitEffect {
    let mut argv = argv.to_vec();
    let mut seen = Vec::new();
    loop {
        let parsed = Parsed::of(&argv, cwd);
        let Some(sub) = parsed.sub.clone() else {
            return GitEffect::Keeps;
        };
        if let Some(verdict) = builtin(&sub, &argv[parsed.at + 1..], &parsed.cwd) {
            return verdict;
        }
        if seen.contains(&sub) || seen.len() >= ALIAS_DEPTH {
            return GitEffect::Keeps;
        }
        let Some(alias) = alias(&sub, env, &parsed) else {
            return GitEffect::Keeps;
        };
        if let Some(line) = alias.strip_prefix('!') {
            return GitEffect::Line(line.to_string());
        }
        seen.push(sub);
        let mut next: Vec<String> = argv[..parsed.at].to_vec();
        next.extend(alias.split_whitespace().map(unquote));
        next.extend(argv[parsed.at + 1..].iter().cloned());
        argv = next;
    }
}

/// The subcommand of the git command `argv` run in `cwd`, read as git reads its options
/// before it: where it is in `argv`, its name, and where git runs (after every `-C`).
pub(crate) fn subcommand(argv: &[String], cwd: &Path) -> Option<(usize, String, PathBuf)> {
    let p = Parsed::of(argv, cwd);
    Some((p.at, p.sub?, p.cwd))
}

/// A git command's options before its subcommand.
struct Parsed {
    /// Where the subcommand is in the argv.
    at: usize,
    sub: Option<String>,
    /// Where git runs (after every `-C`).
    cwd: PathBuf,
    git_dir: Option<PathBuf>,
    /// `-c NAME=VALUE` given on the line.
    configs: Vec<String>,
}

impl Parsed {
    fn of(argv: &[String], cwd: &Path) -> Parsed {
        let mut p = Parsed {
            at: argv.len(),
            sub: None,
            cwd: cwd.to_path_buf(),
            git_dir: None,
            configs: Vec::new(),
        };
        let mut i = 1;
        while i < argv.len() {
            let a = argv[i].as_str();
            let next = argv.get(i + 1).map(String::as_str);
            match a {
                "-C" => {
                    if let Some(dir) = next {
                        p.cwd = super::lexical(&p.cwd.join(dir));
                    }
                    i += 2;
                }
                "-c" => {
                    p.configs.extend(next.map(str::to_string));
                    i += 2;
                }
                "--git-dir" => {
                    p.git_dir = next.map(|d| p.cwd.join(d));
                    i += 2;
                }
                "--work-tree" | "--namespace" | "--super-prefix" | "--config-env" => i += 2,
                _ if a.starts_with("--git-dir=") => {
                    p.git_dir = Some(p.cwd.join(&a["--git-dir=".len()..]));
                    i += 1;
                }
                _ if a.starts_with("-c") && !a.starts_with("--") => {
                    p.configs.push(a[2..].to_string());
                    i += 1;
                }
                _ if a.starts_with('-') => i += 1,
                _ => {
                    p.at = i;
                    p.sub = Some(a.to_string());
                    break;
                }
            }
        }
        p
    }
}

/// Whether `arg` is the long option `name`, written whole or by an unambiguous start
/// (two letters at least), with or without `=VALUE`.
fn long(arg: &str, name: &str) -> bool {
    let Some(given) = arg.strip_prefix("--") else {
        return false;
    };
    let given = given.split_once('=').map_or(given, |(k, _)| k);
    given == name || (given.len() >= 2 && name.starts_with(given))
}

/// Whether `arg` is a cluster of short options that holds `letter` (`-fdx`).
fn short(arg: &str, letter: char) -> bool {
    arg.len() > 1 && arg.starts_with('-') && !arg.starts_with("--") && arg[1..].contains(letter)
}

/// What a built-in subcommand `sub` with `args` destroys; `None` when `sub` is not one
/// this check knows (an alias, perhaps). Each arm is a row of [`crate::destructive::GIT`].
fn builtin(sub: &str, args: &[String], cwd: &Path) -> Option<GitEffect> {
    let any = |f: &dyn Fn(&str) -> bool| args.iter().any(|a| f(a));
    let destroys =
        |why: &str, loss: Loss| Some(GitEffect::Destroys(format!("`git {sub}` {why}"), loss));
    let force = any(&|a| short(a, 'f') || long(a, "force"));
    // Git's refs, reflogs and index: in the undo record where git may write its data, so
    // undone there (see `Loss::held`).
    let refs = Loss::Refs;
    match sub {
        "reset" if any(&|a| long(a, "hard") || long(a, "merge") || long(a, "keep")) => {
            destroys("discards uncommitted changes and moves the branch", refs)
        }
        "checkout" if force => destroys("discards uncommitted changes", Loss::Recorded),
        "checkout" if names_paths(args, cwd) => destroys(
            "puts the paths it names back as committed, discarding their changes",
            Loss::Recorded,
        ),
        "restore" => {
            let staged = any(&|a| short(a, 'S') || long(a, "staged"));
            let worktree = any(&|a| short(a, 'W') || long(a, "worktree"));
            if staged && !worktree {
                Some(GitEffect::Keeps)
            } else {
                destroys(
                    "discards the uncommitted changes of the paths it names",
                    Loss::Recorded,
                )
            }
        }
        "read-tree" if any(&|a| a == "-u") && any(&|a| long(a, "reset")) => destroys(
            "overwrites the work tree, discarding uncommitted changes",
            Loss::Recorded,
        ),
        "clean"
            if !any(&|a| {
                short(a, 'n') || long(a, "dry-run") || short(a, 'i') || long(a, "interactive")
            }) =>
        {
            if any(&|a| short(a, 'x') || short(a, 'X')) {
                destroys(
                    "deletes ignored files, which the undo record leaves out",
                    Loss::Unrecorded,
                )
            } else {
                destroys("deletes untracked files", Loss::Recorded)
            }
        }
        "stash" => match args.first().map(String::as_str) {
            Some("drop") => destroys("deletes a stash", refs),
            Some("clear") => destroys("deletes every stash", refs),
            _ => Some(GitEffect::Keeps),
        },
        "switch" if force || any(&|a| long(a, "discard-changes")) => {
            destroys("discards uncommitted changes", Loss::Recorded)
        }
        "checkout-index" if force => {
            destroys("overwrites files, discarding their changes", Loss::Recorded)
        }
        "rm" if force && !any(&|a| long(a, "cached")) => destroys(
            "removes files whatever their uncommitted changes",
            Loss::Recorded,
        ),
        "branch"
            if any(&|a| a == "-D") || (force && any(&|a| short(a, 'd') || long(a, "delete"))) =>
        {
            destroys("deletes a branch whatever its merge state", refs)
        }
        "reflog" if args.first().is_some_and(|a| a == "expire" || a == "delete") => destroys(
            "drops the record that lets lost commits be found",
            Loss::Unrecorded,
        ),
        "gc" if any(&|a| a == "--prune=now" || a == "--prune=all") => {
            destroys("deletes unreachable commits now", Loss::Unrecorded)
        }
        "prune" => destroys("deletes unreachable commits now", Loss::Unrecorded),
        "update-ref" if any(&|a| a == "-d") => destroys("deletes a ref", refs),
        "filter-branch" => destroys("rewrites history", refs),
        // It expires the reflogs and prunes what is unreachable when it is done.
        "filter-repo" => destroys(
            "rewrites history and drops the reflogs and unreachable objects",
            Loss::Unrecorded,
        ),
        "push" => push(args),
        _ if KNOWN.contains(&sub) => Some(GitEffect::Keeps),
        _ => None,
    }
}

/// What a `git push` with `args` destroys on the remote: a forced update (`--force`,
/// `-f`, `--force-with-lease`, `+REFSPEC`), a deletion (`--delete`, `-d`, `:REF`), a
/// mirror.
fn push(args: &[String]) -> Option<GitEffect> {
    let mut operands = 0;
    for a in args {
        let why = if short(a, 'f')
            || long(a, "force")
            || long(a, "force-with-lease")
            || long(a, "force-if-includes")
        {
            "rewrites the remote's history"
        } else if long(a, "mirror") {
            "rewrites the remote's refs"
        } else if short(a, 'd') || long(a, "delete") {
            "deletes remote refs"
        } else if a.starts_with('-') {
            continue;
        } else {
            operands += 1;
            // The first operand is the remote; the rest are refspecs.
            match a.chars().next() {
                Some('+') if operands > 1 => "rewrites the remote's history",
                Some(':') if operands > 1 => "deletes remote refs",
                _ => continue,
            }
        };
        return Some(GitEffect::Destroys(
            format!("`git push` {why}"),
            Loss::Remote,
        ));
    }
    Some(GitEffect::Keeps)
}

/// Subcommands git has of its own, which an alias cannot replace: the rest (besides
/// those [`builtin`] names) are looked up as aliases.
const KNOWN: &[&str] = &[
    "add",
    "am",
    "apply",
    "bisect",
    "blame",
    "branch",
    "checkout",
    "cherry-pick",
    "clone",
    "commit",
    "config",
    "describe",
    "diff",
    "fetch",
    "format-patch",
    "gc",
    "grep",
    "init",
    "log",
    "ls-files",
    "merge",
    "mv",
    "prune",
    "pull",
    "push",
    "rebase",
    "reflog",
    "remote",
    "reset",
    "restore",
    "revert",
    "rev-parse",
    "rm",
    "show",
    "stash",
    "status",
    "switch",
    "tag",
    "worktree",
];

/// Whether a `checkout`'s arguments name paths (rather than only a branch to switch to):
/// anything after `--`, or an argument that is a path in `cwd` or a pattern.
fn names_paths(args: &[String], cwd: &Path) -> bool {
    if let Some(dashes) = args.iter().position(|a| a == "--") {
        return dashes + 1 < args.len();
    }
    args.iter().filter(|a| !a.starts_with('-')).any(|a| {
        a.contains(['*', '?', '[']) || a.starts_with(":/") || cwd.join(a).symlink_metadata().is_ok()
    })
}

/// The alias `name`, as git would find it: `-c alias.NAME=…` on the line, then
/// `GIT_CONFIG_KEY_n`/`GIT_CONFIG_VALUE_n` in `env`, then the repository's `config`, the
/// user's, the system's (the last one read that sets it wins, as in git).
fn alias(name: &str, env: &[(String, String)], p: &Parsed) -> Option<String> {
    let key = format!("alias.{}", name.to_ascii_lowercase());
    let from_line = |kv: &String| {
        let (k, v) = kv.split_once('=')?;
        (k.to_ascii_lowercase() == key).then(|| v.to_string())
    };
    if let Some(v) = p.configs.iter().rev().find_map(from_line) {
        return Some(v);
    }
    let var = |n: &str| {
        env.iter()
            .rev()
            .find(|(k, _)| k == n)
            .map(|(_, v)| v.clone())
    };
    if let Some(count) = var("GIT_CONFIG_COUNT").and_then(|c| c.parse::<usize>().ok()) {
        for n in (0..count).rev() {
            if var(&format!("GIT_CONFIG_KEY_{n}")).is_some_and(|k| k.to_ascii_lowercase() == key) {
                return var(&format!("GIT_CONFIG_VALUE_{n}"));
            }
        }
    }
    let mut files = Vec::new();
    files.push(Path::new("/etc/gitconfig").to_path_buf());
    let home = std::env::var_os("HOME").map(PathBuf::from);
    match std::env::var_os("XDG_CONFIG_HOME") {
        Some(xdg) => files.push(PathBuf::from(xdg).join("git/config")),
        None => files.extend(home.as_ref().map(|h| h.join(".config/git/config"))),
    }
    files.extend(home.map(|h| h.join(".gitconfig")));
    files.extend(git_dir(p).map(|d| d.join("config")));
    files.iter().rev().find_map(|f| {
        std::fs::read_to_string(f)
            .ok()
            .and_then(|t| in_config(&t, name))
    })
}

/// The repository's git directory: `--git-dir`, else the `.git` of `cwd` or of the
/// nearest directory above it that has one (a `.git` file names it: `gitdir: …`).
fn git_dir(p: &Parsed) -> Option<PathBuf> {
    if let Some(dir) = &p.git_dir {
        return Some(dir.clone());
    }
    let mut dir = Some(p.cwd.as_path());
    while let Some(d) = dir {
        let git = d.join(".git");
        if git.is_dir() {
            return Some(git);
        }
        if let Ok(text) = std::fs::read_to_string(&git)
            && let Some(to) = text.trim().strip_prefix("gitdir:")
        {
            return Some(d.join(to.trim()));
        }
        dir = d.parent();
    }
    None
}

/// The last value of `alias.NAME` in the git configuration text `text`.
fn in_config(text: &str, name: &str) -> Option<String> {
    let mut in_alias = false;
    let mut found = None;
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let mut line = line.trim().to_string();
        while line.ends_with('\\') {
            line.pop();
            match lines.next() {
                Some(more) => line.push_str(more),
                None => break,
            }
        }
        if line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(section) = line.strip_prefix('[') {
            let section = section.split([']', ' ', '"']).next().unwrap_or("");
            in_alias = section.eq_ignore_ascii_case("alias");
            continue;
        }
        if !in_alias {
            continue;
        }
        if let Some((k, v)) = line.split_once('=')
            && k.trim().eq_ignore_ascii_case(name)
        {
            found = Some(unquote(v.trim()));
        }
    }
    found
}

/// A word without the double or single quotes around it.
fn unquote(word: &str) -> String {
    let w = word.trim();
    for q in ['"', '\''] {
        if w.len() >= 2 && w.starts_with(q) && w.ends_with(q) {
            return w[1..w.len() - 1].to_string();
        }
    }
    w.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(line: &[&str], cwd: &Path) -> GitEffect {
        let argv: Vec<String> = line.iter().map(|s| s.to_string()).collect();
        effect(&argv, &[], cwd)
    }

    fn destroys(line: &[&str], cwd: &Path) -> bool {
        matches!(of(line, cwd), GitEffect::Destroys(..))
    }

    #[test]
    fn spellings_that_destroy_work_are_told_by_effect() {
        let ws = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(ws.path().join(".git")).unwrap();
        std::fs::create_dir_all(ws.path().join("src")).unwrap();
        std::fs::write(
            ws.path().join(".git/config"),
            "[core]\n\tbare = false\n[alias]\n\tnuke = reset --hard\n\twipe = \"!rm -rf src\"\n",
        )
        .unwrap();
        let cwd = ws.path();
        for line in [
            &["git", "reset", "--har"][..],
            &["git", "-P", "reset", "--hard"],
            &["git", "--no-pager", "reset", "--hard"],
            &["git", "--git-dir=.git", "--work-tree=.", "reset", "--hard"],
            &["git", "-C", "src", "reset", "--hard"],
            &["git", "checkout", "HEAD", "--", "."],
            &["git", "checkout", "--", "*"],
            &["git", "checkout", "--", "src"],
            &["git", "checkout", "src"],
            &["git", "restore", "*"],
            &[
                "git",
                "restore",
                "--source=HEAD",
                "--staged",
                "--worktree",
                "x",
            ],
            &["git", "read-tree", "-u", "--reset", "HEAD"],
            &["git", "clean", "-fdx"],
            &["git", "stash", "drop"],
            &["git", "nuke"],
            &["git", "-c", "alias.zap=checkout -f", "zap"],
        ] {
            assert!(destroys(line, cwd), "{line:?}");
        }
        assert_eq!(
            of(&["git", "wipe"], cwd),
            GitEffect::Line("rm -rf src".into())
        );
        for line in [
            &["git", "status"][..],
            &["git", "reset", "HEAD", "a.txt"],
            &["git", "clean", "-n"],
            &["git", "checkout", "main"],
            &["git", "restore", "--staged", "x"],
            &["git", "stash"],
            &["git", "commit", "-m", "reset --hard"],
        ] {
            assert!(!destroys(line, cwd), "{line:?}");
        }
    }
}
