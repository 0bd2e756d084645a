//! `xargs [opts] [cmd [initial-args]...]`: runs `cmd` (default `echo`) with
//! more arguments read from stdin, which cannot be known here. The inner
//! command is checked with the arguments that are known.

use super::opts::{Spec, parse};
use super::step::RunsUnknown;
use super::step::{Inner, Step, UNKNOWN, owned};

const XARGS: Spec = Spec {
    short_val: "adEILnPs",
    short_opt: "eil",
    long_val: &[
        "arg-file",
        "delimiter",
        "max-args",
        "max-procs",
        "max-chars",
        "process-slot-var",
    ],
    numeric: false,
};

pub(super) fn xargs(args: &[String], unknown_runs: RunsUnknown) -> Option<Vec<Step>> {
    let p = parse(args, &XARGS);
    let rest = &args[p.operand..];
    let inner = if rest.is_empty() {
        vec!["echo".to_string()]
    } else {
        owned(rest)
    };
    // What it reads replaces `-I STR` (`-i` is `{}`), or is appended.
    let replace = p
        .value("I")
        .or_else(|| p.has('i').then(|| p.value("i").unwrap_or("{}")))
        .or_else(|| p.value("replace"))
        .filter(|r| !r.is_empty());
    let probe: Vec<String> = match replace {
        Some(r) => inner.iter().map(|a| a.replace(r, UNKNOWN)).collect(),
        None => inner.iter().cloned().chain([UNKNOWN.to_string()]).collect(),
    };
    let mut steps = vec![Step::new("xargs", Inner::Argv(inner))];
    steps.extend(unknown_runs("xargs", &probe));
    steps.push(Step::new("xargs", Inner::MoreArgs(probe)));
    Some(steps)
}
