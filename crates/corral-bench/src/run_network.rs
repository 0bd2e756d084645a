//! `exec(["true"])` in `workspace-write` with the network off, the run's network namespace
//! (joined with `setns`) against a namespace made for each call (`unshare`), interleaved
//! in one process. Reports the median ratio.

use std::time::Instant;

use corral::{Config, ExecRequest, Run, sandbox::SandboxConfig, sandbox::SandboxMode};

use crate::stats::{micros, summarize};

const ROUNDS: usize = 300;

pub fn run() {
    let dir = tempfile::tempdir().unwrap();
    let open = |shared: bool| {
        let mut sandbox = SandboxConfig::mode(SandboxMode::WorkspaceWrite);
        sandbox.run_network_namespace = shared;
        Run::builder(dir.path())
            .store(dir.path().join("trace.db"))
            .config(Config {
                sandbox,
                ..Config::default()
            })
            .policy(corral::Policy::permissive())
            .open()
            .unwrap()
    };
    let (per_call, per_run) = (open(false), open(true));
    let request = ExecRequest::new(["true"]);
    for _ in 0..20 {
        per_call.exec(&request).unwrap();
        per_run.exec(&request).unwrap();
    }
    let line = |run: &Run| run.exec(&request).unwrap().sandbox.unwrap().line();
    println!("per call: {}", line(&per_call));
    println!("per run:  {}", line(&per_run));
    let mut samples = [Vec::with_capacity(ROUNDS), Vec::with_capacity(ROUNDS)];
    for _ in 0..ROUNDS {
        for (i, run) in [(0, &per_call), (1, &per_run)] {
            let t = Instant::now();
            let outcome = run.exec(&request).unwrap();
            samples[i].push(t.elapsed());
            assert!(outcome.status.success());
        }
    }
    let [c, r] = samples.map(|mut v| summarize(&mut v));
    println!("rounds: {ROUNDS} each, interleaved");
    println!(
        "exec true, a namespace per call  median {:8.1} µs   p95 {:8.1} µs",
        micros(c.median),
        micros(c.p95)
    );
    println!(
        "exec true, the run's namespace   median {:8.1} µs   p95 {:8.1} µs",
        micros(r.median),
        micros(r.p95)
    );
    println!(
        "per run / per call, median: {:.2}",
        micros(r.median) / micros(c.median)
    );
}
