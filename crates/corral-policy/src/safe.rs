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
//! | `ls` `cat` `head` `tail` `wc` `grep` `egrep` `fgrep` `ag` `echo` `printf` `pwd` `true` `false` `which` `whoami` `id` `uname` `stat` `du` `df` `diff` `cmp` `cut` `tr` `nl` `basename` `dirname` `realpath` `readlink` `printenv` `seq` `jq` | always (`tail -f` too: read-only, it just does not end) |
//! | `rg` | no `--pre` (which runs a program per file) |
//! | `date` | no `-s`/`--set` |
//! | `hostname` | no arguments, or only `-f -s -i -I -d -A` and long forms |
//! | `file` | no `-C` (compiles a magic file) |
//! | `tree` | no `-o` (writes a file) |
//! | `sort` | no `-o`/`--output`, no `--compress-program`, no short cluster containing `o` |
//! | `uniq` | at most one file operand (a second is written) |
//! | `env` | no arguments (prints the environment) |
//! | `find` | none of `-exec -execdir -ok -okdir -delete -fprint -fprint0 -fprintf -fls` |
//! | `sed` | no `-i`/`--in-place`, no `-f`, and every script command is one of `p d q Q = n N P D g G h H x l { }` or `s`/`y` with flags only from `g p i I m M` and digits (so no `w`, `e`, `r`); a script the check cannot split cleanly is not safe |
//! | `git status log diff show rev-parse ls-files ls-tree blame grep describe shortlog cat-file merge-base rev-list` | global options only `--no-pager -P -C DIR --no-optional-locks --literal-pathspecs --no-replace-objects`; no `--output`, `--ext-diff`, `--textconv`, `-O`/`--open-files-in-pager`, `--exec` |
//! | `git branch` | listing only: no create/delete/move/copy/upstream options, and no operand unless `-l`/`--list` |
//! | `git tag` | no arguments, or `-l`/`--list` without creating or deleting options |
//! | `git remote` | no arguments, `-v`, or `get-url` |
//! | `git stash list`, `git config --get/--list/-l`, `git --version` | always |
//! | `cargo rustc rustup python python3 node npm npx pnpm yarn deno bun gcc g++ clang make cmake git pip pip3 ruby perl java javac tsc go` | exactly `--version` (`go version` too) |
//! | `env` `nice` `timeout` `stdbuf` `command` + a command | the inner command is safe; `env` sets no variable that changes what runs (`PATH`, `LD_*`, `DYLD_*`, `BASH_ENV`, `ENV`, `IFS`, `NODE_OPTIONS`, `PERL5OPT`, `PERL5LIB`, `PYTHONPATH`, `PYTHONSTARTUP`, `RUBYOPT`, `GIT_*`, `PAGER`, `EDITOR`, `VISUAL`) and has no `-S` |
//! | `sh -c` `bash -c` ... LINE | every stage of LINE is safe and no stage writes through a redirect |
//!
//! Not wrappers here: `xargs` (arguments from stdin are appended, and
//! GNU tools accept options after operands, so `xargs sed` could become
//! `sed ... -i`), `sudo`, `nohup` (may create `nohup.out`), `time` (`-o`).
//!
//! A residual, stated plainly: `git` reads the repository's own
//! configuration, which can name programs (`core.fsmonitor`,
//! `diff.external`, textconv drivers, `core.pager`). A repository the agent
//! can write can therefore make `git status` run something. Deny writes to
//! `**/.git/config` if that matters.

use corral_line::{Command, RedirectOp};

use crate::policy::MAX_DEPTH;
use crate::unwrap::shells::{ShellRun, is_shell, shell_run};

/// Whether `argv` is on the built-in list of read-only commands (see the
/// module docs for the table).
pub fn is_known_safe<S: AsRef<str>>(argv: &[S]) -> bool {
    let argv: Vec<&str> = argv.iter().map(AsRef::as_ref).collect();
    safe(&argv, 0)
}

const SYSTEM_DIRS: &[&str] = &[
    "/bin/",
    "/usr/bin/",
    "/usr/local/bin/",
    "/sbin/",
    "/usr/sbin/",
    "/opt/homebrew/bin/",
];

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

fn has_prefix(args: &[&str], any: &[&str]) -> bool {
    args.iter().any(|a| any.iter().any(|p| a.starts_with(p)))
}

fn short_cluster_has(args: &[&str], c: char) -> bool {
    args.iter()
        .any(|a| a.len() > 1 && a.starts_with('-') && !a.starts_with("--") && a[1..].contains(c))
}

