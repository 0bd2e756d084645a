//! A program that asks its terminal something gets the answer a terminal would give:
//! where the cursor is, and what kind of terminal this is.

use crate::common;
use crate::pty_common;

use common::Fixture;
use pty_common::{start_bash, write_until};

#[test]
fn a_cursor_position_request_is_answered() {
    let fx = Fixture::new();
    let run = fx.run();
    let h = start_bash(&run);
    // Home, clear, move to row 3 column 5, then ask; read the answer without echo.
    let ask = "printf '\\033[H\\033[2J\\033[3;5H\\033[6n'; IFS= read -rs -t 3 -d R pos; \
               echo \"cursor=${pos#*[}.\"\n";
    let seen = write_until(&run, h, ask, "cursor=3;5.");
    assert!(seen.contains("cursor=3;5."), "{seen:?}");
}

#[test]
fn a_device_attributes_request_is_answered() {
    let fx = Fixture::new();
    let run = fx.run();
    let h = start_bash(&run);
    let ask = "printf '\\033[c'; IFS= read -rs -t 3 -d c da; echo \"da=${da#*[}.\"\n";
    let seen = write_until(&run, h, ask, "da=?1;2.");
    assert!(seen.contains("da=?1;2."), "{seen:?}");
}
