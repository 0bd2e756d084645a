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

/// A run that denies `touch forbidden*` (a rule held by its arguments) and approves what
/// is asked: starting a shell on a stdin pipe is asked about under such a rule, and so is
/// a line for the host shell.
fn denying_touch_forbidden(fx: &Fixture) -> corral::Run {
    corral::Run::builder(fx.workspace())
        .store(fx.store())
        .config(corral::Config {
            host_shell: corral::config::host_shell::HostShell::Ask,
            ..corral::Config::default()
        })
        .policy(
            corral::Policy::permissive()
                .layer("operator")
                .deny_exec("touch forbidden*"),
        )
        .approver(corral::approve::ApproveAll)
        .open()
        .unwrap()
}

fn write(run: &corral::Run, h: u32, text: &str) -> corral::Result<corral::handle::Poll> {
    run.shell_write(&WriteRequest {
        handle: h,
        text: text.into(),
        yield_ms: Some(200),
        ..Default::default()
    })
}

#[test]
fn a_shell_reading_its_stdin_gets_only_the_commands_the_policy_allows() {
    let fx = Fixture::new();
    let run = denying_touch_forbidden(&fx);
    let h = run
        .shell_start(&StartRequest::new("bash").with_stdin())
        .unwrap()
        .handle;
    // A line is checked whole, however it was split across writes.
    write(&run, h, "touch forbid").unwrap();
    let err = write(&run, h, "den\n").expect_err("the completed line is refused");
    assert_eq!(err.kind(), corral::ErrorKind::Refused, "{err}");
    assert!(err.to_string().contains("touch forbidden*"), "{err}");
    assert!(err.to_string().contains("None of this input"), "{err}");
    // An unfinished command is held until it is whole, then checked whole.
    write(&run, h, "for f in 1; do\n").unwrap();
    let err = write(&run, h, "  touch forbidden-too\ndone\n").expect_err("refused");
    assert!(err.to_string().contains("touch forbidden*"), "{err}");
    // What is allowed runs; what was refused never reached the shell.
    let p = write(&run, h, "touch fine && echo made-$((20+22))\n").unwrap();
    let seen = if p.output.contains("made-42") {
        p.output
    } else {
        until_output(&run, h, "made-42", Duration::from_secs(10))
    };
    assert!(seen.contains("made-42"), "{seen}");
    assert!(fx.workspace().join("fine").exists());
    for never in ["forbidden", "forbidden-too"] {
        assert!(!fx.workspace().join(never).exists(), "{never} was made");
    }
    // Input that ends inside an unfinished command is not passed on.
    write(&run, h, "if true; then touch late\n").unwrap();
    let err = run
        .shell_write(&WriteRequest {
            handle: h,
            text: String::new(),
            yield_ms: Some(200),
            eof: true,
        })
        .expect_err("an unfinished command at the end");
    assert!(err.to_string().contains("unfinished"), "{err}");
    assert!(!fx.workspace().join("late").exists());
    // The refusals are the write steps' own, in the trace.
    let events = corral::trace::Store::open(&run.store_path())
        .unwrap()
        .policy_events(Some(run.id()), true, 100)
        .unwrap();
    assert!(
        events
            .iter()
            .filter(|e| e.rule.as_deref() == Some("touch forbidden*"))
            .count()
            >= 2,
        "{events:?}"
    );
}

#[test]
fn a_program_reading_data_on_stdin_is_not_checked_line_by_line() {
    let fx = Fixture::new();
    let run = denying_touch_forbidden(&fx);
    let h = run
        .shell_start(&StartRequest::new("cat").with_stdin())
        .unwrap()
        .handle;
    let p = write(&run, h, "touch forbidden\n").unwrap();
    let seen = if p.output.contains("forbidden") {
        p.output
    } else {
        until_output(&run, h, "forbidden", Duration::from_secs(5))
    };
    assert_eq!(seen, "touch forbidden\n");
}
