//! A command printing 1 GiB: corral's capture throughput against a plain pipe read in the
//! same process, and corral's peak RSS growth over idle.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::Instant;

use corral::{ExecRequest, Run};

const BYTES: u64 = 1 << 30;

/// `head -c BYTES /dev/zero`: `bytes` of output, made as fast as anything makes it.
pub(crate) fn producer(bytes: u64) -> Vec<String> {
    ["head", "-c", &bytes.to_string(), "/dev/zero"]
        .map(String::from)
        .to_vec()
}

/// Read the whole output of [`producer`] through a pipe and discard it: the fastest
/// anything can go, in bytes a second.
pub(crate) fn plain_pipe(bytes: u64) -> f64 {
    let argv = producer(bytes);
    let t = Instant::now();
    let mut child = Command::new(&argv[0])
        .args(&argv[1..])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = child.stdout.take().unwrap();
    let mut buf = vec![0u8; 64 * 1024];
    let mut total = 0u64;
    loop {
        let n = out.read(&mut buf).unwrap();
        if n == 0 {
            break;
        }
        total += n as u64;
    }
    child.wait().unwrap();
    assert_eq!(total, bytes);
    bytes as f64 / t.elapsed().as_secs_f64()
}

/// A field of `/proc/self/status`, in KiB (`VmRSS:`, `VmHWM:`).
pub(crate) fn status_kib(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with(field)).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// Reset the peak-RSS watermark so the next reading covers only what follows.
fn reset_peak() {
    std::fs::write("/proc/self/clear_refs", "5").unwrap();
}

pub fn run() {
    let dir = tempfile::tempdir().unwrap();
    let run = Run::builder(dir.path())
        .store(dir.path().join("trace.db"))
        .policy(corral::Policy::permissive())
        .open()
        .unwrap();
    let request = ExecRequest::new(producer(BYTES));
    // Warm the page cache and both code paths with one small round.
    run.exec(&ExecRequest::new(["head", "-c", "1048576", "/dev/zero"]))
        .unwrap();

    let mut base = Vec::new();
    let mut ours = Vec::new();
    let mut growth_kib = 0;
    for _ in 0..3 {
        base.push(plain_pipe(BYTES));
        reset_peak();
        let idle = status_kib("VmRSS:");
        let t = Instant::now();
        let outcome = run.exec(&request).unwrap();
        ours.push(BYTES as f64 / t.elapsed().as_secs_f64());
        growth_kib = growth_kib.max(status_kib("VmHWM:").saturating_sub(idle));
        assert_eq!(outcome.stdout.bytes, BYTES);
        std::fs::remove_file(outcome.stdout.capture.unwrap()).unwrap();
    }
    let best = |v: &[f64]| v.iter().copied().fold(0.0, f64::max);
    let (b, o) = (best(&base), best(&ours));
    println!("1 GiB from `head -c 1073741824 /dev/zero`, best of 3 each, interleaved");
    println!(
        "plain pipe read (discard)   {:7.0} MiB/s",
        b / (1 << 20) as f64
    );
    println!(
        "corral capture to file      {:7.0} MiB/s",
        o / (1 << 20) as f64
    );
    println!("ratio corral/plain          {:.3}x   (goal >= 0.8x)", o / b);
    println!(
        "corral peak RSS growth      {:.1} MiB   (goal <= 16 MiB)",
        growth_kib as f64 / 1024.0
    );
    run.close().unwrap();
}
