//! When whatever reads corral's output stops reading (`corral exec -- yes | head -2`), the
//! command is ended at once and corral exits 141, as the last stage of a shell pipeline
//! ended by SIGPIPE would; the call is in the trace.

use crate::common;

use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::{Scratch, text};

/// Run `corral ARGS` with its stdout read until `lines` lines came, then closed; its exit
/// status, waited for at most 20 s (the command alone would run far longer).
fn read_then_close(s: &Scratch, args: &[&str], lines: usize) -> Option<i32> {
    let mut child = s.corral(args).stdout(Stdio::piped()).spawn().unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    for _ in 0..lines {
        line.clear();
        assert!(out.read_line(&mut line).unwrap() > 0);
    }
    drop(out);
    let until = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status.code();
        }
        if Instant::now() > until {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("corral kept running after its reader went away");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn an_endless_writer_is_ended_when_the_reader_goes() {
    let s = Scratch::new();
    let marker = format!("corral-closed-stdout-{}", std::process::id());
    let code = read_then_close(&s, &["exec", "--", "yes", &marker], 2);
    let left = corral_test_support::processes_with(&marker);
    corral_test_support::cleanup(&marker);
    assert_eq!(code, Some(141));
    assert!(left.is_empty(), "the writer outlived corral: {left:?}");

    // The call is recorded, and ended.
    let steps = s.output(&["trace", "steps"]);
    let listing = text(&steps.stdout);
    assert!(listing.contains("cancelled"), "{listing}");
    assert!(!listing.contains("running"), "{listing}");
}

#[test]
fn a_writer_that_finishes_first_still_exits_141() {
    let s = Scratch::new();
    let code = read_then_close(&s, &["exec", "--", "seq", "1", "1000000"], 1);
    assert_eq!(code, Some(141));
}

#[test]
fn a_line_is_ended_the_same_way() {
    let s = Scratch::new();
    let code = read_then_close(&s, &["shell", "yes | cat"], 2);
    assert_eq!(code, Some(141));
}
