//! Writing to a session that has ended answers how it ended; what a terminal cannot run
//! is refused by name before anything starts.

use crate::common;
use crate::pty_common;

use common::Fixture;
use corral::{
    Status, handle::HandleState, handle::KeysRequest, handle::PollRequest, handle::ScreenRequest,
    handle::StartRequest, handle::WriteRequest,
};
use pty_common::start_tty;

#[test]
fn writing_to_an_ended_session_answers_how_it_ended() {
    let fx = Fixture::new();
    std::fs::write(
        fx.workspace().join("end.py"),
        "print('bye')\nraise SystemExit(3)\n",
    )
    .unwrap();
    let run = fx.run();
    let h = start_tty(&run, "python3 end.py");
    let mut p = run
        .shell_poll(&PollRequest {
            handle: h,
            wait_ms: Some(5000),
            ..Default::default()
        })
        .unwrap();
    while p.state == HandleState::Running {
        p = run
            .shell_poll(&PollRequest {
                handle: h,
                wait_ms: Some(5000),
                ..Default::default()
            })
            .unwrap();
    }
    let ended = HandleState::Exited {
        status: Status::Exited { code: 3 },
    };
    let w = run
        .shell_write(&WriteRequest {
            handle: h,
            text: "hello\n".into(),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(w.state, ended);
    assert!(
        w.observation.contains("exit 3") || w.observation.contains('3'),
        "{}",
        w.observation
    );
    let k = run
        .shell_keys(&KeysRequest {
            handle: h,
            keys: vec!["Enter".into()],
            yield_ms: None,
        })
        .unwrap();
    assert_eq!(k.state, ended);
    // Its last screen is still there.
    let s = run.shell_screen(&ScreenRequest { handle: h }).unwrap();
    assert_eq!(s.lines.first().map(String::as_str), Some("bye"));
}

#[test]
fn pipelines_lists_and_redirects_are_refused_on_a_terminal() {
    let fx = Fixture::new();
    let run = fx.run();
    for (line, what) in [
        ("echo a | cat", "a pipeline"),
        ("echo a && echo b", "a list"),
        ("echo a > out.txt", "a redirect"),
    ] {
        let err = run
            .shell_start(&StartRequest::new(line).on_tty())
            .unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.contains(what) && msg.contains("bash -c"),
            "{line}: {msg}"
        );
    }
    assert!(!fx.workspace().join("out.txt").exists());
    let err = run
        .shell_keys(&KeysRequest {
            handle: start_tty(&run, "cat"),
            keys: vec!["Entr".into()],
            yield_ms: None,
        })
        .unwrap_err();
    assert!(err.to_string().contains("BSpace"), "{err}");
}
