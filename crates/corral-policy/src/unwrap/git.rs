//! Git's own ways of running commands, and of hiding its subcommand from a rule: options
//! before the subcommand (`git -C dir push`, `git --no-pager push`), an alias defined on
//! the line (`git -c alias.p=push p`, `git -c alias.x='!rm x' x`), configuration that
//! names a program (`core.pager`, `core.sshCommand`), the subcommand options that take a
//! command (`rebase --exec`, `submodule foreach`), and a subcommand run by its own
//! program's name (`git-push`, in git's `libexec`).
//!
//! Aliases from configuration files are not read here: the policy decides from the words
//! alone. (The built-in asks for what destroys work read them: see corral's
//! `gate::git_effect`.)

use super::option_commands::{line, opaque, values};
use super::step::{Inner, Step, UNKNOWN};

/// How many aliases deep a subcommand defined on the line is followed.
const ALIAS_DEPTH: usize = 8;

/// Configuration keys that name no program.
const GIT_HARMLESS: &[&str] = &[
    "user.",
    "color.",
    "advice.",
    "init.defaultbranch",
    "safe.directory",
    "core.quotepath",
    "core.autocrlf",
    "core.abbrev",
    "core.safecrlf",
    "log.date",
    "log.decorate",
    "log.abbrevcommit",
    "column.",
    "i18n.",
    "protocol.version",
    "pull.rebase",
    "pull.ff",
    "merge.conflictstyle",
    "diff.noprefix",
    "diff.renames",
    "commit.gpgsign",
    "tag.gpgsign",
    "fetch.prune",
    "http.sslverify",
    "gc.auto",
    "maintenance.auto",
];

