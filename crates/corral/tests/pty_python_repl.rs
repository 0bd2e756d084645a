//! A Python REPL on a terminal: a line written is evaluated and its answer comes back
//! from the same write.

use crate::common;
use crate::pty_common;

use std::time::Duration;

use common::Fixture;
use corral::{handle::HandleState, handle::WriteRequest};
use pty_common::{start_tty, until_output};

#[test]
fn a_python_repl_answers_what_is_typed() {
    let fx = Fixture::new();
    let run = fx.run();
    let h = start_tty(&run, "python3 -q");
    until_output(&run, h, ">>> ", Duration::from_secs(10));
    let answer = run
        .shell_write(&WriteRequest {
            handle: h,
            text: "print(6*7)\n".into(),
            yield_ms: Some(5000),
            ..Default::default()
        })
        .unwrap();
    let seen = if answer.output.contains("42") {
        answer.output
    } else {
        answer.output + &until_output(&run, h, "42", Duration::from_secs(5))
    };
    assert!(seen.contains("42"), "{seen:?}");
    assert_eq!(answer.state, HandleState::Running);
    // The terminal's escapes are stripped by default and lines end in \n.
    assert!(!seen.contains('\x1b') && !seen.contains("\r\n"), "{seen:?}");
}
