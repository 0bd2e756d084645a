//! What the off-network answers (issue 66) add to a one-shot CLI call: the proxy's
//! listener and the resolver's socket, made in the run's network namespace when the run
//! opens with the network off, each with its thread. Measured in one process, interleaved:
//! a whole one-shot call (a run opened in `workspace-write` with the network off, which
//! makes them, `exec(["true"])`, the run dropped), and the same pieces made on their own
//! (a listener and a UDP socket in a namespace, two threads started and ended). Reports
//! their share of the call.

use std::time::Instant;

use corral::{Config, ExecRequest, Run, sandbox::SandboxConfig, sandbox::SandboxMode};
use corral_sys::sandbox::NetNamespace;

use crate::stats::{micros, summarize};

const ROUNDS: usize = 100;

pub fn run() {
    let Ok(ns) = NetNamespace::create() else {
        println!("no network namespace here (run as root): nothing to measure");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let one_shot = || {
        let run = Run::builder(dir.path())
            .store(dir.path().join("trace.db"))
            .config(Config {
                sandbox: SandboxConfig::mode(SandboxMode::WorkspaceWrite),
                ..Config::default()
            })
            .policy(corral::Policy::permissive())
            .open()
            .unwrap();
        let outcome = run.exec(&ExecRequest::new(["true"])).unwrap();
        assert!(outcome.status.success());
    };
    let pieces = || {
        let listener = ns.listen_loopback().unwrap();
        let dns = ns.bind_dns().unwrap();
        // Their threads, started and ended (a wait that returns at once stands for the
        // wake-up at the run's end).
        listener.set_nonblocking(true).unwrap();
        dns.set_nonblocking(true).unwrap();
        let a = std::thread::spawn(move || drop(listener.accept()));
        let b = std::thread::spawn(move || drop(dns.recv_from(&mut [0u8; 512])));
        a.join().unwrap();
        b.join().unwrap();
    };
    for _ in 0..5 {
        one_shot();
        pieces();
    }
    let mut samples = [Vec::with_capacity(ROUNDS), Vec::with_capacity(ROUNDS)];
    for _ in 0..ROUNDS {
        let t = Instant::now();
        one_shot();
        samples[0].push(t.elapsed());
        let t = Instant::now();
        pieces();
        samples[1].push(t.elapsed());
    }
    let [call, added] = samples.map(|mut v| summarize(&mut v));
    println!("rounds: {ROUNDS} each, interleaved");
    println!(
        "one-shot call (open, exec true, close)      median {:8.1} µs   p95 {:8.1} µs",
        micros(call.median),
        micros(call.p95)
    );
    println!(
        "the off-network listener and resolver      median {:8.1} µs   p95 {:8.1} µs",
        micros(added.median),
        micros(added.p95)
    );
    println!(
        "their share of the call, median: {:.3}",
        micros(added.median) / micros(call.median)
    );
}
