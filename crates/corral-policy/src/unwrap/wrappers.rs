//! Wrappers that run their operand as a command: `env`, `nice`, `nohup`,
//! `timeout`, `stdbuf`, `setsid`, `time`, `command`, `exec`, `chroot`,
//! `ionice`, `taskset`, `chrt`, `unbuffer`, `flock`.

use super::opts::{Spec, parse};
use super::step::{Inner, Step, owned};

fn run(via: &str, rest: &[String]) -> Option<Vec<Step>> {
    if rest.is_empty() {
        None
    } else {
        Some(vec![Step::new(via, Inner::Argv(owned(rest)))])
    }
}

/// Options only, then the command (`nohup`, `setsid`, `unbuffer`).
pub(super) fn simple(name: &str, args: &[String]) -> Option<Vec<Step>> {
    let p = parse(args, &Spec::default());
    run(name, &args[p.operand..])
}

const ENV: Spec = Spec {
    short_val: "uCS",
    short_opt: "",
    long_val: &["unset", "chdir", "split-string"],
    numeric: false,
};

/// `env [-i] [-u NAME] [-C DIR] [-S STRING] [NAME=VALUE]... [--] [cmd...]`.
/// `-S` splits its string on whitespace (an approximation of its own
/// quoting rules) and is read again as `env`'s arguments.
pub(super) fn env(args: &[String]) -> Option<Vec<Step>> {
    let p = parse(args, &ENV);
    let split = p.value("S").or_else(|| p.value("split-string"));
    let mut rest = &args[p.operand..];
    if let Some(s) = split {
        let mut again = vec!["env".to_string()];
        again.extend(s.split_whitespace().map(str::to_string));
        again.extend(rest.iter().cloned());
        return Some(vec![Step::new("env -S", Inner::Argv(again))]);
    }
    let assigned = assignments(&mut rest);
    let mut steps = run("env", rest).unwrap_or_default();
    if !assigned.is_empty() {
        steps.insert(0, Step::new("env", Inner::Assign(assigned)));
    }
    (!steps.is_empty()).then_some(steps)
}

/// Take the leading `NAME=value` words off `rest`.
pub(super) fn assignments(rest: &mut &[String]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    while let Some((name, value)) = rest.first().and_then(|a| a.split_once('=')) {
        out.push((name.to_string(), value.to_string()));
        *rest = &rest[1..];
    }
    out
}

pub(super) fn nice(args: &[String]) -> Option<Vec<Step>> {
    let spec = Spec {
        short_val: "n",
        long_val: &["adjustment"],
        numeric: true,
        ..Spec::default()
    };
    let p = parse(args, &spec);
    run("nice", &args[p.operand..])
}

/// `timeout [opts] DURATION cmd...`
pub(super) fn timeout(args: &[String]) -> Option<Vec<Step>> {
    let spec = Spec {
        short_val: "sk",
        long_val: &["signal", "kill-after"],
        ..Spec::default()
    };
    let p = parse(args, &spec);
    run("timeout", args.get(p.operand + 1..).unwrap_or(&[]))
}

pub(super) fn stdbuf(args: &[String]) -> Option<Vec<Step>> {
    let spec = Spec {
        short_val: "ioe",
        long_val: &["input", "output", "error"],
        ..Spec::default()
    };
    let p = parse(args, &spec);
    run("stdbuf", &args[p.operand..])
}

/// The `time` program (`/usr/bin/time`), not the shell keyword.
pub(super) fn time(args: &[String]) -> Option<Vec<Step>> {
    let spec = Spec {
        short_val: "fo",
        long_val: &["format", "output"],
        ..Spec::default()
    };
    let p = parse(args, &spec);
    run("time", &args[p.operand..])
}

/// `command [-p] cmd...`; `command -v`/`-V` only describes.
pub(super) fn command(args: &[String]) -> Option<Vec<Step>> {
    let p = parse(args, &Spec::default());
    if p.has('v') || p.has('V') {
        return None;
    }
    run("command", &args[p.operand..])
}

/// `exec [-cl] [-a NAME] cmd...`
pub(super) fn exec(args: &[String]) -> Option<Vec<Step>> {
    let spec = Spec {
        short_val: "a",
        ..Spec::default()
    };
    let p = parse(args, &spec);
    run("exec", &args[p.operand..])
}

/// `chroot [opts] DIR [cmd...]` (without a command it starts a shell,
/// which is the decision on `chroot` itself).
pub(super) fn chroot(args: &[String]) -> Option<Vec<Step>> {
    let spec = Spec {
        long_val: &["userspec", "groups"],
        ..Spec::default()
    };
    let p = parse(args, &spec);
    run("chroot", args.get(p.operand + 1..).unwrap_or(&[]))
}

/// `ionice [-c CLASS] [-n LEVEL] [-t] cmd...`; with `-p`/`-P`/`-u` it
/// changes running processes and runs nothing.
pub(super) fn ionice(args: &[String]) -> Option<Vec<Step>> {
    let spec = Spec {
        short_val: "cnpPu",
        long_val: &["class", "classdata", "pid", "pgid", "uid"],
        ..Spec::default()
    };
    let p = parse(args, &spec);
    if p.has('p') || p.has('P') || p.has('u') {
        return None;
    }
    run("ionice", &args[p.operand..])
}

/// `taskset [-a] [-c] MASK cmd...`; with `-p` it runs nothing.
pub(super) fn taskset(args: &[String]) -> Option<Vec<Step>> {
    let p = parse(args, &Spec::default());
    if p.has('p') || p.has_long("pid") {
        return None;
    }
    run("taskset", args.get(p.operand + 1..).unwrap_or(&[]))
}

/// `chrt [opts] PRIORITY cmd...`; with `-p` it runs nothing.
pub(super) fn chrt(args: &[String]) -> Option<Vec<Step>> {
    let spec = Spec {
        short_val: "TPD",
        long_val: &["sched-runtime", "sched-period", "sched-deadline"],
        ..Spec::default()
    };
    let p = parse(args, &spec);
    if p.has('p') || p.has_long("pid") {
        return None;
    }
    run("chrt", args.get(p.operand + 1..).unwrap_or(&[]))
}

/// `flock [opts] FILE cmd...`, `flock [opts] FILE -c LINE`, or
/// `flock [opts] FD` (runs nothing).
pub(super) fn flock(args: &[String]) -> Option<Vec<Step>> {
    let spec = Spec {
        short_val: "wEc",
        long_val: &["timeout", "wait", "conflict-exit-code", "command"],
        ..Spec::default()
    };
    let p = parse(args, &spec);
    if let Some(line) = p.value("c").or_else(|| p.value("command")) {
        return Some(vec![Step::new("flock -c", Inner::Line(line.to_string()))]);
    }
    let rest = args.get(p.operand + 1..).unwrap_or(&[]);
    match rest.first().map(String::as_str) {
        Some("-c" | "--command") => rest
            .get(1)
            .map(|line| vec![Step::new("flock -c", Inner::Line(line.clone()))]),
        Some(a) if a.starts_with("--command=") => Some(vec![Step::new(
            "flock -c",
            Inner::Line(a["--command=".len()..].to_string()),
        )]),
        _ => run("flock", rest),
    }
}
