//! A run opened with `housekeeping_in_background` (a command line's) prunes old captures
//! beside its first call instead of before it: by the time the run has ended they are
//! pruned as a run opened the usual way would have pruned them, and a prune that failed
//! is what `close` reports, with the run's end recorded all the same.

use crate::common;

use std::path::PathBuf;

use common::{Fixture, testbin};
use corral::{Config, ExecRequest, Run};

/// Keep the captures of the newest run only.
fn keep_one() -> Config {
    Config {
        keep_runs: 1,
        ..Config::default()
    }
}

fn background_run(fx: &Fixture) -> Run {
    Run::builder(fx.workspace())
        .store(fx.store())
        .config(keep_one())
        .policy(corral::Policy::permissive())
        .keep_trace_log()
        .housekeeping_in_background()
        .open()
        .unwrap()
}

/// A finished run whose one call printed: its capture directory.
fn printed_run(fx: &Fixture) -> PathBuf {
    let run = fx.run_with(keep_one());
    let outcome = run
        .exec(&ExecRequest::new([testbin(), "lines".into(), "3".into()]))
        .unwrap();
    let capture = outcome.stdout.capture.expect("a capture file");
    run.close().unwrap();
    capture.parent().unwrap().to_path_buf()
}

fn runs_pruned(fx: &Fixture) -> Vec<(String, bool)> {
    let store = corral_trace::Store::open_existing(&fx.store()).unwrap();
    let mut runs: Vec<_> = store
        .runs(100)
        .unwrap()
        .into_iter()
        .map(|r| (r.id, r.captures_pruned))
        .collect();
    runs.sort();
    runs
}

#[test]
fn the_first_call_prunes_what_the_open_would_have() {
    let fx = Fixture::new();
    let oldest = printed_run(&fx);
    let newest = printed_run(&fx);

    let run = background_run(&fx);
    let outcome = run
        .exec(&ExecRequest::new([testbin(), "lines".into(), "2".into()]))
        .unwrap();
    assert!(outcome.status.success(), "{}", outcome.observation);
    run.close().unwrap();

    assert!(
        !oldest.exists(),
        "past the retention, the oldest run's captures go"
    );
    assert!(newest.exists(), "the newest finished run's are always kept");
    let pruned: Vec<bool> = runs_pruned(&fx).into_iter().map(|(_, p)| p).collect();
    assert_eq!(pruned.iter().filter(|p| **p).count(), 1, "{pruned:?}");
}

#[test]
fn a_run_that_makes_no_call_prunes_as_it_ends() {
    let fx = Fixture::new();
    let oldest = printed_run(&fx);
    printed_run(&fx);

    background_run(&fx).close().unwrap();
    assert!(!oldest.exists());
}

#[test]
fn a_failed_prune_is_what_close_reports_and_the_run_still_ends() {
    let fx = Fixture::new();
    let oldest = printed_run(&fx);
    printed_run(&fx);
    // Where the oldest run's captures were, a file the prune cannot remove as a directory.
    std::fs::remove_dir_all(&oldest).unwrap();
    std::fs::write(&oldest, "not a directory").unwrap();

    let run = background_run(&fx);
    let id = run.id().to_owned();
    let outcome = run.exec(&ExecRequest::new([testbin(), "exit".into(), "0".into()]));
    assert!(
        outcome.unwrap().status.success(),
        "the call itself is not failed"
    );
    let err = run.close().expect_err("the prune's failure is reported");
    assert!(
        err.to_string().contains("capture"),
        "the error says what failed: {err}"
    );

    let store = corral_trace::Store::open_existing(&fx.store()).unwrap();
    let row = store.run(&id).unwrap().expect("the run's row");
    assert_eq!(
        row.ended_how.as_deref(),
        Some("closed"),
        "its end is recorded"
    );
}

/// A run closed for the process's exit (what a command line does) has its end and its
/// call's rows where the next reader finds them, its trace's connection left open to the
/// exit; one whose trace does not keep its log is closed, and checkpointed, as `close`
/// would.
#[test]
fn a_run_closed_for_the_exit_is_recorded_as_closed() {
    let fx = Fixture::new();
    let run = background_run(&fx);
    let id = run.id().to_string();
    run.exec(&ExecRequest::new(["true"])).unwrap();
    run.close_for_exit().unwrap();
    let store = corral_trace::Store::open_read_only(&fx.store()).unwrap();
    let row = store.run(&id).unwrap().expect("the run's row");
    assert_eq!(row.ended_how.as_deref(), Some("closed"));
    assert_eq!(store.steps(Some(&id), 10).unwrap().len(), 1);
    drop(store);

    // Another store: the connection left open above would keep this one's log too.
    let fx = Fixture::new();
    let run = fx.run_with(keep_one());
    run.close_for_exit().unwrap();
    let wal = PathBuf::from(format!("{}-wal", fx.store().display()));
    assert!(!wal.exists(), "a store that keeps no log was not closed");
}
