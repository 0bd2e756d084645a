//! Running as someone else: `sudo`, `doas`, `su`.

use super::opts::{Spec, parse};
use super::step::{Inner, Step, owned};

pub(crate) const SUDO: Spec = Spec {
    short_val: "CDgpRrTtUu",
    short_opt: "",
    long_val: &[
        "chdir",
        "close-from",
        "group",
        "host",
        "prompt",
        "chroot",
        "role",
        "type",
        "command-timeout",
        "other-user",
        "user",
    ],
    numeric: false,
};

/// `sudo [opts] [NAME=VALUE]... cmd...`. `-e` (sudoedit), `-l`, `-v`, `-V`
/// and `-K` run no command.
pub(super) fn sudo(args: &[String]) -> Option<Vec<Step>> {
    let p = parse(args, &SUDO);
    if ['e', 'l', 'v', 'V', 'K'].iter().any(|c| p.has(*c))
        || ["edit", "list", "validate", "version", "remove-timestamp"]
            .iter()
            .any(|l| p.has_long(l))
    {
        return None;
    }
    let mut rest = &args[p.operand..];
    let assigned = super::wrappers::assignments(&mut rest);
    let mut steps = Vec::new();
    if !assigned.is_empty() {
        steps.push(Step::new("sudo", Inner::Assign(assigned)));
    }
    if !rest.is_empty() {
        // `-s`/`-i` with a command: the shell runs it as a line.
        steps.push(
            if p.has('s') || p.has('i') || p.has_long("shell") || p.has_long("login") {
                Step::new("sudo -s", Inner::Line(rest.join(" ")))
            } else {
                Step::new("sudo", Inner::Argv(owned(rest)))
            },
        );
    }
    (!steps.is_empty()).then_some(steps)
}

/// `doas [-Lns] [-C config] [-u user] cmd...`
pub(super) fn doas(args: &[String]) -> Option<Vec<Step>> {
    let spec = Spec {
        short_val: "Cu",
        ..Spec::default()
    };
    let p = parse(args, &spec);
    let rest = &args[p.operand..];
    if p.has('C') || p.has('L') || rest.is_empty() {
        return None;
    }
    Some(vec![Step::new("doas", Inner::Argv(owned(rest)))])
}

/// `su [opts] [-] [user] [-c LINE]`: the line is a shell line. Without
/// `-c` it starts an interactive shell, which runs nothing we can see.
pub(super) fn su(args: &[String]) -> Option<Vec<Step>> {
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        let line = if matches!(a, "-c" | "--command" | "--session-command") {
            args.get(i + 1).map(String::as_str)
        } else if let Some(v) = a
            .strip_prefix("--command=")
            .or_else(|| a.strip_prefix("--session-command="))
        {
            Some(v)
        } else if a.len() > 2
            && a.starts_with('-')
            && !a.starts_with("--")
            && a.ends_with('c')
            && a[1..a.len() - 1].bytes().all(|b| b"lmpfP".contains(&b))
        {
            args.get(i + 1).map(String::as_str)
        } else {
            None
        };
        if let Some(line) = line {
            return Some(vec![Step::new("su -c", Inner::Line(line.to_string()))]);
        }
        i += 1;
    }
    None
}
