//! A `yield_ms` call is a foreground call that may outlive its wait: what it records, how
//! it ends, the directory it keeps and its place at the handle cap are a foreground
//! call's; a handle it leaves behind leaves the run's table once read to its end.

use crate::common;

use std::time::Duration;

use common::{Fixture, testbin};
use corral::handle::{HandleState, KillRequest, PollRequest, StartRequest};
use corral::{Config, ExecRequest, ShellRequest, Status};
use corral_trace::Store;

#[test]
fn a_yielded_call_that_ends_in_time_is_recorded_as_a_foreground_call() {
    let fx = Fixture::new();
    let run = fx.run();
    let mut request = ExecRequest::new([testbin(), "exit".into(), "4".into()]);
    request.yield_ms = Some(10_000);
    let outcome = run.exec(&request).unwrap();
    assert_eq!(outcome.status, Status::Exited { code: 4 });

    let store = Store::open_existing(&fx.store()).unwrap();
    let step = store.steps(Some(run.id()), 1).unwrap().remove(0);
    let argv: Vec<Vec<String>> = serde_json::from_str(step.argv_json.as_deref().unwrap())
        .unwrap_or_else(|_| {
            vec![serde_json::from_str(step.argv_json.as_deref().unwrap()).unwrap()]
        });
    assert_eq!(argv[0][1..], ["exit", "4"], "{:?}", step.argv_json);
    assert_eq!(step.exit_code, Some(4));
    assert_eq!(step.outcome.as_deref(), Some("exited"));
    assert!(step.duration_ms.is_some());
    assert!(step.containment.is_some());
}

#[test]
fn a_yielded_call_past_its_timeout_is_recorded_as_timed_out() {
    let fx = Fixture::new();
    let run = fx.run();
    let request = ShellRequest::new(format!("{} sleep 30000", testbin()))
        .timeout(Duration::from_millis(300))
        .yield_after(20_000);
    let outcome = run.shell(&request).unwrap();
    assert!(
        matches!(outcome.status, Status::TimedOut { .. }),
        "{:?}",
        outcome.status
    );
    let store = Store::open_existing(&fx.store()).unwrap();
    let step = store.steps(Some(run.id()), 1).unwrap().remove(0);
    assert_eq!(step.outcome.as_deref(), Some("timed_out"));
    assert!(step.timed_out);
}

#[test]
fn at_the_handle_cap_a_yield_runs_in_the_foreground() {
    let fx = Fixture::new();
    let run = fx.run_with(Config {
        max_handles: 1,
        ..Config::default()
    });
    let busy = run
        .shell_start(&StartRequest {
            line: format!("{} sleep 30000", testbin()),
            ..Default::default()
        })
        .unwrap();
    let mut request = ExecRequest::new([testbin(), "exit".into(), "3".into()]);
    request.yield_ms = Some(100);
    let outcome = run.exec(&request).unwrap();
    assert_eq!(outcome.status, Status::Exited { code: 3 });
    run.shell_kill(&KillRequest {
        handle: busy.handle,
    })
    .unwrap();
}

#[test]
fn a_yielded_line_ending_in_cd_keeps_the_directory() {
    let fx = Fixture::new();
    std::fs::create_dir(fx.workspace().join("sub")).unwrap();
    let run = fx.run_with(Config {
        persist_cwd: true,
        ..Config::default()
    });
    let outcome = run
        .shell(&ShellRequest::new("cd sub").yield_after(10_000))
        .unwrap();
    assert_eq!(outcome.status, Status::Exited { code: 0 });
    let next = run.shell(&ShellRequest::new("pwd")).unwrap();
    assert!(
        next.stdout.window.head.trim_end().ends_with("/sub"),
        "{}",
        next.observation
    );
}

