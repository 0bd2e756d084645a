//! `exec(["true"])` through the library (trace on) against
//! `std::process::Command::new("true").output()`, interleaved, 1000 of each.

use std::process::Command;
use std::time::Instant;

use corral::{ExecRequest, Run};

use crate::stats::{micros, summarize};

const ROUNDS: usize = 1000;

pub fn run() {
    let dir = tempfile::tempdir().unwrap();
    let run = Run::builder(dir.path())
        .store(dir.path().join("trace.db"))
        .policy(corral::Policy::permissive())
        .open()
        .unwrap();
    let request = ExecRequest::new(["true"]);
    // Warm both paths (page cache, the store's prepared statements).
    for _ in 0..20 {
        Command::new("true").output().unwrap();
        run.exec(&request).unwrap();
    }
    let (mut base, mut ours) = (Vec::with_capacity(ROUNDS), Vec::with_capacity(ROUNDS));
    for _ in 0..ROUNDS {
        let t = Instant::now();
        Command::new("true").output().unwrap();
        base.push(t.elapsed());
        let t = Instant::now();
        let outcome = run.exec(&request).unwrap();
        ours.push(t.elapsed());
        assert!(outcome.status.success());
    }
    let (b, o) = (summarize(&mut base), summarize(&mut ours));
    println!("rounds: {ROUNDS} each, interleaved");
    println!(
        "std Command::output   median {:8.1} µs   p95 {:8.1} µs",
        micros(b.median),
        micros(b.p95)
    );
    println!(
        "corral Run::exec      median {:8.1} µs   p95 {:8.1} µs",
        micros(o.median),
        micros(o.p95)
    );
    println!(
        "ratio corral/std      median {:.3}x        p95 {:.3}x   (goal <= 1.25x)",
        micros(o.median) / micros(b.median),
        micros(o.p95) / micros(b.p95)
    );
    run.close().unwrap();
}

/// What recording one step costs on its own: `begin_step` + `finish_step` on a WAL store.
pub fn trace_step() {
    use corral::trace::{NewRun, NewStep, StepDone, Store};
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("trace.db")).unwrap();
    store
        .begin_run(&NewRun {
            id: "bench".into(),
            workspace: "/ws".into(),
            started_at_ms: 0,
            pid: 1,
            config_json: "{}".into(),
        })
        .unwrap();
    let mut samples = Vec::with_capacity(ROUNDS);
    for _ in 0..ROUNDS {
        let t = Instant::now();
        let ids = store
            .begin_step(&NewStep {
                run_id: "bench".into(),
                tool: "exec".into(),
                call_json: r#"{"argv":["true"]}"#.into(),
                cwd: "/ws".into(),
                started_at_ms: 0,
            })
            .unwrap();
        store
            .finish_step(
                ids.id,
                &StepDone {
                    argv_json: r#"["true"]"#.into(),
                    duration_ms: 1,
                    exit_code: Some(0),
                    signal: None,
                    timed_out: false,
                    outcome: "exited".into(),
                    stdout_bytes: 0,
                    stderr_bytes: 0,
                    stdout_path: None,
                    stderr_path: None,
                    observation: "exit 0 · 1ms\n(no output)\n".into(),
                    error: None,
                },
            )
            .unwrap();
        samples.push(t.elapsed());
    }
    let s = summarize(&mut samples);
    println!(
        "trace begin+finish    median {:8.1} µs   p95 {:8.1} µs",
        micros(s.median),
        micros(s.p95)
    );
}
