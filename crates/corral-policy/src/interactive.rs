//! Programs that need a terminal. Outside a PTY session the library refuses
//! them with a message pointing to one: a command that waits on a terminal
//! that will never answer only burns its timeout.
//!
//! The built-in list (by basename; `python3.12` counts as `python`):
//!
//! | program | needs a terminal unless |
//! |---|---|
//! | `vi` `vim` `nvim` | `-es`/`-Es` (silent ex mode) or `--headless` |
//! | `nano` `pico` `micro` `joe` `hx` | never |
//! | `emacs` | `--batch`, `-batch` or `--script` |
//! | `less` `more` `most` | never |
//! | `man` | `-k`, `-f`, `-w` (lookups that print) |
//! | `top` | `-b` (batch mode) |
//! | `htop` `btop` `atop` `watch` | never |
//! | `ssh` `telnet` `ftp` | never (a command for `ssh` is not looked at) |
//! | `sftp` | `-b FILE` |
//! | `sudo` | `-n`, `-S` or `-A` (no password prompt on the terminal) |
//! | `doas` | `-n` |
//! | `su` `passwd` `visudo` `vipw` `vigr` | never |
//! | `crontab` | unless `-e` |
//! | `mysql` `mariadb` | `-e`/`--execute` (approximate: SQL on stdin is not seen) |
//! | `psql` | `-c`, `-f`, `-l` or their long forms |
//! | `sqlite3` | SQL given after the database (two or more operands) |
//! | `redis-cli` | a command given (an operand) |
//! | `mongosh` `mongo` | `--eval` or a `.js` file |
//! | `python` `node` `irb` `ghci` `ipython` `deno` | any argument (bare = a REPL); `python -i` always |
//! | `sh` `bash` `zsh` ... | unless `-i` is given |
//! | `git rebase` | unless `-i`/`--interactive`/`--edit-todo`, or with an editor given that needs none (see below) |
//! | `git add` | unless `-p`/`-i`/`-e` (and long forms) |
//! | `git checkout` `reset` `restore`, `git stash` (`push`) | unless `-p`/`--patch` (`git stash show -p` prints a patch) |
//! | `git commit` | `-m`, `-F`, `-C`, `--no-edit`, `--fixup` (and long forms), unless `-e`/`--edit`; or an editor given that needs none |
//! | `git tag -a`/`-s` | `-m`/`-F`, or an editor given that needs none |
//! | `find -ok`/`-okdir`, `xargs -p`/`-o` | never (they prompt) |
//! | `tmux` | `-d`, or a subcommand that does not attach (`ls`, `send-keys`, `kill-session`, ...) |
//! | `screen` | `-d -m`, `-ls`/`-list` |
//!
//! Git starts the editor it is given: for a rebase's todo list `GIT_SEQUENCE_EDITOR`,
//! then `-c sequence.editor=…`, then the editor of a message: `GIT_EDITOR`, `-c
//! core.editor=…`, `VISUAL`, `EDITOR`. The first of these given, in an assignment in
//! front of the command (`GIT_SEQUENCE_EDITOR='sed -i …' git rebase -i HEAD~2`, `env
//! GIT_EDITOR=true git commit`) or in git's own `-c`, decides: an editor that is itself
//! a program needing a terminal (`vim`) needs one, any other (`sed -i …`, `true`) does
//! not. With none given git starts `vi`. The person's own git configuration is not read.
//!
//! Wrappers are looked through as in the policy (`env vim`, `bash -c
//! 'less x'`). [`crate::Policy::interactive_programs`] adds to the list and
//! [`crate::Policy::allow_interactive`] takes programs off it.

use crate::pattern::basename;
use crate::unwrap::MAX_DEPTH;
use crate::unwrap::opts::parse;
use crate::unwrap::privilege::SUDO;
use crate::unwrap::{Inner, family, unwrap};

/// Why `argv` (or a command it runs) needs a terminal, from the built-in
/// list; `None` if it does not.
pub fn needs_terminal<S: AsRef<str>>(argv: &[S]) -> Option<&'static str> {
    let argv: Vec<String> = argv.iter().map(|s| s.as_ref().to_string()).collect();
    find(&argv, &[], &needs_terminal_in, 0).map(|(_, r)| r)
}

/// The check for one command given the `NAME=value` assignments in force for it.
pub(crate) type Here<'a> = &'a dyn Fn(&[String], &[(String, String)]) -> Option<&'static str>;

