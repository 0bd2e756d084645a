//! Known-safe commands: read-only programs with arguments that keep them
//! read-only. Used by [`crate::ApprovalMode::UnlessTrusted`] to run what a
//! default would otherwise have asked about. Unknown means not safe.
//!
//! `argv[0]` must be a bare name (found on `PATH`) or an absolute path in a
//! system directory (`/bin`, `/usr/bin`, `/usr/local/bin`, `/sbin`,
//! `/usr/sbin`, `/opt/homebrew/bin`): `./ls` is not known to be anything.
//!
//! | program | safe when |
//! |---|---|
//! | `ls` `cat` `head` `tail` `wc` `grep` `egrep` `fgrep` `echo` `printf` `pwd` `true` `false` `which` `whoami` `id` `uname` `stat` `du` `df` `cmp` `cut` `tr` `nl` `basename` `dirname` `realpath` `readlink` `printenv` `seq` `jq` | always (`tail -f` too: read-only, it just does not end). Each was checked for an option that runs a program or writes a file: none has one (`jq -L` loads jq modules, which are jq, not programs) |
//! | `diff` | no `-l`/`--paginate` (runs `pr`) |
//! | `ag` | no `--pager` (runs a program) |
//! | `rg` | no `--pre` (a program per file), `--hostname-bin` (a program), `-z`/`--search-zip` (decompressors found on `PATH`) |
//! | `date` | no `-s`/`--set` (sets the clock) |
//! | `hostname` | no arguments, or only `-f -s -i -I -d -A` and long forms |
//! | `file` | no `-C`/`--compile` (writes a magic file), no `-z`/`-Z` (decompressors found on `PATH`) |
//! | `tree` | no `-o` (writes a file) |
//! | `sort` | no `-o`/`--output` (writes), no `--compress-program` (runs a program) |
//! | `uniq` | at most one file operand (a second is written) |
//! | `env` | no arguments (prints the environment) |
//! | `find` | none of `-exec -execdir -ok -okdir -delete -fprint -fprint0 -fprintf -fls` |
//! | `sed` | no `-i`/`--in-place`, no `-f`, and every script command is one of `p d q Q = n N P D g G h H x l { }` or `s`/`y` with flags only from `g p i I m M` and digits (so no `w`, `e`, `r`); a script the check cannot split cleanly is not safe |
//! | `git rev-parse ls-tree merge-base` | global options only `--no-pager -P -C DIR --no-optional-locks --literal-pathspecs --no-replace-objects` |
//! | `git cat-file` | as above, and no `--textconv`, `--filters`, `--batch*` |
//! | `git branch` | listing only: no create/delete/move/copy/upstream options, no `--format`, and no operand unless `-l`/`--list` |
//! | `git tag` | no arguments, or `-l`/`--list` without creating, deleting, verifying or `--format` options |
//! | `git remote` | no arguments, `-v`, or `get-url` |
//! | `git config` | only reading options (`--get*`, `--list`, `--show-origin`, scopes, types), at most two operands |
//! | `git --version` | always |
//! | `python python3 node npm npx deno bun gcc g++ clang make cmake git pip pip3 ruby perl java javac tsc` | exactly `--version` |
//! | `env` `nice` `timeout` `stdbuf` `command` + a command | the inner command is safe; `env` assigns no variable of [`crate::envvars`] and has no `-S` |
//! | `sh -c` `bash -c` ... LINE | every stage of LINE is safe, assigns no variable of [`crate::envvars`], and no stage writes through a redirect; a `zsh` line has no word starting with `=` |
//!
//! Not known-safe, by review:
//!
//! - `git status diff show log blame grep describe shortlog rev-list ls-files stash`:
//!   they run programs the repository's or user's configuration names
//!   (`core.fsmonitor`, hooks such as `post-index-change`, `diff.external`,
//!   diff drivers and `textconv` selected by `.gitattributes`, clean
//!   filters, `gpg.program` through `log.showSignature`). Overrides in the
//!   environment (`GIT_CONFIG_COUNT`) cannot name drivers they do not know,
//!   and `.git/info/attributes` cannot be switched off, so these are asked
//!   about unless a rule allows them.
//! - `cargo rustc rustup --version`: a `rust-toolchain.toml` in the working
//!   directory can name a toolchain `path`, whose programs then run.
//!   `yarn pnpm --version`: `.yarnrc.yml`'s `yarnPath` and corepack's
//!   `packageManager` run or fetch another program. `go version`: `go.mod`'s
//!   `toolchain` line fetches and runs another go.
//! - `less` `more` `man` (they run `LESSOPEN`, `!command`, `MANPAGER`, and
//!   need a terminal), `awk` (`system()`), `xargs`, `tar`, `sudo`, `nohup`,
//!   `time` (`-o`): never on the list.
//! - A program named by a bare name that the caller resolved outside the
//!   system directories (a `.venv/bin/python` first on `PATH`): see
//!   [`crate::Policy::check_simple`].
//!
//! Not wrappers here: `xargs` (arguments from stdin are appended, and
//! GNU tools accept options after operands, so `xargs sed` could become
//! `sed ... -i`), `sudo`, `nohup` (may create `nohup.out`), `time` (`-o`).
//!