#[test]
fn a_handle_read_to_its_end_leaves_the_table_and_still_answers() {
    let fx = Fixture::new();
    let run = fx.run();
    for n in 0..20 {
        let line = format!("echo yielded {n}");
        let outcome = run
            .shell(&ShellRequest::new(line).yield_after(10_000))
            .unwrap();
        assert_eq!(outcome.status, Status::Exited { code: 0 });
    }
    let debug = format!("{run:?}");
    assert!(debug.contains("live: 0"), "{debug}");
    // A later poll of one still says how it ended, and its output can be read back.
    // Each yielded call ran as a handle, numbered from 1.
    let handle = 20;
    let poll = run
        .shell_poll(&PollRequest {
            handle,
            ..Default::default()
        })
        .unwrap();
    assert!(matches!(poll.state, HandleState::Exited { .. }), "{poll:?}");
    let read = run
        .output(&corral::OutputRequest {
            handle: Some(handle),
            ..Default::default()
        })
        .unwrap();
    assert!(
        read.observation.contains("yielded 19"),
        "{}",
        read.observation
    );
}

#[test]
fn a_handle_and_a_step_record_the_same_status_the_same_way() {
    let fx = Fixture::new();
    let run = fx.run();
    let line = "no-such-program-anywhere-here";
    let foreground = run.shell(&ShellRequest::new(line)).unwrap();
    let started = run
        .shell_start(&StartRequest {
            line: line.into(),
            ..Default::default()
        })
        .unwrap();
    // A poll that waits returns at news: its output, or its end.
    let until = std::time::Instant::now() + Duration::from_secs(10);
    let poll = loop {
        let poll = run
            .shell_poll(&PollRequest {
                handle: started.handle,
                wait_ms: Some(1_000),
                ..Default::default()
            })
            .unwrap();
        if poll.state != HandleState::Running || std::time::Instant::now() > until {
            break poll;
        }
    };
    assert!(matches!(poll.state, HandleState::Exited { .. }), "{poll:?}");
    let store = Store::open_existing(&fx.store()).unwrap();
    let step = store.steps(Some(run.id()), 2).unwrap();
    let step = step.iter().find(|s| s.tool == "shell").unwrap();
    let handle = store.handle(run.id(), started.handle).unwrap().unwrap();
    assert_eq!(
        step.exit_code,
        Some(foreground.status.cli_exit_code()),
        "{step:?}"
    );
    assert_eq!(handle.exit_code, step.exit_code, "{handle:?}");
    assert_eq!(handle.signal, step.signal);
}

/// A terminal step (`shell_write` here) ends through the queue every call's end takes: a
/// store another writer holds locked past SQLite's busy timeout does not fail the call,
/// and its row ends once the lock is gone.
#[test]
fn a_write_to_a_handle_outlasts_a_locked_store() {
    let fx = Fixture::new();
    let run = fx.run();
    let started = run
        .shell_start(&StartRequest {
            line: format!("{} sleep 30000", testbin()),
            stdin: true,
            ..Default::default()
        })
        .unwrap();
    let store = fx.store();
    let locker = std::thread::spawn(move || {
        let db = rusqlite::Connection::open(store).unwrap();
        db.busy_timeout(Duration::from_secs(10)).unwrap();
        let count = || -> i64 {
            db.query_row("SELECT count(*) FROM steps", [], |r| r.get(0))
                .unwrap()
        };
        // Once the write's step row is there (the start's is the first), hold the store
        // past the write's end and the 5 s busy timeout.
        let until = std::time::Instant::now() + Duration::from_secs(10);
        while count() < 2 && std::time::Instant::now() < until {
            std::thread::sleep(Duration::from_millis(2));
        }
        db.execute_batch("BEGIN EXCLUSIVE").unwrap();
        std::thread::sleep(Duration::from_secs(8));
        db.execute_batch("COMMIT").unwrap();
    });
    let wrote = run.shell_write(&corral::handle::WriteRequest {
        handle: started.handle,
        text: "nothing is read\n".into(),
        yield_ms: Some(1_000),
        eof: false,
    });
    locker.join().unwrap();
    assert!(wrote.is_ok(), "{wrote:?}");
    run.shell_kill(&KillRequest {
        handle: started.handle,
    })
    .unwrap();
    run.close().unwrap();
    let store = Store::open_existing(&fx.store()).unwrap();
    let steps = store.steps(Some(run.id()), 10).unwrap();
    let write = steps.iter().find(|s| s.tool == "shell_write").unwrap();
    assert_ne!(write.outcome, None, "{write:?}");
    assert!(steps.iter().all(|s| s.outcome.is_some()), "{steps:?}");
}
