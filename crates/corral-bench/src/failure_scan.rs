//! The failure-line scan's cost: 1 GiB of log lines captured through `Run::exec` (which
//! scans every chunk as it takes it), against the same bytes through the scan alone, in
//! the same process, so the scan's share of a capture's time is a ratio of two timings
//! taken side by side.

use std::io::Write;
use std::time::{Duration, Instant};

use corral::capture::failures::Scan;
use corral::{ExecRequest, Run};

/// A 64 MiB file catted 16 times: 1 GiB.
const PIECE: usize = 64 << 20;
const TIMES: usize = 16;
const BYTES: u64 = (PIECE * TIMES) as u64;

/// Log lines as a build or a service prints them: mostly ordinary, one in 40 holding a
/// word the prefilter stops at (`Error`, `FAIL`) in a line that is no failure, and, with
/// `failures`, one real failure line in 1,000.
fn log(failures: bool) -> Vec<u8> {
    let mut out = Vec::with_capacity(PIECE + 256);
    let mut i = 0u64;
    while out.len() < PIECE {
        let line = if failures && i % 1000 == 999 {
            format!("error[E0308]: mismatched types in batch {i}\n")
        } else if i % 40 == 39 {
            format!(
                "2026-12-03 16:02:{:02} WARN upstream: retrying batch {i} after ConnectionError (FAIL_FAST off)\n",
                i % 60
            )
        } else {
            format!(
                "2026-12-03 16:02:{:02} INFO worker: processed batch {i} of the march statement in {} ms\n",
                i % 60,
                i % 97
            )
        };
        out.extend_from_slice(line.as_bytes());
        i += 1;
    }
    out.truncate(PIECE);
    out
}

/// The scan alone over `TIMES` copies of `piece`, in the capture's 256 KiB reads.
fn scan_only(piece: &[u8]) -> (Duration, u64) {
    let t = Instant::now();
    let mut scan = Scan::new();
    for _ in 0..TIMES {
        for chunk in piece.chunks(256 * 1024) {
            scan.feed(chunk);
        }
    }
    let found = scan.finish();
    (t.elapsed(), found.total())
}

pub fn run() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let run = Run::builder(&ws)
        .store(dir.path().join("trace.db"))
        .policy(corral::Policy::permissive())
        .open()
        .unwrap();
    let mib = |d: Duration| BYTES as f64 / d.as_secs_f64() / (1 << 20) as f64;
    println!(
        "{:<28} {:>14} {:>14} {:>12} {:>9}",
        "log", "capture MiB/s", "scan MiB/s", "scan share", "matches"
    );
    for failures in [false, true] {
        let piece = log(failures);
        let file = dir
            .path()
            .join(if failures { "failing.log" } else { "plain.log" });
        std::fs::File::create(&file)
            .unwrap()
            .write_all(&piece)
            .unwrap();
        let mut argv = vec!["cat".to_string()];
        argv.extend(std::iter::repeat_n(file.display().to_string(), TIMES));
        let request = ExecRequest::new(argv);
        run.exec(&ExecRequest::new(["cat", &file.display().to_string()]))
            .unwrap();
        // Interleaved, best of 3 each.
        let (mut capture, mut scan, mut matches) = (Duration::MAX, Duration::MAX, 0);
        for _ in 0..3 {
            let t = Instant::now();
            let outcome = run.exec(&request).unwrap();
            capture = capture.min(t.elapsed());
            assert_eq!(outcome.stdout.bytes, BYTES);
            std::fs::remove_file(outcome.stdout.capture.unwrap()).unwrap();
            let (took, found) = scan_only(&piece);
            scan = scan.min(took);
            matches = found;
        }
        println!(
            "{:<28} {:>14.0} {:>14.0} {:>11.1}% {:>9}",
            if failures {
                "1 failure line in 1,000"
            } else {
                "no failure line"
            },
            mib(capture),
            mib(scan),
            100.0 * scan.as_secs_f64() / capture.as_secs_f64(),
            matches
        );
    }
}
