//! Background handles: how fast a kill ends a 100-process tree, how soon a waiting poll
//! returns a line, and corral's memory while 8 handles print as fast as they can, never
//! polled.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use corral::{Run, handle::KillRequest, handle::PollRequest, handle::StartRequest};

use crate::stats::{micros, summarize};

/// `corral-testbin`, built beside this benchmark (`cargo build --release -p test-bins`).
fn testbin() -> String {
    let exe = std::env::current_exe().unwrap();
    let bin: PathBuf = exe.with_file_name("corral-testbin");
    if !bin.exists() {
        let status = Command::new(env!("CARGO"))
            .args(["build", "--release", "-p", "test-bins"])
            .status()
            .unwrap();
        assert!(status.success());
    }
    bin.display().to_string()
}

fn open(dir: &std::path::Path) -> Run {
    Run::builder(dir)
        .store(dir.join("trace.db"))
        .policy(corral::Policy::permissive())
        .open()
        .unwrap()
}

fn count(marker: &str) -> usize {
    corral_test_support::processes_with(marker).len()
}

fn wait_for(marker: &str, n: usize) {
    corral_test_support::wait_for(marker, n, Duration::from_secs(20));
}

fn gone_after(marker: &str, started: Instant) -> (Duration, usize) {
    let until = Instant::now() + Duration::from_secs(10);
    loop {
        let left = count(marker);
        if left == 0 || Instant::now() > until {
            return (started.elapsed(), left);
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

pub fn kill_tree() {
    let dir = tempfile::tempdir().unwrap();
    let run = open(dir.path());
    let bin = testbin();
    let mut ours = Vec::new();
    let mut base = Vec::new();
    let mut survivors = 0;
    for round in 0..5 {
        // corral: the whole tree, half of it in sessions of its own.
        let marker = format!("bench-kill-{}-{round}", std::process::id());
        let h = run
            .shell_start(&StartRequest::new(format!("{bin} tree 100 {marker}")))
            .unwrap()
            .handle;
        wait_for(&marker, 100);
        let t = Instant::now();
        run.shell_kill(&KillRequest { handle: h }).unwrap();
        let (took, left) = gone_after(&marker, t);
        ours.push(took);
        survivors += left;

        // Baseline: the same tree without sessions of its own, ended with one killpg.
        let marker = format!("bench-kill-base-{}-{round}", std::process::id());
        let mut child = Command::new("setsid")
            .args(["-w", &bin, "tree", "100", &marker])
            .stdin(Stdio::null())
            .spawn()
            .unwrap();
        wait_for(&marker, 100);
        let t = Instant::now();
        let _ = Command::new("pkill")
            .args(["-TERM", "-f", &marker])
            .status();
        let (took, _) = gone_after(&marker, t);
        base.push(took);
        let _ = child.wait();
    }
    let (o, b) = (summarize(&mut ours), summarize(&mut base));
    println!("100-process tree, 50 leaves in sessions of their own; 5 rounds each");
    println!(
        "pkill -TERM of the tree (baseline)      median {:8.1} ms",
        micros(b.median) / 1000.0
    );
    println!(
        "corral shell_kill to the last one gone  median {:8.1} ms   ({:.2}x)",
        micros(o.median) / 1000.0,
        micros(o.median) / micros(b.median)
    );
    println!(
        "survivors after corral's kill: {survivors}   (goal 0; time goal <= 50 ms when SIGTERM is obeyed)"
    );
    run.close().unwrap();
}

pub fn poll_latency() {
    let dir = tempfile::tempdir().unwrap();
    let run = open(dir.path());
    let bin = testbin();
    let now_ns = || {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    };
    let lines = 50;
    let h = run
        .shell_start(&StartRequest::new(format!("{bin} tick-time {lines} 100")))
        .unwrap()
        .handle;
    let mut ours = Vec::new();
    while ours.len() < lines {
        let p = run
            .shell_poll(&PollRequest {
                handle: h,
                wait_ms: Some(2000),
                ..Default::default()
            })
            .unwrap();
        let at = now_ns();
        for line in p.output.lines() {
            if let Ok(printed) = line.trim().parse::<u128>() {
                ours.push(Duration::from_nanos((at.saturating_sub(printed)) as u64));
            }
        }
        if p.bytes == 0 && !matches!(p.state, corral::handle::HandleState::Running) {
            break;
        }
    }
    // Baseline: the same program read through a plain pipe in this process.
    let mut child = Command::new(&bin)
        .args(["tick-time", &lines.to_string(), "100"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut base = Vec::new();
    for line in BufReader::new(child.stdout.take().unwrap()).lines() {
        let at = now_ns();
        if let Ok(printed) = line.unwrap().trim().parse::<u128>() {
            base.push(Duration::from_nanos((at.saturating_sub(printed)) as u64));
        }
    }
    let _ = child.wait();
    let (o, b) = (summarize(&mut ours), summarize(&mut base));
    println!("a line every 100 ms, {lines} lines: print to returned");
    println!(
        "plain pipe read (baseline)   median {:8.3} ms   p95 {:8.3} ms",
        micros(b.median) / 1000.0,
        micros(b.p95) / 1000.0
    );
    println!(
        "waiting shell_poll           median {:8.3} ms   p95 {:8.3} ms   (goal <= 10 ms)",
        micros(o.median) / 1000.0,
        micros(o.p95) / 1000.0
    );
    run.close().unwrap();
}

fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .unwrap()
        .parse()
        .unwrap()
}

pub fn unpolled_rss() {
    let dir = tempfile::tempdir().unwrap();
    let run = open(dir.path());
    let idle = rss_kib();
    for _ in 0..8 {
        run.shell_start(&StartRequest::new("yes corral-bench-output"))
            .unwrap();
    }
    let mut peak = idle;
    let started = Instant::now();
    let seconds = 30;
    while started.elapsed() < Duration::from_secs(seconds) {
        std::thread::sleep(Duration::from_millis(250));
        peak = peak.max(rss_kib());
    }
    let written: u64 = std::fs::read_dir(
        run.store_path()
            .parent()
            .unwrap()
            .join("captures")
            .join(run.id()),
    )
    .map(|d| {
        d.flatten()
            .filter_map(|e| e.metadata().ok())
            .map(|m| m.len())
            .sum()
    })
    .unwrap_or(0);
    println!("8 handles running `yes`, never polled, {seconds} s");
    println!(
        "idle RSS {:.1} MiB, peak {:.1} MiB, growth {:.1} MiB; captures on disk {:.0} MiB (capped at 64 MiB each)",
        idle as f64 / 1024.0,
        peak as f64 / 1024.0,
        (peak - idle) as f64 / 1024.0,
        written as f64 / (1 << 20) as f64
    );
    run.close().unwrap();
}
