//! A resize reaches the program: `stty size` reports it, and the screen has the new size.

use crate::common;
use crate::pty_common;

use common::Fixture;
use corral::handle::ResizeRequest;
use pty_common::{start_bash, write_until};

fn size_after(run: &corral::Run, h: u32, want: &str) -> String {
    write_until(run, h, "stty size\n", want)
}

#[test]
fn stty_size_reports_a_resize() {
    let fx = Fixture::new();
    let run = fx.run();
    let h = start_bash(&run);
    assert!(size_after(&run, h, "24 80").contains("24 80"));
    let s = run
        .shell_resize(&ResizeRequest {
            handle: h,
            rows: 30,
            cols: 100,
        })
        .unwrap();
    assert_eq!((s.rows, s.cols), (30, 100));
    assert!(size_after(&run, h, "30 100").contains("30 100"));
    let err = run
        .shell_resize(&ResizeRequest {
            handle: h,
            rows: 0,
            cols: 100,
        })
        .unwrap_err();
    assert!(err.to_string().contains("rows and cols"), "{err}");
}
