//! `shell_signal`: a signal to everything a handle started, without ending it: a trap
//! runs and the handle goes on; a signal that ends it shows its end; an unknown name is
//! a bad request naming those there are.

use crate::common;

use std::time::{Duration, Instant};

use common::Fixture;
use corral::handle::{HandleState, KillRequest, PollRequest, SignalRequest, StartRequest};
use corral::{ErrorKind, Status};

/// Poll `handle` until what it printed holds `text`, for at most 10 s.
fn until_printed(run: &corral::Run, handle: u32, text: &str) -> String {
    let until = Instant::now() + Duration::from_secs(10);
    let mut seen = String::new();
    while !seen.contains(text) && Instant::now() < until {
        let poll = run
            .shell_poll(&PollRequest {
                handle,
                wait_ms: Some(500),
                ..Default::default()
            })
            .unwrap();
        seen.push_str(&poll.output);
    }
    seen
}

#[test]
fn a_signal_reaches_the_handle_and_leaves_it_running() {
    let fx = Fixture::new();
    // `bash -c` with a line the grammar does not read is asked about: approved here.
    let run = fx.approving_run(corral::Config::default());
    let started = run
        .shell_start(&StartRequest {
            line: "bash -c 'trap \"echo got INT\" INT; echo ready; while :; do sleep 0.05; done'"
                .into(),
            ..Default::default()
        })
        .unwrap();
    let handle = started.handle;
    assert!(until_printed(&run, handle, "ready").contains("ready"));

    let answer = run
        .shell_signal(&SignalRequest {
            handle,
            signal: "SIGINT".into(),
        })
        .unwrap();
    let mut seen = answer.output.clone();
    if !seen.contains("got INT") {
        seen.push_str(&until_printed(&run, handle, "got INT"));
    }
    assert!(seen.contains("got INT"), "{seen}");
    assert_eq!(answer.state, HandleState::Running, "{}", answer.observation);

    let bad = run
        .shell_signal(&SignalRequest {
            handle,
            signal: "NOPE".into(),
        })
        .unwrap_err();
    assert_eq!(bad.kind(), ErrorKind::InvalidRequest);
    assert!(bad.to_string().contains("TERM"), "{bad}");

    // TERM is not trapped: bash ends by it, and the answer (or the next poll) says so.
    run.shell_signal(&SignalRequest {
        handle,
        signal: "term".into(),
    })
    .unwrap();
    let until = Instant::now() + Duration::from_secs(10);
    let ended = loop {
        let poll = run
            .shell_poll(&PollRequest {
                handle,
                wait_ms: Some(500),
                ..Default::default()
            })
            .unwrap();
        if poll.state != HandleState::Running || Instant::now() > until {
            break poll.state;
        }
    };
    assert!(
        matches!(
            ended,
            HandleState::Exited {
                status: Status::Signaled { .. } | Status::Exited { .. }
            }
        ),
        "{ended:?}"
    );
    // A signal to an ended handle sends nothing and says how it ended.
    let after = run
        .shell_signal(&SignalRequest {
            handle,
            signal: "INT".into(),
        })
        .unwrap();
    assert_eq!(after.state, ended);
    run.shell_kill(&KillRequest { handle }).unwrap();
}