/// The first command in `argv` or anything it runs for which `here` gives
/// a reason; `assigned` are the assignments in force for `argv` (written in
/// front of it), and those of a wrapper (`env NAME=value`) are in force for
/// what it runs.
pub(crate) fn find(
    argv: &[String],
    assigned: &[(String, String)],
    here: Here<'_>,
    depth: usize,
) -> Option<(String, &'static str)> {
    if depth > MAX_DEPTH {
        return None;
    }
    if let Some(reason) = here(argv, assigned) {
        return Some((argv.join(" "), reason));
    }
    let steps = unwrap(argv)?;
    let mut inner_assigned = assigned.to_vec();
    inner_assigned.extend(in_force_inside(argv, &steps));
    for step in steps {
        let found = match step.inner {
            Inner::Argv(inner) => find(&inner, &inner_assigned, here, depth + 1),
            Inner::Line(line) | Inner::ZshLine(line) => {
                corral_line::parse(&line).ok().and_then(|line| {
                    line.commands().find_map(|c| match c {
                        corral_line::Command::Simple(s) => {
                            let argv: Vec<String> =
                                s.argv.iter().map(|w| w.value.clone()).collect();
                            let mut assigned = inner_assigned.clone();
                            assigned.extend(
                                s.assignments
                                    .iter()
                                    .map(|a| (a.name.clone(), a.value.value.clone())),
                            );
                            find(&argv, &assigned, here, depth + 1)
                        }
                        corral_line::Command::Cd(_) | corral_line::Command::DirStack(_) => None,
                    })
                })
            }
            Inner::OneLiner
            | Inner::Script(_)
            | Inner::Assign(_)
            | Inner::Opaque(_)
            | Inner::MoreArgs(_) => None,
        };
        if found.is_some() {
            return found;
        }
    }
    None
}

/// What `argv` puts in force for the commands it runs (`steps`), for the terminal check:
/// a wrapper's assignments (`env NAME=value`), and the editors git's `-c` options give
/// (git reads its options into the subcommand it runs, which is checked without them),
/// named `-c KEY` so that an assignment still comes before them.
pub(crate) fn in_force_inside(
    argv: &[String],
    steps: &[crate::unwrap::Step],
) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = steps
        .iter()
        .filter_map(|step| match &step.inner {
            Inner::Assign(pairs) => Some(pairs.iter().cloned()),
            _ => None,
        })
        .flatten()
        .collect();
    if let Some((first, args)) = argv.split_first()
        && family(first) == "git"
        && let Some((_, rest)) = git_subcommand(args)
    {
        let global = &args[..args.len() - rest.len() - 1];
        for w in global.windows(2).filter(|w| w[0] == "-c") {
            if let Some((key, value)) = w[1].split_once('=')
                && EDITOR_KEYS.iter().any(|k| k.eq_ignore_ascii_case(key))
            {
                out.push((
                    format!("-c {}", key.to_ascii_lowercase()),
                    value.to_string(),
                ));
            }
        }
    }
    out
}

/// Git's configuration keys that name an editor.
const EDITOR_KEYS: &[&str] = &["sequence.editor", "core.editor"];

fn has(args: &[String], any: &[&str]) -> bool {
    args.iter().any(|a| any.contains(&a.as_str()))
}

fn has_prefix(args: &[String], any: &[&str]) -> bool {
    args.iter().any(|a| any.iter().any(|p| a.starts_with(p)))
}

/// Operands, skipping the values of the given options.
fn operands(args: &[String], valued: &[&str]) -> usize {
    let mut n = 0;
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        if valued.contains(&a) {
            i += 2;
            continue;
        }
        if !a.starts_with('-') {
            n += 1;
        }
        i += 1;
    }
    n
}

const EDITOR: &str = "a full-screen editor";
const PAGER: &str = "a pager";
const MONITOR: &str = "a full-screen program that runs until interrupted";
const REMOTE: &str = "a remote session";
const PASSWORD: &str = "prompts for a password";
const DATABASE: &str = "an interactive database shell (give it a command to run)";
const REPL: &str = "a bare REPL (give it a script or an inline program)";
const MULTIPLEXER: &str = "a terminal multiplexer";

/// Whether a program that needs a terminal for `reason` reads what it runs from its
/// stdin (a REPL, a database shell): with its stdin given (a pipe, a file, a
/// here-document) it runs that and ends, and needs no terminal.
pub fn reads_its_stdin(reason: &str) -> bool {
    reason == REPL || reason == DATABASE
}