use std::borrow::Cow;

use corral_line::{Command, RedirectOp};

use crate::envvars;
use crate::unwrap::MAX_DEPTH;
use crate::unwrap::shells::{ShellRun, is_shell, shell_run};

/// Whether `argv` is on the built-in list of read-only commands (see the
/// module docs for the table).
pub fn is_known_safe<S: AsRef<str>>(argv: &[S]) -> bool {
    why_not_safe(argv).is_none()
}

/// Why `argv` is not on the list: the program, flag, variable or redirect
/// that keeps it off; `None` when it is known-safe.
pub fn why_not_safe<S: AsRef<str>>(argv: &[S]) -> Option<String> {
    let argv: Vec<&str> = argv.iter().map(AsRef::as_ref).collect();
    safe(&argv, 0).err().map(Cow::into_owned)
}

/// `Ok` when safe, else why not.
type Safe = Result<(), Cow<'static, str>>;

fn no(why: impl Into<Cow<'static, str>>) -> Safe {
    Err(why.into())
}

fn unless(cond: bool, why: impl Into<Cow<'static, str>>) -> Safe {
    if cond { no(why) } else { Ok(()) }
}

const SYSTEM_DIRS: &[&str] = &[
    "/bin/",
    "/usr/bin/",
    "/usr/local/bin/",
    "/sbin/",
    "/usr/sbin/",
    "/opt/homebrew/bin/",
];

/// Whether `path` is a program directly in a system directory.
pub(crate) fn in_system_dir(path: &str) -> bool {
    SYSTEM_DIRS
        .iter()
        .find_map(|d| path.strip_prefix(d))
        .is_some_and(|rest| !rest.contains('/') && !rest.is_empty())
}

fn program_name(argv0: &str) -> Option<&str> {
    if !argv0.contains('/') {
        return Some(argv0);
    }
    SYSTEM_DIRS
        .iter()
        .find_map(|d| argv0.strip_prefix(d))
        .filter(|rest| !rest.contains('/') && !rest.is_empty())
}

fn has(args: &[&str], any: &[&str]) -> bool {
    args.iter().any(|a| any.contains(a))
}

/// A long option (`--name` or `--name=value`) that is `long` or, as GNU
/// getopt accepts, an abbreviation of it (`--comp` for
/// `--compress-program`).
fn long_option(args: &[&str], long: &[&str]) -> Option<String> {
    args.iter().find_map(|a| {
        let name = a.strip_prefix("--")?;
        let name = name.split_once('=').map_or(name, |(n, _)| n);
        (!name.is_empty() && long.iter().any(|l| l.starts_with(name))).then(|| a.to_string())
    })
}

/// A short option letter in a cluster (`-iz`), stopping at the first letter
/// in `valued` (whose value is the rest of the word).
fn short_option(args: &[&str], c: char, valued: &str) -> bool {
    args.iter().any(|a| {
        if a.len() < 2 || !a.starts_with('-') || a.starts_with("--") {
            return false;
        }
        for ch in a[1..].chars() {
            if ch == c {
                return true;
            }
            if valued.contains(ch) {
                return false;
            }
        }
        false
    })
}

/// Refuse if the short option `c` or a long option in `long` is given.
fn forbid(args: &[&str], short: &[char], valued: &str, long: &[&str], what: &str) -> Safe {
    for &c in short {
        if short_option(args, c, valued) {
            return no(format!("-{c}: {what}"));
        }
    }
    match long_option(args, long) {
        Some(a) => no(format!("{a}: {what}")),
        None => Ok(()),
    }
}

const ALWAYS: &[&str] = &[
    "ls", "cat", "head", "tail", "wc", "grep", "egrep", "fgrep", "echo", "printf", "pwd", "true",
    "false", "which", "whoami", "id", "uname", "stat", "du", "df", "cmp", "cut", "tr", "nl",
    "basename", "dirname", "realpath", "readlink", "printenv", "seq", "jq",
];