/// `git -c KEY=VALUE` for a key that can name a program (`alias.x=!cmd`, `core.pager`,
/// `core.sshCommand`, `diff.x.textconv`, ...), `--config-env`, `--exec-path=DIR`, and the
/// subcommand options that take a command: `rebase --exec`, `grep -O`, `difftool -x`,
/// `submodule foreach`, `bisect run`, `filter-branch --*-filter`, `--upload-pack`,
/// `--receive-pack`, `archive --exec`.
///
/// And the command as a rule reads it ([`canonical`]): with options before the
/// subcommand (`git -C dir push`, `git --no-pager push`), or a subcommand that is an alias
/// the line defines (`git -c alias.p=push p`), it is also checked as `git push …`, so a
/// rule over git's words (`git push*`) holds whatever comes between `git` and them.
pub(super) fn git(args: &[String]) -> Option<Vec<Step>> {
    let mut steps = Vec::new();
    let mut aliases: Vec<(String, String)> = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        if a == "-c" || (a.starts_with("-c") && a.len() > 2 && !a.starts_with("--")) {
            let kv = if a == "-c" {
                args.get(i + 1).map_or("", String::as_str)
            } else {
                &a[2..]
            };
            let key = kv
                .split_once('=')
                .map_or(kv, |(k, _)| k)
                .to_ascii_lowercase();
            if let Some((name, value)) = kv.split_once('=')
                && let Some(name) = name.to_ascii_lowercase().strip_prefix("alias.")
            {
                aliases.push((name.to_string(), value.to_string()));
            }
            if !GIT_HARMLESS.iter().any(|h| key.starts_with(h)) {
                steps.push(opaque(
                    "git -c",
                    format!("`git -c {kv}`: configuration that can name a program to run"),
                ));
            }
            i += if a == "-c" { 2 } else { 1 };
            continue;
        }
        if a.starts_with("--config-env") || a.starts_with("--exec-path=") {
            steps.push(opaque(
                "git",
                format!("`git {a}`: configuration or programs from elsewhere"),
            ));
            i += 1;
            continue;
        }
        if a == "-C" || a == "--git-dir" || a == "--work-tree" || a == "--namespace" {
            i += 2;
            continue;
        }
        if a.starts_with('-') {
            i += 1;
            continue;
        }
        break;
    }
    let sub = args.get(i).map(String::as_str);
    let rest = args.get(i + 1..).unwrap_or(&[]);
    if let Some(sub) = sub
        && i > 0
    {
        steps.push(canonical(sub, rest, &aliases));
    }
    // A subcommand git does not have is an alias from its configuration (or a `git-SUB`
    // program): it may stand for any git command, so a rule over git's words is asked
    // about where what follows could complete it (`git pp origin` with `alias.pp = push`).
    if let Some(sub) = sub
        && !GIT_COMMANDS.contains(&sub)
        && !aliases.iter().any(|(n, _)| n.eq_ignore_ascii_case(sub))
    {
        let mut probe = vec!["git".to_string(), format!("{sub}{UNKNOWN}")];
        probe.extend(rest.iter().cloned());
        steps.push(Step::new("git alias", Inner::MoreArgs(probe)));
    }
    if let Some((plumbing, porcelain)) = sub.and_then(|s| SAME_AS.iter().find(|(p, _)| *p == s)) {
        let mut argv = vec!["git".to_string(), porcelain.to_string()];
        argv.extend(rest.iter().cloned());
        steps.push(Step::new(format!("git {plumbing}"), Inner::Argv(argv)));
    }
    let via = |s: &str| format!("git {s}");
    match sub {
        Some("rebase") => {
            for cmd in values(rest, &["exec"], &['x']) {
                steps.push(line(via("rebase --exec"), cmd));
            }
        }
        Some("grep") => {
            for cmd in values(rest, &["open-files-in-pager"], &['O']) {
                steps.push(line(via("grep -O"), cmd));
            }
        }
        Some("difftool") | Some("mergetool") => {
            for cmd in values(rest, &["extcmd"], &['x']) {
                steps.push(line(via("difftool -x"), cmd));
            }
        }
        Some("submodule") => {
            if let Some(at) = rest.iter().position(|a| a == "foreach") {
                let cmd: Vec<&str> = rest[at + 1..]
                    .iter()
                    .map(String::as_str)
                    .filter(|a| !matches!(*a, "--recursive" | "-q" | "--quiet"))
                    .collect();
                steps.push(line(via("submodule foreach"), &cmd.join(" ")));
            }
        }
        Some("bisect") if rest.first().map(String::as_str) == Some("run") && rest.len() > 1 => {
            steps.push(Step::new(
                via("bisect run"),
                Inner::Argv(rest[1..].to_vec()),
            ));
        }
        Some("filter-branch") => {
            for a in 0..rest.len() {
                if rest[a].starts_with("--")
                    && rest[a].ends_with("-filter")
                    && let Some(cmd) = rest.get(a + 1)
                {
                    steps.push(line(via("filter-branch"), cmd));
                }
            }
        }
        Some(_) => {
            for cmd in values(
                rest,
                &[
                    "upload-pack",
                    "receive-pack",
                    "exec",
                    "sendmail-cmd",
                    "to-cmd",
                ],
                &['u'],
            ) {
                steps.push(line(via("command option"), cmd));
            }
        }
        None => {}
    }
    (!steps.is_empty()).then_some(steps)
}