/// The built-in check for one command, without looking inside it, with the
/// assignments `assigned` in force (the editor git starts is one of them).
pub(crate) fn needs_terminal_in(
    argv: &[String],
    assigned: &[(String, String)],
) -> Option<&'static str> {
    let (first, args) = argv.split_first()?;
    let base = basename(first);
    match family(first) {
        "vi" | "vim" | "nvim" | "view" => {
            (!has(args, &["-es", "-Es", "--headless"])).then_some(EDITOR)
        }
        "nano" | "pico" | "micro" | "joe" | "hx" => Some(EDITOR),
        "emacs" => (!has(args, &["--batch", "-batch", "--script"])).then_some(EDITOR),
        "less" | "more" | "most" => Some(PAGER),
        "man" => (!has(
            args,
            &["-k", "-f", "-w", "--apropos", "--whatis", "--where"],
        ))
        .then_some("a pager (man)"),
        "top" => (!has_prefix(args, &["-b"])).then_some(MONITOR),
        "htop" | "btop" | "atop" | "watch" => Some(MONITOR),
        "ssh" | "telnet" | "ftp" => Some(REMOTE),
        "sftp" => (!has(args, &["-b"])).then_some(REMOTE),
        "sudo" => {
            let p = parse(args, &SUDO);
            let quiet = p.has('n') || p.has('S') || p.has('A');
            let quiet = quiet || p.has_long("non-interactive") || p.has_long("stdin");
            (!quiet).then_some("sudo may prompt for a password (use sudo -n)")
        }
        "doas" => (!has_prefix(args, &["-n"])).then_some(PASSWORD),
        "su" | "passwd" => Some(PASSWORD),
        "visudo" | "vipw" | "vigr" => Some(EDITOR),
        "crontab" => has(args, &["-e"]).then_some(EDITOR),
        "mysql" | "mariadb" => {
            (!has_prefix(args, &["-e", "--execute", "-V", "--version"])).then_some(DATABASE)
        }
        "psql" => (!has_prefix(
            args,
            &[
                "-c",
                "--command",
                "-f",
                "--file",
                "-l",
                "--list",
                "-V",
                "--version",
            ],
        ))
        .then_some(DATABASE),
        "sqlite" if base.starts_with("sqlite3") => {
            let valued = ["-cmd", "-separator", "-newline", "-nullvalue", "-init"];
            (operands(args, &valued) < 2 && !has(args, &["-version", "--version"]))
                .then_some(DATABASE)
        }
        "redis-cli" => {
            let valued = [
                "-h", "-p", "-s", "-a", "-u", "-n", "-r", "-i", "--user", "--pass",
            ];
            (operands(args, &valued) == 0 && !has(args, &["-v", "--version"])).then_some(DATABASE)
        }
        "mongosh" | "mongo" => (!has(args, &["--eval"])
            && !args.iter().any(|a| a.ends_with(".js")))
        .then_some(DATABASE),
        "python" | "ipython" => (args.is_empty()
            || has(args, &["-i"])
            || base.starts_with("ipython") && operands(args, &[]) == 0)
            .then_some(REPL),
        "node" | "irb" | "ghci" | "deno" => {
            (args.is_empty() || (family(first) == "deno" && has(args, &["repl"]))).then_some(REPL)
        }
        "find" => has(args, &["-ok", "-okdir"]).then_some("find -ok prompts for every file"),
        "xargs" => has_prefix(args, &["-p", "--interactive", "-o", "--open-tty"])
            .then_some("xargs -p prompts for every command"),
        "git" => git(args, assigned),
        "tmux" => tmux(args),
        "screen" => (!(has(args, &["-ls", "-list"]) || has_prefix(args, &["-dm", "-d"])))
            .then_some(MULTIPLEXER),
        name if crate::unwrap::shells::is_shell(name) => (args
            .iter()
            .any(|a| a.starts_with('-') && !a.starts_with("--") && a.contains('i')))
        .then_some("an interactive shell"),
        _ => None,
    }
}

/// Skip git's global options; the subcommand and its arguments.
pub(crate) fn git_subcommand(args: &[String]) -> Option<(&str, &[String])> {
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        if matches!(
            a,
            "-C" | "-c" | "--git-dir" | "--work-tree" | "--namespace" | "--config-env"
        ) {
            i += 2;
            continue;
        }
        if a.starts_with('-') {
            i += 1;
            continue;
        }
        return Some((a, &args[i + 1..]));
    }
    None
}

