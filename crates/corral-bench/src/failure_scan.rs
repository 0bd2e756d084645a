//! The failure-line scan's cost: 1 GiB of log lines captured through `Run::exec` with the
//! scan (the default) and without it (`Config::failure_lines` off), interleaved in the
//! same process, as a ratio of throughputs; and the same bytes through the scan alone.

use std::io::Write;
use std::time::{Duration, Instant};

use corral::trace::failures::Scan;
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
    let open = |failure_lines: bool| {
        Run::builder(&ws)
            .store(dir.path().join(format!("trace-{failure_lines}.db")))
            .config(corral::Config {
                failure_lines,
                ..corral::Config::default()
            })
            .policy(corral::Policy::permissive())
            .open()
            .unwrap()
    };
    let (scanning, plain) = (open(true), open(false));
    let mib = |d: Duration| BYTES as f64 / d.as_secs_f64() / (1 << 20) as f64;
    println!(
        "{:<24} {:>12} {:>12} {:>7} {:>12} {:>9}",
        "log", "no scan MiB/s", "scan MiB/s", "ratio", "scan alone", "matches"
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
        for run in [&scanning, &plain] {
            run.exec(&ExecRequest::new(["cat", &file.display().to_string()]))
                .unwrap();
        }
        let capture = |run: &Run| {
            let t = Instant::now();
            let outcome = run.exec(&request).unwrap();
            let took = t.elapsed();
            assert_eq!(outcome.stdout.bytes, BYTES);
            std::fs::remove_file(outcome.stdout.capture.unwrap()).unwrap();
            took
        };
        // Interleaved, best of 5 each.
        let (mut without, mut with, mut alone, mut matches) =
            (Duration::MAX, Duration::MAX, Duration::MAX, 0);
        for _ in 0..5 {
            without = without.min(capture(&plain));
            with = with.min(capture(&scanning));
            let (took, found) = scan_only(&piece);
            alone = alone.min(took);
            matches = found;
        }
        println!(
            "{:<24} {:>12.0} {:>12.0} {:>6.3}× {:>12.0} {:>9}",
            if failures {
                "1 failure line in 1,000"
            } else {
                "no failure line"
            },
            mib(without),
            mib(with),
            without.as_secs_f64() / with.as_secs_f64(),
            mib(alone),
            matches
        );
    }
}
