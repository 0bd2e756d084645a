//! Handles are checked like `shell`, capped per run, killed with their whole tree, and
//! ended with the run however it ends.

use crate::common;

use std::time::Duration;

use common::{Fixture, cleanup, marker, survivors_after, testbin};
use corral::policy::{Act, Effect};
use corral::{
    Config, ErrorKind, Policy, Run, handle::HandleState, handle::KillRequest, handle::PollRequest,
    handle::StartRequest,
};

#[test]
fn a_refused_line_starts_nothing() {
    let fx = Fixture::new();
    let run = Run::builder(fx.workspace())
        .store(fx.store())
        .policy(
            Policy::permissive()
                .layer("ops")
                .rule(Act::Exec, "rm", Effect::Deny),
        )
        .open()
        .unwrap();
    let err = run
        .shell_start(&StartRequest::new("touch made && rm made"))
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Refused);
    let err = run
        .shell_start(&StartRequest::new("ls $(pwd)"))
        .unwrap_err();
    assert!(err.line_refusal().is_some());
    assert!(!fx.workspace().join("made").exists());
}

#[test]
fn the_cap_refuses_the_next_start_and_a_kill_makes_room() {
    let fx = Fixture::new();
    let run = fx.run_with(Config {
        max_handles: 2,
        ..Config::default()
    });
    let mark = marker("cap");
    let line = format!("{} sleep 30000 {mark}", testbin());
    let a = run.shell_start(&StartRequest::new(&line)).unwrap().handle;
    run.shell_start(&StartRequest::new(&line)).unwrap();
    let err = run.shell_start(&StartRequest::new(&line)).unwrap_err();
    assert!(
        err.to_string().contains("the most it may have (2)")
            && err.to_string().contains("shell_kill"),
        "{err}"
    );
    run.shell_kill(&KillRequest { handle: a }).unwrap();
    run.shell_start(&StartRequest::new(&line)).unwrap();
    drop(run);
    assert!(survivors_after(&mark, Duration::from_secs(3)).is_empty());
}

#[test]
fn kill_ends_the_tree_and_is_idempotent() {
    let fx = Fixture::new();
    let run = fx.run();
    let mark = marker("kill");
    let h = run
        .shell_start(&StartRequest::new(format!(
            "{} daemon 30000 {mark} ; {} sleep 30000 {mark}",
            testbin(),
            testbin()
        )))
        .unwrap()
        .handle;
    // Both are running: the daemon that left its parent, and the sleep after it.
    let until = std::time::Instant::now() + Duration::from_secs(10);
    while common::processes_with(&mark).len() < 2 && std::time::Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    let first = run.shell_kill(&KillRequest { handle: h }).unwrap();
    assert_eq!(first.state, HandleState::Killed);
    let left = survivors_after(&mark, Duration::from_secs(3));
    cleanup(&mark);
    assert!(left.is_empty(), "survivors: {left:?}");
    let again = run.shell_kill(&KillRequest { handle: h }).unwrap();
    assert_eq!(again.state, HandleState::Killed);
    let polled = run
        .shell_poll(&PollRequest {
            handle: h,
            wait_ms: None,
            ..Default::default()
        })
        .unwrap();
    assert_eq!(polled.state, HandleState::Killed);
}

#[test]
fn killing_a_handle_that_exited_reports_how_it_ended() {
    let fx = Fixture::new();
    let run = fx.run();
    let h = run
        .shell_start(&StartRequest::new(format!("{} exit 3", testbin())))
        .unwrap()
        .handle;
    // A poll that waits returns when the handle's state changes.
    let until = std::time::Instant::now() + Duration::from_secs(10);
    while std::time::Instant::now() < until {
        let polled = run
            .shell_poll(&PollRequest {
                handle: h,
                wait_ms: Some(1000),
                ..Default::default()
            })
            .unwrap();
        if polled.state != HandleState::Running {
            break;
        }
    }
    let p = run.shell_kill(&KillRequest { handle: h }).unwrap();
    assert_eq!(
        p.state,
        HandleState::Exited {
            status: corral::Status::Exited { code: 3 }
        }
    );
}

#[test]
fn an_unknown_handle_says_which_exist() {
    let fx = Fixture::new();
    let run = fx.run();
    let err = run
        .shell_poll(&PollRequest {
            handle: 9,
            wait_ms: None,
            strip_ansi: None,
        })
        .unwrap_err();
    assert!(err.to_string().contains("started none"), "{err}");
}

#[test]
fn the_end_of_the_run_ends_every_handle_even_on_panic() {
    let fx = Fixture::new();
    let mark = marker("run-end");
    let line = format!("{} pair 30000 {mark}", testbin());
    let closed = fx.run();
    closed.shell_start(&StartRequest::new(&line)).unwrap();
    closed.close().unwrap();
    assert!(
        survivors_after(&mark, Duration::from_secs(3)).is_empty(),
        "close left survivors"
    );

    let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let run = fx.run();
        run.shell_start(&StartRequest::new(&line)).unwrap();
        panic!("an error carried out of the agent loop");
    }));
    assert!(panicked.is_err());
    let left = survivors_after(&mark, Duration::from_secs(3));
    cleanup(&mark);
    assert!(left.is_empty(), "a panic left survivors: {left:?}");

    let store = corral::trace::Store::open_existing(&fx.store()).unwrap();
    let runs = store.runs(10).unwrap();
    assert!(runs.iter().any(|r| r.ended_how.as_deref() == Some("panic")));
    for r in &runs {
        for h in store.handles(&r.id).unwrap() {
            assert_eq!(h.how.as_deref(), Some("run_ended"), "{h:?}");
        }
    }
}

#[test]
fn a_resumed_run_reports_the_old_handles_as_orphaned() {
    let fx = Fixture::new();
    let mark = marker("orphan");
    let old = fx.run();
    let id = old.id().to_string();
    let h = old
        .shell_start(&StartRequest::new(format!(
            "{} sleep 30000 {mark}",
            testbin()
        )))
        .unwrap()
        .handle;
    let until = std::time::Instant::now() + Duration::from_secs(5);
    while common::processes_with(&mark).is_empty() && std::time::Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    // The old process "dies": nothing records an end.
    std::mem::forget(old);

    let resumed = Run::builder(fx.workspace())
        .store(fx.store())
        .policy(Policy::permissive())
        .resume(&id)
        .open()
        .unwrap();
    let p = resumed
        .shell_poll(&PollRequest {
            handle: h,
            wait_ms: None,
            ..Default::default()
        })
        .unwrap();
    assert_eq!(p.state, HandleState::Orphaned);
    assert!(
        p.observation.contains("Start again what you still need"),
        "{}",
        p.observation
    );
    let k = resumed.shell_kill(&KillRequest { handle: h }).unwrap();
    assert_eq!(k.state, HandleState::Orphaned);
    // Never signalled: the old process is still there until we clean up.
    assert!(
        !common::processes_with(&mark).is_empty(),
        "an orphan must not be signalled"
    );
    cleanup(&mark);
    let next = resumed
        .shell_start(&StartRequest::new("true"))
        .unwrap()
        .handle;
    assert_eq!(next, h + 1, "ids continue after the orphans");
}