fn git(args: &[String], assigned: &[(String, String)]) -> Option<&'static str> {
    let (sub, rest) = git_subcommand(args)?;
    let global = &args[..args.len() - rest.len() - 1];
    let no_editor = |sequence: bool| editor_needs_no_terminal(global, assigned, sequence);
    let short = |c: char| {
        rest.iter().any(|a| {
            a.len() > 1 && a.starts_with('-') && !a.starts_with("--") && a[1..].contains(c)
        })
    };
    match sub {
        "rebase" => (has(rest, &["-i", "--interactive", "--edit-todo"])
            || has_prefix(rest, &["--interactive="]))
        .then_some("opens an editor (interactive rebase)")
        .filter(|_| !no_editor(true)),
        "add" => (short('p')
            || short('i')
            || short('e')
            || has(rest, &["--patch", "--interactive", "--edit"]))
        .then_some("interactive staging"),
        "checkout" | "reset" | "restore" => {
            (has(rest, &["-p", "--patch"])).then_some("interactive hunk selection")
        }
        // `git stash show -p` prints a patch; only pushing picks hunks.
        "stash" => (matches!(
            rest.iter()
                .find(|a| !a.starts_with('-'))
                .map(String::as_str),
            None | Some("push" | "save")
        ) && has(rest, &["-p", "--patch"]))
        .then_some("interactive hunk selection"),
        "commit" => {
            let message = short('m')
                || short('F')
                || short('C')
                || has(rest, &["--no-edit"])
                || has_prefix(rest, &["--message", "--file", "--reuse-message", "--fixup"]);
            let edit = has(rest, &["-e", "--edit"]);
            ((edit || !message) && !no_editor(false))
                .then_some("opens an editor for the message (use -m, -F or --no-edit)")
        }
        "tag" => {
            let annotated = short('a') || short('s') || has(rest, &["--annotate", "--sign"]);
            let message = short('m') || short('F') || has_prefix(rest, &["--message", "--file"]);
            (annotated && !message && !no_editor(false))
                .then_some("opens an editor for the tag message (use -m)")
        }
        _ => None,
    }
}

/// Whether the editor git starts (for a rebase's todo list when `sequence`, else for a
/// message) is given, in `assigned` or in git's `-c` options among `global`, and is a
/// program that needs no terminal. The first one given in git's order decides.
fn editor_needs_no_terminal(
    global: &[String],
    assigned: &[(String, String)],
    sequence: bool,
) -> bool {
    let var = |name: &str| {
        assigned
            .iter()
            .rev()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    };
    // Given to this git, or to a git that runs this one (read into `assigned`).
    let config = |key: &str| {
        global
            .windows(2)
            .rev()
            .filter(|w| w[0] == "-c")
            .find_map(|w| {
                let (k, v) = w[1].split_once('=')?;
                k.eq_ignore_ascii_case(key).then_some(v)
            })
            .or_else(|| var(&format!("-c {key}")))
    };
    let given = sequence
        .then(|| var("GIT_SEQUENCE_EDITOR").or_else(|| config("sequence.editor")))
        .flatten()
        .or_else(|| var("GIT_EDITOR"))
        .or_else(|| config("core.editor"))
        .or_else(|| var("VISUAL"))
        .or_else(|| var("EDITOR"));
    given.is_some_and(|editor| !editor_needs_terminal(editor))
}

/// Whether the editor command `editor` (run by git as `sh -c '<editor> "$@"' FILE`)
/// needs a terminal: an empty one, or one that starts a program of the list.
fn editor_needs_terminal(editor: &str) -> bool {
    let file = "FILE".to_string();
    let needs = |mut argv: Vec<String>| {
        argv.push(file.clone());
        find(&argv, &[], &needs_terminal_in, 0).is_some()
    };
    match corral_line::parse(editor) {
        Ok(line) => {
            let mut any = false;
            let mut some = false;
            for c in line.commands() {
                if let corral_line::Command::Simple(s) = c {
                    some = true;
                    any |= needs(s.argv.iter().map(|w| w.value.clone()).collect());
                }
            }
            any || !some
        }
        Err(_) => {
            let argv: Vec<String> = editor.split_whitespace().map(str::to_string).collect();
            argv.is_empty() || needs(argv)
        }
    }
}

fn tmux(args: &[String]) -> Option<&'static str> {
    const DETACHED: &[&str] = &[
        "ls",
        "list-sessions",
        "has-session",
        "has",
        "kill-session",
        "kill-server",
        "send-keys",
        "send",
        "capture-pane",
        "capturep",
        "list-windows",
        "lsw",
        "list-panes",
        "lsp",
        "display-message",
        "display",
        "show-options",
        "show",
        "set-option",
        "set",
        "rename-session",
        "new-window",
        "split-window",
        "select-window",
        "kill-window",
        "kill-pane",
    ];
    if has(args, &["-d", "-V"]) || args.iter().any(|a| DETACHED.contains(&a.as_str())) {
        None
    } else {
        Some(MULTIPLEXER)
    }
}
