//! The command line: parse and plan time for typical lines, and a 1 GB pipeline through
//! `Run::shell` against `bash -c` with the same line.

use std::process::Command;
use std::time::{Duration, Instant};

use corral::{Run, ShellRequest};

use crate::stats::{micros, summarize};

const LINES: &[&str] = &[
    "cargo test -p app --release",
    "cd crates && cargo build 2>&1 | tail -n 40",
    "git status --short && git diff --stat -- src/lib.rs",
    "grep -rn 'fn main' src | sort | uniq -c | sort -rn | head -n 20",
    "RUST_LOG=debug cargo run -- --port 8080 > server.log 2>&1",
];

pub fn parse_plan() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("crates")).unwrap();
    let run = Run::builder(dir.path())
        .store(dir.path().join("trace.db"))
        .policy(corral::Policy::permissive())
        .open()
        .unwrap();
    println!(
        "10,000 rounds per line; parse = corral_line::parse, plan = parse + cwd + PATH lookups + redirect paths"
    );
    for line in LINES {
        let request = ShellRequest::new(*line);
        let (mut parse, mut plan) = (Vec::new(), Vec::new());
        for _ in 0..10_000 {
            let t = Instant::now();
            std::hint::black_box(corral_line::parse(line).unwrap());
            parse.push(t.elapsed());
            let t = Instant::now();
            std::hint::black_box(run.plan_shell(&request).unwrap());
            plan.push(t.elapsed());
        }
        let (p, q) = (summarize(&mut parse), summarize(&mut plan));
        println!(
            "parse {:6.2} µs  plan {:6.1} µs   {line}",
            micros(p.median),
            micros(q.median)
        );
    }
}

pub fn pipeline() {
    const LINE: &str = "yes | head -c 1000000000 | wc -c";
    let dir = tempfile::tempdir().unwrap();
    let run = Run::builder(dir.path())
        .store(dir.path().join("trace.db"))
        .policy(corral::Policy::permissive())
        .open()
        .unwrap();
    let request = ShellRequest::new(LINE);
    let (mut bash, mut ours) = (Vec::new(), Vec::new());
    for _ in 0..3 {
        let t = Instant::now();
        let out = Command::new("bash").args(["-c", LINE]).output().unwrap();
        bash.push(t.elapsed());
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "1000000000");
        let t = Instant::now();
        let outcome = run.shell(&request).unwrap();
        ours.push(t.elapsed());
        assert_eq!(outcome.stdout.window.head.trim(), "1000000000");
    }
    let best = |v: &[Duration]| v.iter().min().copied().unwrap();
    let gbps = |d: Duration| 1e9 / d.as_secs_f64() / (1 << 20) as f64;
    let (b, o) = (best(&bash), best(&ours));
    println!("`{LINE}`, best of 3 each, interleaved");
    println!(
        "bash -c          {:7.0} MiB/s  ({:.2}s)",
        gbps(b),
        b.as_secs_f64()
    );
    println!(
        "corral shell     {:7.0} MiB/s  ({:.2}s)",
        gbps(o),
        o.as_secs_f64()
    );
    println!(
        "ratio corral/bash throughput  {:.3}x   (goal >= 0.95x)",
        b.as_secs_f64() / o.as_secs_f64()
    );
}
