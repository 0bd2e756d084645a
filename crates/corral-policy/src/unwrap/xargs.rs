//! `xargs [opts] [cmd [initial-args]...]`: runs `cmd` (default `echo`) with
//! more arguments read from stdin, which cannot be known here. The inner
//! command is checked with the arguments that are known.

use super::opts::{Spec, parse};
use super::{Inner, Step, owned};

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

pub(super) fn xargs(args: &[String]) -> Option<Vec<Step>> {
    let p = parse(args, &XARGS);
    let rest = &args[p.operand..];
    let inner = if rest.is_empty() {
        vec!["echo".to_string()]
    } else {
        owned(rest)
    };
    Some(vec![Step::new("xargs", Inner::Argv(inner))])
}
