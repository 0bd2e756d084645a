//! A pipe handle with a writable stdin (`stdin: true`): what is written reaches the
//! program; a handle without input says how to start one that has it.

use crate::common;
use crate::pty_common;

use std::time::Duration;

use common::{Fixture, testbin};
use corral::{
    Status, handle::HandleState, handle::ScreenRequest, handle::StartRequest, handle::WriteRequest,
};
use pty_common::until_output;

#[test]
fn cat_echoes_what_is_written_and_ends_at_eof() {
    let fx = Fixture::new();
    let run = fx.run();
    let h = run
        .shell_start(&StartRequest::new("cat").with_stdin())
        .unwrap()
        .handle;
    let marker = format!("stdin-{}", std::process::id());
    let p = run
        .shell_write(&WriteRequest {
            handle: h,
            text: format!("{marker}\n"),
            yield_ms: Some(3000),
            ..Default::default()
        })
        .unwrap();
    let seen = if p.output.contains(&marker) {
        p.output
    } else {
        until_output(&run, h, &marker, Duration::from_secs(5))
    };
    assert_eq!(seen, format!("{marker}\n"));
    let end = run
        .shell_write(&WriteRequest {
            handle: h,
            text: "last\n".into(),
            yield_ms: Some(3000),
            eof: true,
        })
        .unwrap();
    assert_eq!(
        end.state,
        HandleState::Exited {
            status: Status::Exited { code: 0 }
        },
        "{}",
        end.observation
    );
    assert_eq!(end.output, "last\n");
    // The trace has the write, with its handle.
    let steps = corral::trace::Store::open(&run.store_path())
        .unwrap()
        .steps(Some(run.id()), 100)
        .unwrap();
    assert!(
        steps
            .iter()
            .any(|s| s.tool == "shell_write" && s.call_json.contains(&marker)),
        "{steps:?}"
    );
}

#[test]
fn a_handle_without_input_says_how_to_start_one() {
    let fx = Fixture::new();
    let run = fx.run();
    let h = run
        .shell_start(&StartRequest::new(format!("{} sleep 2000", testbin())))
        .unwrap()
        .handle;
    let err = run
        .shell_write(&WriteRequest {
            handle: h,
            text: "x".into(),
            ..Default::default()
        })
        .unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("tty: true") && msg.contains("stdin: true"),
        "{msg}"
    );
    let err = run.shell_screen(&ScreenRequest { handle: h }).unwrap_err();
    assert!(err.to_string().contains("not a terminal"), "{err}");
}