const VERSIONED: &[&str] = &[
    "python", "python3", "node", "npm", "npx", "deno", "bun", "gcc", "g++", "clang", "make",
    "cmake", "git", "pip", "pip3", "ruby", "perl", "java", "javac", "tsc",
];

fn safe(argv: &[&str], depth: usize) -> Safe {
    if depth > MAX_DEPTH {
        return no("nested too deep to tell");
    }
    let Some((first, args)) = argv.split_first() else {
        return no("no command");
    };
    let Some(name) = program_name(first) else {
        return no(format!(
            "{first} is not a program in a system directory, so it is not known to be anything"
        ));
    };
    if args == ["--version"] && VERSIONED.contains(&name) {
        return Ok(());
    }
    if ALWAYS.contains(&name) {
        return Ok(());
    }
    match name {
        "diff" => forbid(args, &['l'], "", &["paginate"], "runs `pr`"),
        "ag" => forbid(args, &[], "", &["pager"], "runs a program"),
        "rg" => {
            forbid(args, &[], "", &["pre"], "runs a program on every file")?;
            forbid(args, &[], "", &["hostname-bin"], "runs a program")?;
            forbid(
                args,
                &['z'],
                "efgmMrtTEABCjd",
                &["search-zip"],
                "runs decompression programs found on PATH",
            )
        }
        "date" => forbid(args, &['s'], "dfrI", &["set"], "sets the clock"),
        "hostname" => unless(
            !args.iter().all(|a| {
                [
                    "-f",
                    "-s",
                    "-i",
                    "-I",
                    "-d",
                    "-A",
                    "--fqdn",
                    "--long",
                    "--short",
                    "--domain",
                    "--ip-address",
                    "--all-ip-addresses",
                    "--all-fqdns",
                ]
                .contains(a)
            }),
            "an argument that sets the host name",
        ),
        "file" => {
            forbid(args, &['C'], "eFfmP", &["compile"], "writes a magic file")?;
            forbid(
                args,
                &['z', 'Z'],
                "eFfmP",
                &["uncompress", "uncompress-noreport"],
                "runs decompression programs found on PATH",
            )
        }
        "tree" => forbid(args, &['o'], "PILHT", &[], "writes a file"),
        "sort" => {
            forbid(args, &['o'], "ktST", &["output"], "writes a file")?;
            forbid(args, &[], "", &["compress-program"], "runs a program")
        }
        "uniq" => {
            let mut operands = 0;
            let mut i = 0;
            while i < args.len() {
                if matches!(args[i], "-f" | "-s" | "-w") {
                    i += 2;
                    continue;
                }
                if !args[i].starts_with('-') || args[i] == "-" {
                    operands += 1;
                }
                i += 1;
            }
            unless(operands > 1, "a second operand is written")
        }
        "env" => {
            if args.is_empty() {
                Ok(())
            } else {
                env(args, depth)
            }
        }
        "nice" | "timeout" | "stdbuf" | "command" => wrapped(argv, depth),
        "find" => match args.iter().find(|a| {
            [
                "-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf",
                "-fls",
            ]
            .contains(a)
        }) {
            Some(a) => no(format!("{a}: runs a command, deletes or writes")),
            None => Ok(()),
        },
        "sed" => unless(
            !sed(args),
            "a script or option that writes, runs or reads a script file",
        ),
        "git" => git(args),
        _ if is_shell(name) => shell(name, args, depth),
        _ => no(format!("{name} is not on the list of read-only commands")),
    }
}

/// A harmless wrapper: safe if what it runs is.
fn wrapped(argv: &[&str], depth: usize) -> Safe {
    let owned: Vec<String> = argv.iter().map(|s| s.to_string()).collect();
    match crate::unwrap::unwrap(&owned) {
        // `command -v x` only prints.
        None if argv.first().is_some_and(|a| a.ends_with("command")) => Ok(()),
        None => no("runs nothing known"),
        Some(steps) => steps.iter().try_for_each(|s| match &s.inner {
            crate::unwrap::Inner::Argv(inner) => {
                let inner: Vec<&str> = inner.iter().map(String::as_str).collect();
                safe(&inner, depth + 1)
            }
            _ => no(format!(
                "{} runs something that is not a plain command",
                s.via
            )),
        }),
    }
}

