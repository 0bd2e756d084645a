//! Medians and percentiles of a set of durations, and how many rounds a bench runs.

use std::time::Duration;

/// Summary of a set of samples.
#[derive(Debug, Clone, Copy)]
pub struct Summary {
    pub min: Duration,
    pub median: Duration,
    pub p95: Duration,
    pub max: Duration,
}

pub fn summarize(samples: &mut [Duration]) -> Summary {
    samples.sort_unstable();
    let at = |q: f64| samples[((samples.len() - 1) as f64 * q).round() as usize];
    Summary {
        min: at(0.0),
        median: at(0.5),
        p95: at(0.95),
        max: at(1.0),
    }
}

pub fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

/// `median 1234.5 µs (1100.0–2000.0)`: the middle and the whole spread, for a figure
/// whose noise is part of what it says.
pub fn spread(s: Summary) -> String {
    format!(
        "median {:8.1} µs ({:.1}–{:.1})",
        micros(s.median),
        micros(s.min),
        micros(s.max)
    )
}

/// How many rounds a bench runs: `default` (what a run by hand takes), or fewer where
/// `CORRAL_BENCH_ROUNDS` says so (a CI pass that must be short; at least 5).
pub fn rounds(default: usize) -> usize {
    std::env::var("CORRAL_BENCH_ROUNDS")
        .ok()
        .and_then(|n| n.parse::<usize>().ok())
        .map_or(default, |n| n.clamp(5, default))
}