/// The commands git has (`git --list-cmds=main,nohelpers`, and those a build may leave
/// out): any other subcommand is an alias or a program of its own.
const GIT_COMMANDS: &[&str] = &[
    "add",
    "am",
    "annotate",
    "apply",
    "archimport",
    "archive",
    "backfill",
    "bisect",
    "blame",
    "branch",
    "bugreport",
    "bundle",
    "cat-file",
    "check-attr",
    "check-ignore",
    "check-mailmap",
    "check-ref-format",
    "checkout",
    "checkout-index",
    "cherry",
    "cherry-pick",
    "citool",
    "clean",
    "clone",
    "column",
    "commit",
    "commit-graph",
    "commit-tree",
    "config",
    "count-objects",
    "credential",
    "credential-cache",
    "credential-store",
    "cvsexportcommit",
    "cvsimport",
    "cvsserver",
    "daemon",
    "describe",
    "diagnose",
    "diff",
    "diff-files",
    "diff-index",
    "diff-pairs",
    "diff-tree",
    "difftool",
    "fast-export",
    "fast-import",
    "fetch",
    "fetch-pack",
    "filter-branch",
    "fmt-merge-msg",
    "for-each-ref",
    "for-each-repo",
    "format-patch",
    "fsck",
    "fsck-objects",
    "fsmonitor--daemon",
    "gc",
    "get-tar-commit-id",
    "grep",
    "gui",
    "hash-object",
    "help",
    "hook",
    "http-backend",
    "http-fetch",
    "http-push",
    "imap-send",
    "index-pack",
    "init",
    "init-db",
    "instaweb",
    "interpret-trailers",
    "last-modified",
    "log",
    "ls-files",
    "ls-remote",
    "ls-tree",
    "mailinfo",
    "mailsplit",
    "maintenance",
    "merge",
    "merge-base",
    "merge-file",
    "merge-index",
    "merge-octopus",
    "merge-one-file",
    "merge-ours",
    "merge-recursive",
    "merge-recursive-ours",
    "merge-recursive-theirs",
    "merge-resolve",
    "merge-subtree",
    "merge-tree",
    "mergetool",
    "mktag",
    "mktree",
    "multi-pack-index",
    "mv",
    "name-rev",
    "notes",
    "p4",
    "pack-objects",
    "pack-redundant",
    "pack-refs",
    "patch-id",
    "pickaxe",
    "prune",
    "prune-packed",
    "pull",
    "push",
    "quiltimport",
    "range-diff",
    "read-tree",
    "rebase",
    "receive-pack",
    "reflog",
    "refs",
    "remote",
    "remote-ext",
    "remote-fd",
    "remote-ftp",
    "remote-ftps",
    "remote-http",
    "remote-https",
    "repack",
    "replace",
    "replay",
    "repo",
    "request-pull",
    "rerere",
    "reset",
    "restore",
    "rev-list",
    "rev-parse",
    "revert",
    "rm",
    "send-email",
    "send-pack",
    "shell",
    "shortlog",
    "show",
    "show-branch",
    "show-index",
    "show-ref",
    "sparse-checkout",
    "stage",
    "stash",
    "status",
    "stripspace",
    "submodule",
    "svn",
    "switch",
    "symbolic-ref",
    "tag",
    "unpack-file",
    "unpack-objects",
    "update-index",
    "update-ref",
    "update-server-info",
    "upload-archive",
    "upload-pack",
    "var",
    "verify-commit",
    "verify-pack",
    "verify-tag",
    "version",
    "whatchanged",
    "worktree",
    "write-tree",
];

/// Plumbing that does what a porcelain command does, read as that command too: a rule
/// over `git push*` holds for the programs `git push` runs to push.
const SAME_AS: &[(&str, &str)] = &[("send-pack", "push"), ("http-push", "push")];

/// `git SUB REST…` as a rule reads it: the options before the subcommand left out, and an
/// alias the line defines (`-c alias.NAME=VALUE`, the last one for a name, as git takes
/// it) put in its place: a shell alias (`!cmd`) is that shell line, run with the
/// arguments after it.
fn canonical(sub: &str, rest: &[String], aliases: &[(String, String)]) -> Step {
    let mut argv: Vec<String> = vec!["git".to_string(), sub.to_string()];
    argv.extend(rest.iter().cloned());
    let mut via = "git's options";
    for _ in 0..ALIAS_DEPTH {
        let name = argv[1].to_ascii_lowercase();
        let Some((_, value)) = aliases.iter().rev().find(|(n, _)| *n == name) else {
            break;
        };
        if let Some(cmd) = value.strip_prefix('!') {
            return line("git alias", cmd);
        }
        let words: Vec<String> = value.split_whitespace().map(unquote).collect();
        if words.is_empty() {
            break;
        }
        let tail = argv.split_off(2);
        argv.truncate(1);
        argv.extend(words);
        argv.extend(tail);
        via = "git alias";
    }
    Step::new(via, Inner::Argv(argv))
}

