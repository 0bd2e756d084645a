//! Commands that run other commands, and how to find what they run.
//!
//! One module per family; [`unwrap`] dispatches on the basename of `argv[0]`
//! (with a version suffix and `.exe` removed: `python3.12` is `python`).

mod find;
mod interpreters;
mod multicall;
pub(crate) mod opts;
pub(crate) mod privilege;
pub(crate) mod shells;
mod wrappers;
mod xargs;

use crate::pattern::basename;

/// What a command would run besides itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Inner {
    /// Another command, with these arguments (possibly more unknown ones,
    /// as for `xargs`).
    Argv(Vec<String>),
    /// A shell line (`sh -c LINE`, `watch`, `su -c`).
    Line(String),
    /// An interpreter's inline program (`python -c`): cannot be checked.
    OneLiner,
    /// A script file (or stdin, `-`): cannot be checked.
    Script(String),
}

/// One thing a command would run, and how it gets there (`"env"`,
/// `"bash -c"`, `"find -exec"`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Step {
    pub via: String,
    pub inner: Inner,
}

impl Step {
    fn new(via: impl Into<String>, inner: Inner) -> Step {
        Step {
            via: via.into(),
            inner,
        }
    }
}

/// `argv[0]`'s basename without `.exe` and without a trailing version
/// (`python3.12` → `python`, `perl5.36` → `perl`).
pub(crate) fn family(argv0: &str) -> &str {
    let base = basename(argv0);
    let base = match base.len().checked_sub(4) {
        Some(cut) if base.is_char_boundary(cut) && base[cut..].eq_ignore_ascii_case(".exe") => {
            &base[..cut]
        }
        _ => base,
    };
    let trimmed = base.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    if trimmed.is_empty() { base } else { trimmed }
}

/// Everything `argv` would run besides itself, or `None` if it is not a
/// command that runs commands.
pub(crate) fn unwrap(argv: &[String]) -> Option<Vec<Step>> {
    let (first, args) = argv.split_first()?;
    let name = family(first);
    match name {
        "env" => wrappers::env(args),
        "nice" => wrappers::nice(args),
        "nohup" => wrappers::simple(name, args),
        "timeout" => wrappers::timeout(args),
        "stdbuf" => wrappers::stdbuf(args),
        "setsid" => wrappers::simple(name, args),
        "time" => wrappers::time(args),
        "command" => wrappers::command(args),
        "exec" => wrappers::exec(args),
        "chroot" => wrappers::chroot(args),
        "ionice" => wrappers::ionice(args),
        "taskset" => wrappers::taskset(args),
        "chrt" => wrappers::chrt(args),
        "unbuffer" => wrappers::simple(name, args),
        "flock" => wrappers::flock(args),
        "watch" => shells::watch(args),
        "xargs" => xargs::xargs(args),
        "sudo" => privilege::sudo(args),
        "doas" => privilege::doas(args),
        "su" => privilege::su(args),
        "busybox" | "toybox" => multicall::multicall(name, args),
        "find" => find::find(args),
        _ if shells::is_shell(name) => shells::shell(name, args),
        _ => interpreters::interpreter(name, args),
    }
}

fn owned(args: &[String]) -> Vec<String> {
    args.to_vec()
}
