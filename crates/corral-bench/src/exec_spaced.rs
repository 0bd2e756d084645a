//! `exec(["true"])` the way an agent calls it: after a pause, not back to back. Some of a
//! call's kernel work waits for an RCU grace period only when nothing has recently paid
//! for one (a migration between cgroups through `cgroup.procs`), which a back-to-back loop
//! hides; here every call, corral's and `Command::output`'s alike, follows a pause of
//! `PAUSE`, interleaved.

use std::process::Command;
use std::time::{Duration, Instant};

use corral::{ExecRequest, Run};

use crate::stats::{micros, summarize};

const ROUNDS: usize = 100;
const PAUSE: Duration = Duration::from_millis(50);

pub fn run() {
    let dir = tempfile::tempdir().unwrap();
    let open = |pid_namespace: bool| {
        Run::builder(dir.path())
            .store(dir.path().join("trace.db"))
            .config(corral::Config {
                pid_namespace,
                ..corral::Config::default()
            })
            .policy(corral::Policy::permissive())
            .open()
            .unwrap()
    };
    let runs = [open(true), open(false)];
    let request = ExecRequest::new(["true"]);
    for run in &runs {
        run.exec(&request).unwrap();
    }
    let names: Vec<&str> = runs
        .iter()
        .map(|run| run.exec(&request).unwrap().containment)
        .collect();
    let mut baseline = Vec::with_capacity(ROUNDS);
    let mut samples: Vec<Vec<_>> = runs.iter().map(|_| Vec::with_capacity(ROUNDS)).collect();
    for _ in 0..ROUNDS {
        std::thread::sleep(PAUSE);
        let t = Instant::now();
        Command::new("true").output().unwrap();
        baseline.push(t.elapsed());
        for (run, samples) in runs.iter().zip(&mut samples) {
            std::thread::sleep(PAUSE);
            let t = Instant::now();
            let outcome = run.exec(&request).unwrap();
            samples.push(t.elapsed());
            assert!(outcome.status.success());
        }
    }
    let b = summarize(&mut baseline);
    println!(
        "rounds: {ROUNDS} each, interleaved, each call after a {} ms pause",
        PAUSE.as_millis()
    );
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
    for run in runs {
        run.close().unwrap();
    }
}
