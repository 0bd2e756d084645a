//! `corral exec -- true` from the command line against `timeout 10 true`, alternating,
//! each a fresh process: what a person or a script pays per call, start-up included. A
//! third row, `corral --version`, is the process alone (loading the binary, the standard
//! library's start, parsing the arguments) and so splits the call's cost in two.
//!
//! `CORRAL_BENCH_BEFORE=PATH` adds a fourth row, another build's `corral exec -- true`
//! (with a store of its own) in the same rounds: a before and after measured in the same
//! moments, as these noisy machines need.

use std::process::Command;

use crate::stats::{micros, summarize};

const ROUNDS: usize = 200;

pub fn run() {
    let corral = crate::mcp_roundtrip::corral_binary();
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    std::fs::write(
        ws.join("corral.toml"),
        "tier = \"permissive\"\napproval = \"on-request\"\n",
    )
    .unwrap();
    let store = dir.path().join("trace.db");
    let before = std::env::var_os("CORRAL_BENCH_BEFORE").map(std::path::PathBuf::from);
    let before_store = dir.path().join("before.db");
    let run = crate::one_shot::wall;
    let timeout = || {
        let mut cmd = Command::new("timeout");
        cmd.args(["10", "true"]).current_dir(&ws);
        cmd
    };
    // Each build with a store of its own.
    let exec_of = |binary: &std::path::Path, store: &std::path::Path| {
        let mut cmd = Command::new(binary);
        cmd.args(["exec", "--", "true"])
            .current_dir(&ws)
            .env("CORRAL_STORE", store);
        cmd
    };
    let exec = || exec_of(&corral, &store);
    let exec_before = |binary: &std::path::Path| exec_of(binary, &before_store);
    let version = || {
        let mut cmd = Command::new(&corral);
        cmd.arg("--version").current_dir(&ws);
        cmd
    };
    for _ in 0..10 {
        run(&mut timeout());
        run(&mut version());
        run(&mut exec());
        if let Some(binary) = &before {
            run(&mut exec_before(binary));
        }
    }
    let (mut base, mut start, mut ours, mut old) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        base.push(run(&mut timeout()));
        start.push(run(&mut version()));
        ours.push(run(&mut exec()));
        if let Some(binary) = &before {
            old.push(run(&mut exec_before(binary)));
        }
    }
    let (b, v, c) = (
        summarize(&mut base),
        summarize(&mut start),
        summarize(&mut ours),
    );
    println!("rounds: {ROUNDS} each, alternating");
    let mut rows = vec![
        ("timeout 10 true", b),
        ("corral --version", v),
        ("corral exec -- true", c),
    ];
    if before.is_some() {
        rows.push(("before: exec -- true", summarize(&mut old)));
    }
    for (name, x) in rows {
        println!(
            "{name:<24} median {:8.1} µs ({:.2}x)   p95 {:8.1} µs",
            micros(x.median),
            micros(x.median) / micros(b.median),
            micros(x.p95)
        );
    }
    println!("goal: corral exec <= 2x timeout");
}
