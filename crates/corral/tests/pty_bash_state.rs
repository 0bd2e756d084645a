//! A shell on a terminal keeps its state between writes: what one write exports, the
//! next sees.

use crate::common;
use crate::pty_common;

use common::Fixture;
use pty_common::{start_bash, write, write_until};

#[test]
fn bash_keeps_its_variables_between_writes() {
    let fx = Fixture::new();
    let run = fx.run();
    let h = start_bash(&run);
    write(&run, h, "export FOO=bar\n");
    let seen = write_until(&run, h, "echo \"v=$FOO\"\n", "v=bar");
    assert!(seen.contains("v=bar"), "{seen:?}");
}

#[test]
fn a_terminal_handle_sees_a_real_term() {
    let fx = Fixture::new();
    let run = fx.run();
    let h = start_bash(&run);
    let seen = write_until(&run, h, "echo \"term=$TERM tty=$(tty)\"\n", "tty=/dev/pts/");
    assert!(seen.contains("term=xterm-256color"), "{seen:?}");
}
