//! `paste:TEXT` arrives bracketed when the program turned bracketed paste on.

use crate::common;
use crate::pty_common;

use std::time::Duration;

use common::Fixture;
use corral::handle::KeysRequest;
use pty_common::{start_tty, until_output};

const SCRIPT: &str = r#"
import os, sys, tty
tty.setraw(0)
sys.stdout.write("\x1b[?2004hREADY\r\n")
sys.stdout.flush()
got = b""
while not got.endswith(b"\x1b[201~"):
    got += os.read(0, 1024)
sys.stdout.write("GOT " + got.hex() + "\r\n")
sys.stdout.flush()
"#;

#[test]
fn a_paste_is_bracketed_when_the_program_asked_for_it() {
    let fx = Fixture::new();
    std::fs::write(fx.workspace().join("paste.py"), SCRIPT).unwrap();
    let run = fx.run();
    let h = start_tty(&run, "python3 paste.py");
    until_output(&run, h, "READY", Duration::from_secs(10));
    let p = run
        .shell_keys(&KeysRequest {
            handle: h,
            keys: vec!["paste:hi there".into()],
            yield_ms: Some(3000),
        })
        .unwrap();
    let want = format!("GOT {}", hex(b"\x1b[200~hi there\x1b[201~"));
    let seen = if p.output.contains(&want) {
        p.output
    } else {
        until_output(&run, h, &want, Duration::from_secs(5))
    };
    assert!(seen.contains(&want), "{seen:?}");
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
