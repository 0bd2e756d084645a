//! `find`: every `-exec`, `-execdir`, `-ok` and `-okdir` clause runs a
//! command; `-delete` removes files, so it is checked as if `rm` were run
//! on find's starting points.

use super::step::RunsUnknown;
use super::step::{Inner, Step, UNKNOWN};

pub(super) fn find(args: &[String], unknown_runs: RunsUnknown) -> Option<Vec<Step>> {
    let mut steps = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        if matches!(a, "-exec" | "-execdir" | "-ok" | "-okdir") {
            let start = i + 1;
            let mut end = start;
            while end < args.len() && !matches!(args[end].as_str(), ";" | "+") {
                end += 1;
            }
            if end > start {
                let via = format!("find {a}");
                let inner = args[start..end].to_vec();
                // `{}` is a file name, which whoever can create files chooses.
                let probe: Vec<String> = inner.iter().map(|w| w.replace("{}", UNKNOWN)).collect();
                let opaque = unknown_runs(&via, &probe);
                steps.push(Step::new(via.clone(), Inner::Argv(inner)));
                steps.extend(opaque);
                steps.push(Step::new(via, Inner::MoreArgs(probe)));
            }
            i = end + 1;
            continue;
        }
        if a == "-delete" {
            let mut rm = vec!["rm".to_string()];
            rm.extend(
                args.iter()
                    .take_while(|s| !s.starts_with('-') && !matches!(s.as_str(), "(" | "!"))
                    .cloned(),
            );
            steps.push(Step::new("find -delete", Inner::Argv(rm)));
        }
        i += 1;
    }
    (!steps.is_empty()).then_some(steps)
}