/// The first assignment to a variable of [`envvars`], as a reason.
pub(crate) fn risky_assignment<'a>(names: impl IntoIterator<Item = &'a str>) -> Safe {
    for name in names {
        if let Some(why) = envvars::risk(name) {
            return no(format!("assigns {name}, which {why}"));
        }
    }
    Ok(())
}

fn env(args: &[&str], depth: usize) -> Safe {
    let mut i = 0;
    while i < args.len() {
        let a = args[i];
        if a.starts_with("-S") || a.starts_with("--split-string") || a.starts_with("--sp") {
            return no("env -S: splits a string into a command");
        }
        if matches!(a, "-u" | "-C" | "--unset" | "--chdir") {
            i += 2;
            continue;
        }
        if a == "--" {
            i += 1;
            break;
        }
        if a.starts_with('-') {
            i += 1;
            continue;
        }
        break;
    }
    let mut rest = &args[i..];
    let mut names = Vec::new();
    while let Some((a, more)) = rest.split_first() {
        let Some((name, _)) = a.split_once('=') else {
            break;
        };
        names.push(name);
        rest = more;
    }
    risky_assignment(names)?;
    if rest.is_empty() {
        Ok(())
    } else {
        safe(rest, depth + 1)
    }
}

fn shell(name: &str, args: &[&str], depth: usize) -> Safe {
    let owned: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let ShellRun::Line(line) = shell_run(&owned) else {
        return no(format!("{name} runs a script, not a line"));
    };
    let Ok(parsed) = corral_line::parse(line) else {
        return no(format!(
            "{name} -c: corral's grammar does not read the line"
        ));
    };
    parsed.commands().try_for_each(|c| match c {
        Command::Cd(_) | Command::DirStack(_) => Ok(()),
        Command::Simple(s) => {
            risky_assignment(s.assignments.iter().map(|a| a.name.as_str()))?;
            if name == "zsh"
                && let Some(w) = s.argv.iter().find(|w| zsh_equals(line, w))
            {
                return no(format!(
                    "zsh expands `{}` to the path of a program",
                    w.span.slice(line)
                ));
            }
            if !s
                .redirects
                .iter()
                .all(|r| matches!(r.op, RedirectOp::Read(_) | RedirectOp::Dup(_)))
            {
                return no("a redirect writes a file");
            }
            let argv: Vec<&str> = s.argv.iter().map(|w| w.value.as_str()).collect();
            safe(&argv, depth + 1)
        }
    })
}

/// A word zsh reads as `=name` (the path of `name`): it starts with an
/// unquoted `=`.
pub(crate) fn zsh_equals(line: &str, word: &corral_line::Word) -> bool {
    word.span.slice(line).starts_with('=') && word.value.len() > 1
}

fn git(args: &[&str]) -> Safe {
    if args == ["--version"] {
        return Ok(());
    }
    let mut i = 0;
    while i < args.len() {
        match args[i] {
            "-C" => i += 2,
            "--no-pager"
            | "-P"
            | "--no-optional-locks"
            | "--literal-pathspecs"
            | "--no-replace-objects" => i += 1,
            a if a.starts_with('-') => {
                return no(format!(
                    "git {a}: a global option that can change what git runs"
                ));
            }
            _ => break,
        }
    }
    let Some((sub, rest)) = args.get(i..).and_then(|a| a.split_first()) else {
        return no("git without a subcommand");
    };
    let drivers = "runs programs the repository's configuration names (fsmonitor, hooks, diff drivers, textconv, filters, gpg)";
    match *sub {
        "rev-parse" | "ls-tree" | "merge-base" => Ok(()),
        "cat-file" => match rest.iter().find(|a| {
            a.starts_with("--textconv") || a.starts_with("--filters") || a.starts_with("--batch")
        }) {
            Some(a) => no(format!("git cat-file {a}: {drivers}")),
            None => Ok(()),
        },
        "status" | "diff" | "show" | "log" | "blame" | "grep" | "describe" | "shortlog"
        | "rev-list" | "ls-files" | "stash" | "whatchanged" | "annotate" | "difftool" => {
            no(format!("git {sub}: {drivers}"))
        }
        "branch" => unless(
            !git_branch_lists(rest),
            "git branch: an option or operand that changes branches, or --format",
        ),
        "tag" => unless(
            !(rest.is_empty()
                || (has(rest, &["-l", "--list"])
                    && !rest.iter().any(|a| {
                        a.starts_with('-')
                            && !matches!(*a, "-l" | "--list" | "-n")
                            && !a.starts_with("--sort")
                            && !a.starts_with("--contains")
                            && !a.starts_with("--points-at")
                    }))),
            "git tag: an option that creates, deletes, verifies or formats",
        ),
        "remote" => unless(
            !(rest.is_empty() || rest == ["-v"] || rest == ["--verbose"] || rest[0] == "get-url"),
            "git remote: changes remotes",
        ),
        "config" => git_config(rest),
        _ => no(format!(
            "git {sub} is not a read-only git command on the list"
        )),
    }
}

