//! `find`: every `-exec`, `-execdir`, `-ok` and `-okdir` clause runs a
//! command; `-delete` removes files, so it is checked as if `rm` were run
//! on find's starting points.

use super::{Inner, Step};

pub(super) fn find(args: &[String]) -> Option<Vec<Step>> {
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
                steps.push(Step::new(
                    format!("find {a}"),
                    Inner::Argv(args[start..end].to_vec()),
                ));
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
