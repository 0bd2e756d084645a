//! Medians and percentiles of a set of durations.

use std::time::Duration;

/// Summary of a set of samples.
#[derive(Debug, Clone, Copy)]
pub struct Summary {
    pub median: Duration,
    pub p95: Duration,
}

pub fn summarize(samples: &mut [Duration]) -> Summary {
    samples.sort_unstable();
    let at = |q: f64| samples[((samples.len() - 1) as f64 * q).round() as usize];
    Summary {
        median: at(0.5),
        p95: at(0.95),
    }
}

pub fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}
