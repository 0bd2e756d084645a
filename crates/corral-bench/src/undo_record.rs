//! What recording the workspace for undo adds to a call that may write: `Run::exec(["mkdir",
//! "-p", "d"])` (not known-safe, so recorded; it changes nothing) with the record on
//! against the same call in a run with `Config::record` off, interleaved, in a workspace
//! of 10,000 files with 0, 10 and 1,000 of them changed before each call (outside the
//! timing, for both runs alike), and in one of 100 files. Then the store's growth over
//! 1,000 calls that each change one file.

use std::path::Path;
use std::time::{Duration, Instant};

use corral::{Config, ExecRequest, Run};

use crate::stats::{micros, summarize};

/// `files` files of 1 KiB, each its own, 100 a directory.
fn workspace(root: &Path, files: usize) {
    for i in 0..files {
        let dir = root.join(format!("src/d{:03}", i / 100));
        std::fs::create_dir_all(&dir).unwrap();
        let text = format!("// file {i:05}\n{}", "x".repeat(1009));
        std::fs::write(dir.join(format!("f{i:05}.rs")), text).unwrap();
    }
}

/// Rewrite `n` of the workspace's files, starting at a round's own offset.
fn change(root: &Path, files: usize, n: usize, round: usize) {
    for k in 0..n {
        let i = (round * n + k) % files;
        let path = root.join(format!("src/d{:03}/f{i:05}.rs", i / 100));
        std::fs::write(path, format!("round {round} {}", "y".repeat(1000))).unwrap();
    }
}

fn open(ws: &Path, store: &Path, record: bool) -> Run {
    Run::builder(ws)
        .store(store)
        .config(Config {
            record,
            ..Config::default()
        })
        .policy(corral::Policy::permissive())
        .approver(corral::approve::ApproveAll)
        .open()
        .unwrap()
}

fn call(run: &Run) -> Duration {
    let started = Instant::now();
    run.exec(&ExecRequest::new(["mkdir", "-p", "d"])).unwrap();
    started.elapsed()
}

pub fn run() {
    println!(
        "{:<34} {:>11} {:>11} {:>11} {:>11}",
        "workspace", "off median", "on median", "added", "added p95"
    );
    for (files, changed, rounds) in [
        (10_000, 0, 60),
        (10_000, 10, 60),
        (10_000, 1_000, 20),
        (100, 0, 200),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        workspace(&ws, files);
        let on = open(&ws, &dir.path().join("on/trace.db"), true);
        let off = open(&ws, &dir.path().join("off/trace.db"), false);
        for _ in 0..3 {
            call(&on);
            call(&off);
        }
        compare(
            &format!("{files} files, {changed} changed"),
            0..rounds,
            |round| {
                change(&ws, files, changed, 2 * round);
                let a = call(&on);
                change(&ws, files, changed, 2 * round + 1);
                (a, call(&off))
            },
        );
        on.close().unwrap();
        off.close().unwrap();
    }
    writing_calls();
    growth();
}

/// Time `pair(round)` (the call in the run that records, then in the run that does not)
/// for each of `rounds`, and print the row of what recording added.
fn compare(
    label: &str,
    rounds: std::ops::Range<usize>,
    mut pair: impl FnMut(usize) -> (Duration, Duration),
) {
    let (mut with, mut without, mut added) = (Vec::new(), Vec::new(), Vec::new());
    for round in rounds {
        let (a, b) = pair(round);
        with.push(a);
        without.push(b);
        added.push(a.saturating_sub(b));
    }
    let (w, o, d) = (
        summarize(&mut with),
        summarize(&mut without),
        summarize(&mut added),
    );
    println!(
        "{:<34} {:>8.0} µs {:>8.0} µs {:>8.0} µs {:>8.0} µs",
        label,
        micros(o.median),
        micros(w.median),
        micros(w.median.saturating_sub(o.median)),
        micros(d.p95)
    );
}

/// A call that itself rewrites 10 of 10,000 files (`echo … > f && …`, ten spawns): what
/// it waits for of the record after it, which is made on a thread of its own while the
/// next call (here the other run's) runs.
fn writing_calls() {
    let (files, rounds) = (10_000, 40);
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    workspace(&ws, files);
    let on = open(&ws, &dir.path().join("on/trace.db"), true);
    let off = open(&ws, &dir.path().join("off/trace.db"), false);
    let line = |round: usize| {
        (0..10)
            .map(|k| {
                let i = (round * 10 + k) % files;
                format!("echo round {round} > src/d{:03}/f{i:05}.rs", i / 100)
            })
            .collect::<Vec<_>>()
            .join(" && ")
    };
    let timed = |run: &Run, round: usize| {
        let started = Instant::now();
        let outcome = run.shell(&corral::ShellRequest::new(line(round))).unwrap();
        assert!(outcome.status.success(), "{}", outcome.observation);
        started.elapsed()
    };
    for round in 0..3 {
        timed(&on, 2 * round);
        timed(&off, 2 * round + 1);
    }
    compare(
        "10000 files, the call rewrites 10",
        3..3 + rounds,
        |round| (timed(&on, 2 * round), timed(&off, 2 * round + 1)),
    );
    on.close().unwrap();
    off.close().unwrap();
}

/// The undo store's size after a first record of 1,000 files of 1 KiB, and after 1,000
/// calls that each rewrite one of them.
fn growth() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    workspace(&ws, 1_000);
    let run = open(&ws, &dir.path().join("trace.db"), true);
    call(&run);
    let first = size(&dir.path().join("undo"));
    for i in 0..1_000 {
        let path = format!("src/d{:03}/f{i:05}.rs", i / 100);
        let line = format!("echo call {i} >> {path}");
        run.shell(&corral::ShellRequest::new(line)).unwrap();
    }
    let after = size(&dir.path().join("undo"));
    println!(
        "store: {} KiB after the first record of 1,000 files (1,000 KiB); {} KiB after 1,000 calls that each append to one ({:.1} KiB a call)",
        first / 1024,
        after / 1024,
        (after - first) as f64 / 1024.0 / 1000.0
    );
    run.close().unwrap();
}

fn size(dir: &Path) -> u64 {
    let mut total = 0;
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let meta = entry.metadata().unwrap();
        total += if meta.is_dir() {
            size(&entry.path())
        } else {
            meta.len()
        };
    }
    total
}