/// A word of an alias's value without the quotes around it.
fn unquote(word: &str) -> String {
    for q in ['"', '\''] {
        if word.len() >= 2 && word.starts_with(q) && word.ends_with(q) {
            return word[1..word.len() - 1].to_string();
        }
    }
    word.to_string()
}

/// `git-SUB ARGS…` (a subcommand's own program, as git's `libexec` holds them): `git SUB
/// ARGS…`.
pub(super) fn dashed(sub: &str, args: &[String]) -> Option<Vec<Step>> {
    let mut argv = vec!["git".to_string(), sub.to_string()];
    argv.extend(args.iter().cloned());
    Some(vec![Step::new(format!("git-{sub}"), Inner::Argv(argv))])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &[&str]) -> Vec<String> {
        line.iter().map(|s| s.to_string()).collect()
    }

    /// The argv a rule reads for `git ARGS`, if it differs from the line's.
    fn read_as(args: &[&str]) -> Option<Vec<String>> {
        git(&words(args))?.into_iter().find_map(|s| match s.inner {
            Inner::Argv(argv) => Some(argv),
            _ => None,
        })
    }

    #[test]
    fn options_before_the_subcommand_are_left_out() {
        let push = Some(words(&["git", "push", "origin"]));
        for args in [
            &["-C", ".", "push", "origin"][..],
            &["--no-pager", "push", "origin"],
            &["-P", "push", "origin"],
            &["-p", "push", "origin"],
            &["--git-dir=.git", "push", "origin"],
            &["--git-dir", ".git", "--work-tree", ".", "push", "origin"],
            &[
                "--literal-pathspecs",
                "--no-optional-locks",
                "push",
                "origin",
            ],
            &["-c", "user.name=x", "push", "origin"],
            &["-C", "a", "-C", "b", "--namespace", "n", "push", "origin"],
        ] {
            assert_eq!(read_as(args), push, "{args:?}");
        }
        assert_eq!(
            read_as(&["push", "origin"]),
            None,
            "no options: nothing to add"
        );
        assert_eq!(read_as(&["--version"]), None);
    }

    #[test]
    fn an_alias_the_line_defines_is_its_value() {
        assert_eq!(
            read_as(&["-c", "alias.p=push --force", "p", "origin"]),
            Some(words(&["git", "push", "--force", "origin"]))
        );
        // The last definition wins, names are not case-sensitive, and aliases nest.
        assert_eq!(
            read_as(&[
                "-c",
                "alias.p=log",
                "-c",
                "Alias.P=q",
                "-c",
                "alias.q=push",
                "P"
            ]),
            Some(words(&["git", "push"]))
        );
        // A loop ends.
        assert!(read_as(&["-c", "alias.a=b", "-c", "alias.b=a", "a"]).is_some());
        let steps = git(&words(&["-c", "alias.x=!rm -rf x", "x", "y"])).unwrap();
        assert!(
            steps
                .iter()
                .any(|s| s.inner == Inner::Line("rm -rf x".into()) && s.via == "git alias"),
            "{steps:?}"
        );
    }

    #[test]
    fn plumbing_that_pushes_is_read_as_push() {
        for sub in ["send-pack", "http-push"] {
            let steps = git(&words(&[sub, "origin", "main"])).unwrap();
            assert!(
                steps
                    .iter()
                    .any(|s| s.inner == Inner::Argv(words(&["git", "push", "origin", "main"]))),
                "{sub}: {steps:?}"
            );
        }
        assert_eq!(git(&words(&["fetch-pack", "origin"])), None);
    }

    #[test]
    fn a_dashed_subcommand_is_git_and_its_subcommand() {
        let steps = dashed("push", &words(&["origin"])).unwrap();
        assert_eq!(
            steps[0].inner,
            Inner::Argv(words(&["git", "push", "origin"]))
        );
        assert_eq!(steps[0].via, "git-push");
    }
}
