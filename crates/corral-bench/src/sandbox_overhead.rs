//! `exec(["true"])` sandboxed (workspace-write, network off) against unsandboxed, through
//! the library with the trace on, interleaved in one run. Goal: the sandbox adds at most
//! 2 ms to the median.

use std::time::Instant;

use corral::{Config, ExecRequest, Run, sandbox::SandboxConfig, sandbox::SandboxMode};

use crate::stats::{micros, summarize};

const ROUNDS: usize = 300;

pub fn run() {
    let dir = tempfile::tempdir().unwrap();
    let open = |mode: SandboxMode| {
        Run::builder(dir.path())
            .store(dir.path().join("trace.db"))
            .config(Config {
                sandbox: SandboxConfig::mode(mode),
                ..Config::default()
            })
            .policy(corral::Policy::permissive())
            .open()
            .unwrap()
    };
    let (plain, boxed) = (open(SandboxMode::Full), open(SandboxMode::WorkspaceWrite));
    let request = ExecRequest::new(["true"]);
    for _ in 0..20 {
        plain.exec(&request).unwrap();
        boxed.exec(&request).unwrap();
    }
    let report = boxed.exec(&request).unwrap().sandbox.unwrap().line();
    let mut samples = [Vec::with_capacity(ROUNDS), Vec::with_capacity(ROUNDS)];
    for _ in 0..ROUNDS {
        for (i, run) in [(0, &plain), (1, &boxed)] {
            let t = Instant::now();
            let outcome = run.exec(&request).unwrap();
            samples[i].push(t.elapsed());
            assert!(outcome.status.success());
        }
    }
    let [p, b] = samples.map(|mut v| summarize(&mut v));
    let added = micros(b.median) - micros(p.median);
    println!("rounds: {ROUNDS} each, interleaved; {report}");
    println!(
        "exec true, unsandboxed      median {:8.1} µs   p95 {:8.1} µs",
        micros(p.median),
        micros(p.p95)
    );
    println!(
        "exec true, workspace-write  median {:8.1} µs   p95 {:8.1} µs",
        micros(b.median),
        micros(b.p95)
    );
    println!(
        "sandbox adds {:.1} µs to the median (goal ≤ 2000 µs): {}",
        added,
        if added <= 2000.0 { "met" } else { "NOT met" }
    );
}
