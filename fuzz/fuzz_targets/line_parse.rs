#![no_main]

use corral_line::{Command, RedirectOp, Span, parse};
use libfuzzer_sys::fuzz_target;

fn check(src: &str, span: Span) {
    assert!(
        span.start <= span.end && span.end <= src.len(),
        "{span:?} out of bounds"
    );
    assert!(src.is_char_boundary(span.start) && src.is_char_boundary(span.end));
}

fuzz_target!(|src: &str| {
    let line = match parse(src) {
        Ok(line) => line,
        Err(refusal) => {
            check(src, refusal.span);
            let _ = refusal.to_string();
            return;
        }
    };
    for pipeline in line.lists.iter().flat_map(|l| l.pipelines()) {
        check(src, pipeline.span);
    }
    for command in line.commands() {
        match command {
            Command::Cd(cd) => {
                check(src, cd.span);
                check(src, cd.dir.span);
            }
            Command::Simple(s) => {
                check(src, s.span);
                assert!(!s.argv.is_empty());
                s.argv.iter().for_each(|w| check(src, w.span));
                for a in &s.assignments {
                    check(src, a.span);
                    check(src, a.value.span);
                }
                for r in &s.redirects {
                    check(src, r.span);
                    if let RedirectOp::Read(w) | RedirectOp::Write(w) | RedirectOp::Append(w) =
                        &r.op
                    {
                        check(src, w.span);
                    }
                }
            }
        }
    }
});
