//! A command printing 4 GiB, sixteen times the default capture cap: corral's peak RSS over
//! idle while the capture's ring rolls and is then put back in order, and its throughput
//! against a plain pipe read in the same process.

use std::time::Instant;

use corral::{ExecRequest, Run};

use crate::capture::{plain_pipe, producer, status_kib};

const BYTES: u64 = 4 << 30;

pub fn run() {
    let dir = tempfile::tempdir().unwrap();
    let run = Run::builder(dir.path())
        .store(dir.path().join("trace.db"))
        .policy(corral::Policy::permissive())
        .open()
        .unwrap();
    let cap = run.config().capture_cap;
    // Warm the code paths, the capture included, with one small round.
    run.exec(&ExecRequest::new(["head", "-c", "1048576", "/dev/zero"]))
        .unwrap();

    let plain = plain_pipe(BYTES);
    std::fs::write("/proc/self/clear_refs", "5").unwrap();
    let idle = status_kib("VmRSS:");
    let t = Instant::now();
    let outcome = run.exec(&ExecRequest::new(producer(BYTES))).unwrap();
    let ours = BYTES as f64 / t.elapsed().as_secs_f64();
    let growth_kib = status_kib("VmHWM:").saturating_sub(idle);
    assert_eq!(outcome.stdout.bytes, BYTES);
    let capture = outcome.stdout.capture.clone().unwrap();
    let on_disk = std::fs::metadata(&capture).unwrap().len();
    std::fs::remove_file(capture).unwrap();

    println!(
        "4 GiB from `head -c {BYTES} /dev/zero`, capture cap {} MiB",
        cap >> 20
    );
    println!(
        "plain pipe read (discard)   {:7.0} MiB/s",
        plain / (1 << 20) as f64
    );
    println!(
        "corral capture, capped      {:7.0} MiB/s",
        ours / (1 << 20) as f64
    );
    println!("ratio corral/plain          {:.3}x", ours / plain);
    println!(
        "capture on disk             {:.1} MiB (cap + marker)",
        on_disk as f64 / (1 << 20) as f64
    );
    println!(
        "corral peak RSS over idle   {:.1} MiB   (goal <= 16 MiB)",
        growth_kib as f64 / 1024.0
    );
    run.close().unwrap();
}
