//! Between calls nothing of corral's is left: no PID namespace init waiting for the next
//! call, and no exited one waiting to be reaped.

mod common;

use std::time::{Duration, Instant};

use common::Fixture;
use corral::{Config, ExecRequest};

/// This process's children that still exist (running or not yet reaped), from `/proc`.
fn children() -> Vec<(u32, String)> {
    let me = std::process::id().to_string();
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // `pid (comm) state ppid ...`; comm may hold spaces and parentheses.
        let Some((name, rest)) = stat.split_once(" (").and_then(|(_, r)| r.rsplit_once(") "))
        else {
            continue;
        };
        let mut fields = rest.split_whitespace();
        let state = fields.next().unwrap_or("");
        if fields.next() == Some(me.as_str()) {
            found.push((pid, format!("{name} ({state})")));
        }
    }
    found
}

#[test]
fn no_init_or_zombie_is_left_between_calls() {
    let fx = Fixture::new();
    let run = fx.run_with(Config {
        pid_namespace: true,
        ..Config::default()
    });
    let mut namespaced = false;
    for _ in 0..5 {
        let outcome = run.exec(&ExecRequest::new(["true"])).unwrap();
        assert!(outcome.status.success(), "{}", outcome.observation);
        namespaced |= outcome.containment.ends_with("+pid-ns");
        // The init is ended when the call returns and collected as soon as the kernel has
        // torn its namespace down: wait for that event, bounded.
        let until = Instant::now() + Duration::from_secs(10);
        let mut left = children();
        while !left.is_empty() && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(5));
            left = children();
        }
        assert!(left.is_empty(), "left between calls: {left:?}");
    }
    run.close().unwrap();
    // A run's end does not return before its last call's init is collected: a process
    // that exits right after it (as `corral exec` does, its close quick with the trace's
    // log kept) leaves no zombie for whatever adopts it.
    for _ in 0..50 {
        let run = fx.command_line().open().unwrap();
        let outcome = run.exec(&ExecRequest::new(["true"])).unwrap();
        assert!(outcome.status.success(), "{}", outcome.observation);
        run.close().unwrap();
        assert_eq!(children(), vec![], "left after the run closed");
    }
    // A run opened for one call starts that call's namespace as it opens: nothing is left
    // after it closes, whether the call came or not, nor after an open that failed once
    // the namespace had started.
    let one_call = || fx.command_line().housekeeping_in_background();
    for round in 0..10 {
        let run = one_call().open().unwrap();
        if round % 2 == 0 {
            let outcome = run.exec(&ExecRequest::new(["true"])).unwrap();
            assert!(outcome.status.success(), "{}", outcome.observation);
        }
        run.close().unwrap();
        assert_eq!(children(), vec![], "left after a one-call run closed");
        let refused = one_call().resume("r-no-such-run").open();
        assert!(
            refused.is_err(),
            "a run that is not there cannot be resumed"
        );
        assert_eq!(
            children(),
            vec![],
            "left after a one-call run failed to open"
        );
    }
    if !namespaced {
        common::skip("no PID namespace here (not root?): only the plain unit was checked");
    }
}