fn git_config(rest: &[&str]) -> Safe {
    const READ: &[&str] = &[
        "--get",
        "--get-all",
        "--get-regexp",
        "--get-urlmatch",
        "--list",
        "-l",
        "--show-origin",
        "--show-scope",
        "--null",
        "-z",
        "--name-only",
        "--global",
        "--system",
        "--local",
        "--worktree",
        "--includes",
        "--no-includes",
        "--bool",
        "--int",
        "--bool-or-int",
        "--path",
        "--expiry-date",
    ];
    let mut operands = 0;
    let mut reading = false;
    for a in rest {
        if a.starts_with('-') {
            let name = a.split_once('=').map_or(*a, |(n, _)| n);
            if !READ.contains(&name) && !matches!(name, "--type" | "--default") {
                return no(format!("git config {a}: not a reading option"));
            }
            reading |= name.starts_with("--get") || matches!(name, "--list" | "-l");
        } else {
            operands += 1;
        }
    }
    unless(
        !reading || operands > 2,
        "git config without --get or --list, or with more than two operands, writes",
    )
}

fn git_branch_lists(rest: &[&str]) -> bool {
    const LIST_FLAGS: &[&str] = &[
        "-a",
        "-r",
        "-v",
        "-vv",
        "-l",
        "--list",
        "--all",
        "--remotes",
        "--verbose",
        "--show-current",
        "--no-color",
        "--column",
        "--no-column",
        "-i",
        "--ignore-case",
    ];
    const LIST_VALUED: &[&str] = &[
        "--contains",
        "--no-contains",
        "--merged",
        "--no-merged",
        "--points-at",
        "--sort",
        "--color",
        "--abbrev",
    ];
    let listing = has(rest, &["-l", "--list"]);
    let mut i = 0;
    while i < rest.len() {
        let a = rest[i];
        let with_value = LIST_VALUED
            .iter()
            .any(|v| a.strip_prefix(v).is_some_and(|r| r.starts_with('=')));
        if LIST_VALUED.contains(&a) {
            i += 2;
        } else if LIST_FLAGS.contains(&a) || with_value || (!a.starts_with('-') && listing) {
            i += 1;
        } else {
            return false;
        }
    }
    true
}

fn sed(args: &[&str]) -> bool {
    let mut scripts = Vec::new();
    let mut operands = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = args[i];
        if a == "--" {
            operands.extend_from_slice(&args[i + 1..]);
            break;
        }
        if let Some(long) = a.strip_prefix("--") {
            match long.split_once('=').map_or(long, |(n, _)| n) {
                "quiet" | "silent" | "regexp-extended" | "separate" | "null-data"
                | "unbuffered" | "posix" | "debug" | "sandbox" => {}
                "line-length" => {
                    if !long.contains('=') {
                        i += 1;
                    }
                }
                "expression" => match long.split_once('=') {
                    Some((_, v)) => scripts.push(v),
                    None => {
                        let Some(v) = args.get(i + 1) else {
                            return false;
                        };
                        scripts.push(v);
                        i += 1;
                    }
                },
                _ => return false,
            }
            i += 1;
            continue;
        }
        if a.len() > 1 && a.starts_with('-') {
            let body = &a[1..];
            for (j, c) in body.char_indices() {
                match c {
                    'n' | 'E' | 'r' | 's' | 'z' | 'u' => {}
                    'l' => {
                        if body[j + 1..].is_empty() {
                            i += 1;
                        }
                        break;
                    }
                    'e' => {
                        let rest = &body[j + 1..];
                        if rest.is_empty() {
                            let Some(v) = args.get(i + 1) else {
                                return false;
                            };
                            scripts.push(v);
                            i += 1;
                        } else {
                            scripts.push(rest);
                        }
                        break;
                    }
                    _ => return false,
                }
            }
            i += 1;
            continue;
        }
        operands.push(a);
        i += 1;
    }
    if scripts.is_empty() {
        match operands.first() {
            Some(s) => scripts.push(s),
            None => return false,
        }
    }
    scripts.iter().all(|s| crate::sed::script_is_plain(s))
}
