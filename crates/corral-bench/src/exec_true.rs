//! `exec(["true"])` through the library (trace on) against
//! `std::process::Command::new("true").output()`, interleaved, 1000 of each.

use std::process::Command;
use std::time::Instant;

use corral::{ExecRequest, Run};

use crate::stats::{micros, summarize};

const ROUNDS: usize = 1000;

pub fn run() {
    let dir = tempfile::tempdir().unwrap();
    let open = |cgroups: bool, pid_namespace: bool| {
        Run::builder(dir.path())
            .store(dir.path().join("trace.db"))
            .config(corral::Config {
                cgroups,
                pid_namespace,
                ..corral::Config::default()
            })
            .policy(corral::Policy::permissive())
            .open()
            .unwrap()
    };
    // Every layer this host allows, strongest first; the names say which were made.
    let runs = [
        open(true, true),
        open(true, false),
        open(false, true),
        open(false, false),
    ];
    let request = ExecRequest::new(["true"]);
    // Warm every path (page cache, the store's prepared statements, the probes).
    for _ in 0..20 {
        Command::new("true").output().unwrap();
        for run in &runs {
            run.exec(&request).unwrap();
        }
    }
    let names: Vec<&str> = runs
        .iter()
        .map(|run| run.exec(&request).unwrap().containment)
        .collect();
    let mut baseline = Vec::with_capacity(ROUNDS);
    let mut samples: Vec<Vec<_>> = runs.iter().map(|_| Vec::with_capacity(ROUNDS)).collect();
    for _ in 0..ROUNDS {
        let t = Instant::now();
        Command::new("true").output().unwrap();
        baseline.push(t.elapsed());
        for (run, samples) in runs.iter().zip(&mut samples) {
            let t = Instant::now();
            let outcome = run.exec(&request).unwrap();
            samples.push(t.elapsed());
            assert!(outcome.status.success());
        }
    }
    let b = summarize(&mut baseline);
    println!("rounds: {ROUNDS} each, interleaved");
    let line = |name: &str, x: crate::stats::Summary| {
        println!(
            "{name:<52} median {:8.1} µs ({:.2}x)   p95 {:8.1} µs ({:.2}x)",
            micros(x.median),
            micros(x.median) / micros(b.median),
            micros(x.p95),
            micros(x.p95) / micros(b.p95)
        )
    };
    line("std Command::output", b);
    for (name, mut samples) in names.iter().zip(samples) {
        line(
            &format!("corral Run::exec, {name}"),
            summarize(&mut samples),
        );
    }
    println!("goal: corral/std <= 1.25x");
    for run in runs {
        run.close().unwrap();
    }
}

/// What recording one step costs on its own: `begin_step` + `finish_step` on a WAL store.
pub fn trace_step() {
    use corral::trace::{NewRun, NewStep, Store};
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
            .finish_step(ids.id, &crate::trace_phases::exited_true())
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
