//! Shells: `sh -c LINE` (and `bash`, `zsh`, `dash`, `ksh`, `mksh`, `ash`,
//! `rbash`, `fish`), with any options before `-c` (`-lc`, `-ec`,
//! `-o pipefail -c`); `sh script.sh` and `sh -s` / `sh < file` run a script
//! that cannot be seen. `watch` joins its arguments into a shell line.

use super::opts::{Spec, parse};
use super::step::{Inner, Step, owned};

const SHELLS: &[&str] = &[
    "sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "rbash", "yash", "posh",
];

/// Shells whose language is not the one corral's grammar reads: a line for
/// one of them is never checked stage by stage (fish's `and rm x`, csh's
/// `` `rm x` ``, nu's `^rm x`).
const FOREIGN: &[&str] = &[
    "fish",
    "csh",
    "tcsh",
    "nu",
    "elvish",
    "xonsh",
    "rc",
    "es",
    "ion",
    "oil",
    "osh",
    "ysh",
    "murex",
    "pwsh-preview",
];

pub(crate) fn is_shell(name: &str) -> bool {
    SHELLS.contains(&name)
}

pub(crate) fn is_foreign_shell(name: &str) -> bool {
    FOREIGN.contains(&name)
}

/// A foreign shell: any command it is given (`-c LINE`, `--commands`, `-e`)
/// is opaque; a script is a script.
pub(super) fn foreign(name: &str, args: &[String]) -> Option<Vec<Step>> {
    let command = args.iter().any(|a| {
        a.starts_with("--c")
            || a.starts_with("--e")
            || (a.len() > 1
                && a.starts_with('-')
                && !a.starts_with("--")
                && a[1..].contains(['c', 'e', 'C']))
    });
    if command {
        return Some(vec![Step::new(
            format!("{name} -c"),
            Inner::Opaque(format!(
                "`{name}` commands are not in a language corral reads: {}",
                args.join(" ")
            )),
        )]);
    }
    match args.iter().find(|a| !a.starts_with('-')) {
        Some(script) => Some(vec![Step::new(name, Inner::Script(script.clone()))]),
        None => Some(vec![Step::new(name, Inner::Script("-".into()))]),
    }
}

/// What a shell invocation runs.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum ShellRun<'a> {
    /// `-c LINE`.
    Line(&'a str),
    /// A script file, or `-` for stdin.
    Script(&'a str),
    /// `-c` with no line, or only `--help`/`--version`.
    Nothing,
}

pub(crate) fn shell_run(args: &[String]) -> ShellRun<'_> {
    let mut command = false;
    let mut stdin = false;
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        if a == "--" || a == "-" {
            i += 1;
            break;
        }
        if let Some(long) = a.strip_prefix("--") {
            match long {
                "rcfile" | "init-file" => i += 1,
                "command" => command = true,
                "help" | "version" => return ShellRun::Nothing,
                _ => {}
            }
            i += 1;
            continue;
        }
        if a.len() > 1 && (a.starts_with('-') || a.starts_with('+')) {
            for c in a[1..].chars() {
                match c {
                    'c' => command = true,
                    's' => stdin = true,
                    // `-o OPTION`, `-O SHOPT`: the option name is the next word.
                    'o' | 'O' => i += 1,
                    _ => {}
                }
            }
            i += 1;
            continue;
        }
        break;
    }
    if command {
        return match args.get(i) {
            Some(line) => ShellRun::Line(line),
            None => ShellRun::Nothing,
        };
    }
    if stdin {
        return ShellRun::Script("-");
    }
    match args.get(i) {
        Some(script) => ShellRun::Script(script),
        None => ShellRun::Script("-"),
    }
}

pub(super) fn shell(name: &str, args: &[String]) -> Option<Vec<Step>> {
    match shell_run(args) {
        ShellRun::Line(line) => Some(vec![Step::new(
            format!("{name} -c"),
            if name == "zsh" {
                Inner::ZshLine(line.to_string())
            } else {
                Inner::Line(line.to_string())
            },
        )]),
        ShellRun::Script(script) => Some(vec![Step::new(name, Inner::Script(script.to_string()))]),
        ShellRun::Nothing => None,
    }
}

const WATCH: Spec = Spec {
    short_val: "nq",
    short_opt: "d",
    long_val: &["interval", "equexit"],
    numeric: false,
};

/// `watch [opts] cmd...` runs `sh -c "cmd..."`; `watch -x cmd...` runs the
/// argv directly.
pub(super) fn watch(args: &[String]) -> Option<Vec<Step>> {
    let p = parse(args, &WATCH);
    let rest = &args[p.operand..];
    if rest.is_empty() {
        return None;
    }
    if p.has('x') || p.has_long("exec") {
        return Some(vec![Step::new("watch -x", Inner::Argv(owned(rest)))]);
    }
    Some(vec![Step::new("watch", Inner::Line(rest.join(" ")))])
}