const ALWAYS: &[&str] = &[
    "ls", "cat", "head", "tail", "wc", "grep", "egrep", "fgrep", "ag", "echo", "printf", "pwd",
    "true", "false", "which", "whoami", "id", "uname", "stat", "du", "df", "diff", "cmp", "cut",
    "tr", "nl", "basename", "dirname", "realpath", "readlink", "printenv", "seq", "jq",
];

const VERSIONED: &[&str] = &[
    "cargo", "rustc", "rustup", "python", "python3", "node", "npm", "npx", "pnpm", "yarn", "deno",
    "bun", "gcc", "g++", "clang", "make", "cmake", "git", "pip", "pip3", "ruby", "perl", "java",
    "javac", "tsc", "go",
];

fn safe(argv: &[&str], depth: usize) -> bool {
    if depth > MAX_DEPTH {
        return false;
    }
    let Some((first, args)) = argv.split_first() else {
        return false;
    };
    let Some(name) = program_name(first) else {
        return false;
    };
    if args == ["--version"] && VERSIONED.contains(&name) {
        return true;
    }
    if ALWAYS.contains(&name) {
        return true;
    }
    match name {
        "rg" => !has(args, &["--pre"]) && !has_prefix(args, &["--pre="]),
        "date" => !has(args, &["-s"]) && !has_prefix(args, &["--set", "-s"]),
        "hostname" => args.iter().all(|a| {
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
        "file" => !short_cluster_has(args, 'C') && !has(args, &["--compile"]),
        "tree" => !has_prefix(args, &["-o"]),
        "sort" => {
            !short_cluster_has(args, 'o') && !has_prefix(args, &["--output", "--compress-program"])
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
            operands <= 1
        }
        "env" => args.is_empty() || env(args, depth),
        "nice" | "timeout" | "stdbuf" | "command" => wrapped(argv, depth),
        "find" => !has(
            args,
            &[
                "-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf",
                "-fls",
            ],
        ),
        "sed" => sed(args),
        "git" => git(args),
        "go" => args == ["version"],
        _ if is_shell(name) => shell(args, depth),
        _ => false,
    }
}

/// A harmless wrapper: safe if what it runs is.
fn wrapped(argv: &[&str], depth: usize) -> bool {
    let owned: Vec<String> = argv.iter().map(|s| s.to_string()).collect();
    match crate::unwrap::unwrap(&owned) {
        // `command -v x` only prints.
        None => argv.first().is_some_and(|a| a.ends_with("command")),
        Some(steps) => steps.iter().all(|s| match &s.inner {
            crate::unwrap::Inner::Argv(inner) => {
                let inner: Vec<&str> = inner.iter().map(String::as_str).collect();
                safe(&inner, depth + 1)
            }
            _ => false,
        }),
    }
}

fn env(args: &[&str], depth: usize) -> bool {
    const MATTERS: &[&str] = &[
        "PATH",
        "BASH_ENV",
        "ENV",
        "IFS",
        "SHELLOPTS",
        "BASHOPTS",
        "PS4",
        "NODE_OPTIONS",
        "PERL5OPT",
        "PERL5LIB",
        "PYTHONPATH",
        "PYTHONSTARTUP",
        "RUBYOPT",
        "PAGER",
        "EDITOR",
        "VISUAL",
    ];
    let mut i = 0;
    while i < args.len() {
        let a = args[i];
        if a.starts_with("-S") || a.starts_with("--split-string") {
            return false;
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
    while let Some((a, more)) = rest.split_first() {
        let Some((name, _)) = a.split_once('=') else {
            break;
        };
        if MATTERS.contains(&name)
            || name.starts_with("LD_")
            || name.starts_with("DYLD_")
            || name.starts_with("GIT_")
        {
            return false;
        }
        rest = more;
    }
    rest.is_empty() || safe(rest, depth + 1)
}

fn shell(args: &[&str], depth: usize) -> bool {
    let owned: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let ShellRun::Line(line) = shell_run(&owned) else {
        return false;
    };
    let Ok(parsed) = corral_line::parse(line) else {
        return false;
    };
    parsed.commands().all(|c| match c {
        Command::Cd(_) => true,
        Command::Simple(s) => {
            let argv: Vec<&str> = s.argv.iter().map(|w| w.value.as_str()).collect();
            s.redirects
                .iter()
                .all(|r| matches!(r.op, RedirectOp::Read(_) | RedirectOp::Dup(_)))
                && safe(&argv, depth + 1)
        }
    })
}

fn git(args: &[&str]) -> bool {
    if args == ["--version"] {
        return true;
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
            a if a.starts_with('-') => return false,
            _ => break,
        }
    }
    let Some((sub, rest)) = args.get(i..).and_then(|a| a.split_first()) else {
        return false;
    };
    let forbidden = has_prefix(
        rest,
        &[
            "--output",
            "--ext-diff",
            "--textconv",
            "--open-files-in-pager",
            "--exec",
        ],
    ) || has(rest, &["-O"]);
    if forbidden {
        return false;
    }
    match *sub {
        "status" | "log" | "diff" | "show" | "rev-parse" | "ls-files" | "ls-tree" | "blame"
        | "grep" | "describe" | "shortlog" | "cat-file" | "merge-base" | "rev-list" => true,
        "branch" => {
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
                "--format",
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
                } else if LIST_FLAGS.contains(&a) || with_value || (!a.starts_with('-') && listing)
                {
                    i += 1;
                } else {
                    return false;
                }
            }
            true
        }
        "tag" => {
            rest.is_empty()
                || (has(rest, &["-l", "--list"])
                    && !rest.iter().any(|a| {
                        a.starts_with('-')
                            && !matches!(*a, "-l" | "--list" | "-n")
                            && !a.starts_with("--sort")
                            && !a.starts_with("--contains")
                            && !a.starts_with("--points-at")
                            && !a.starts_with("--format")
                    }))
        }
        "remote" => {
            rest.is_empty() || rest == ["-v"] || rest == ["--verbose"] || rest[0] == "get-url"
        }
        "stash" => rest.first() == Some(&"list"),
        "config" => has(
            rest,
            &["--get", "--list", "-l", "--get-all", "--get-regexp"],
        ),
        _ => false,
    }
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
    scripts.iter().all(|s| sed_script(s))
}

/// Every command of a sed script is one that only reads and prints.
fn sed_script(script: &str) -> bool {
    script
        .split([';', '\n'])
        .map(str::trim)
        .all(|cmd| cmd.is_empty() || sed_command(cmd))
}

fn sed_command(cmd: &str) -> bool {
    let rest = skip_address(cmd);
    let Some(rest) = rest else { return false };
    let rest = rest.trim_start();
    let rest = rest.strip_prefix('!').unwrap_or(rest).trim_start();
    let mut chars = rest.chars();
    let Some(c) = chars.next() else {
        return true;
    };
    let after = chars.as_str();
    match c {
        'p' | 'd' | 'q' | 'Q' | '=' | 'n' | 'N' | 'P' | 'D' | 'g' | 'G' | 'h' | 'H' | 'x' | 'l'
        | '{' | '}' => {
            let after = after.trim();
            after.is_empty()
                || (matches!(c, 'q' | 'Q') && after.bytes().all(|b| b.is_ascii_digit()))
        }
        's' | 'y' => {
            let mut it = after.chars();
            let Some(delim) = it.next() else { return false };
            if delim == '\\' || delim == '\n' || delim.is_alphanumeric() {
                return false;
            }
            let mut body = it.as_str();
            for _ in 0..2 {
                match find_unescaped(body, delim) {
                    Some(i) => body = &body[i + delim.len_utf8()..],
                    None => return false,
                }
            }
            let flags = body.trim();
            if c == 'y' {
                flags.is_empty()
            } else {
                flags
                    .chars()
                    .all(|f| "gpiImM".contains(f) || f.is_ascii_digit())
            }
        }
        _ => false,
    }
}

fn find_unescaped(s: &str, delim: char) -> Option<usize> {
    let mut escaped = false;
    for (i, c) in s.char_indices() {
        if escaped {
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if c == delim {
            return Some(i);
        }
    }
    None
}

/// Skip `N`, `$`, `/re/`, `\cREc`, optionally `,ADDR`. `None` if malformed.
fn skip_address(cmd: &str) -> Option<&str> {
    fn one(s: &str) -> Option<&str> {
        if let Some(r) = s.strip_prefix('$') {
            return Some(r);
        }
        if let Some(r) = s.strip_prefix('/') {
            let end = find_unescaped(r, '/')?;
            return Some(&r[end + 1..]);
        }
        let digits = s
            .bytes()
            .take_while(|b| b.is_ascii_digit() || *b == b'~')
            .count();
        Some(&s[digits..])
    }
    let rest = one(cmd)?;
    match rest.strip_prefix(',') {
        Some(r) => one(r),
        None => Some(rest),
    }
}
