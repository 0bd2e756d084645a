//! What recording git's refs and index for undo adds (issue 64): `Run::exec(["mkdir",
//! "-p", "d"])` (recorded; it changes nothing) in a run with `git_write` on (the record
//! holds `HEAD`, `packed-refs`, `refs/`, `logs/` and stores `index` when its checksum
//! changed; after the first call it walks only what its change flag saw change) against the same call with `git_write = false` (before: the record left
//! `.git` out), interleaved, both recording, in a repository of 1,000 files and 10,000
//! loose refs. Rows: nothing changed; the index rewritten with the same content before
//! each call (a `git status` stat refresh: new inode and times, the same checksum); one
//! ref moved before each call. Printed as medians and the ratio on/off.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use corral::{Config, ExecRequest, Run};

use crate::stats::{micros, summarize};

fn git(ws: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args(["-c", "user.email=b@example.org", "-c", "user.name=b"])
        .args(args)
        .current_dir(ws)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}");
}

/// A repository of `files` committed files and `refs` loose branches at its commit.
fn repository(ws: &Path, files: usize, refs: usize) -> String {
    std::fs::create_dir_all(ws).unwrap();
    git(ws, &["init", "-q", "-b", "main", "."]);
    for i in 0..files {
        let dir = ws.join(format!("src/d{:02}", i / 100));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(format!("f{i:04}.rs")), format!("// {i}\n")).unwrap();
    }
    git(ws, &["add", "-A"]);
    git(ws, &["commit", "-q", "-m", "one"]);
    let head = std::fs::read_to_string(ws.join(".git/refs/heads/main")).unwrap();
    let dir = ws.join(".git/refs/heads/many");
    std::fs::create_dir_all(&dir).unwrap();
    for i in 0..refs {
        std::fs::write(dir.join(format!("b{i:05}")), &head).unwrap();
    }
    head.trim().to_string()
}

fn open(ws: &Path, store: &Path, git_write: bool) -> Run {
    let mut config = Config::default();
    config.sandbox.git_write = git_write;
    Run::builder(ws)
        .store(store)
        .config(config)
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
        "{:<44} {:>12} {:>12} {:>8}",
        "1,000 files, 10,000 refs", "before (µs)", "refs+index", "ratio"
    );
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    let head = repository(&ws, 1_000, 10_000);
    let on = open(&ws, &dir.path().join("on/trace.db"), true);
    let off = open(&ws, &dir.path().join("off/trace.db"), false);
    for _ in 0..3 {
        call(&on);
        call(&off);
    }
    let index = ws.join(".git/index");
    let refresh = || {
        // Same bytes, a new file: what a stat refresh's rename leaves.
        let bytes = std::fs::read(&index).unwrap();
        let tmp = ws.join(".git/index.bench");
        std::fs::write(&tmp, bytes).unwrap();
        std::fs::rename(&tmp, &index).unwrap();
    };
    let moved = |round: usize| {
        let text = if round.is_multiple_of(2) {
            "0".repeat(40)
        } else {
            head.clone()
        };
        std::fs::write(ws.join(".git/refs/heads/many/b00001"), format!("{text}\n")).unwrap();
    };
    let rows: [(&str, &dyn Fn(usize)); 3] = [
        ("nothing changed", &|_| {}),
        ("index rewritten, same checksum", &|_| refresh()),
        ("one ref moved", &moved),
    ];
    for (label, before_each) in rows {
        let (mut with, mut without) = (Vec::new(), Vec::new());
        for round in 0..40 {
            before_each(2 * round);
            with.push(call(&on));
            before_each(2 * round + 1);
            without.push(call(&off));
        }
        let (w, o) = (summarize(&mut with), summarize(&mut without));
        println!(
            "{:<44} {:>12.0} {:>12.0} {:>7.2}x",
            label,
            micros(o.median),
            micros(w.median),
            micros(w.median) / micros(o.median).max(1.0)
        );
    }
    on.close().unwrap();
    off.close().unwrap();
}
