//! Running as someone else: `sudo`, `doas`, `su`.

use super::opts::{Spec, parse};
use super::{Inner, Step, owned};

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
    while rest.first().is_some_and(|a| a.contains('=')) {
        rest = &rest[1..];
    }
    (!rest.is_empty()).then(|| vec![Step::new("sudo", Inner::Argv(owned(rest)))])
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
