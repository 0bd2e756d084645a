//! `Policy::check_command` on a typical stage (`cargo test -p foo --release`) against a
//! policy of 1,000 exec rules in three layers, with a `HashSet<&str>` lookup of the
//! basename as the same-process baseline. Both are timed in batches of `BATCH` calls,
//! interleaved; the figures are per call.

use std::collections::HashSet;
use std::hint::black_box;
use std::time::Instant;

use corral_policy::{CommandCheck, Effect, Policy};

use crate::stats::{micros, summarize};

const RULES: usize = 1000;
const BATCH: usize = 64;
const SAMPLES: usize = 400;
const GOAL_MEDIAN_US: f64 = 2.0;

/// A realistic mix: half basenames, a third `tool sub*` argv globs, some single-word
/// globs and some path globs, spread over three layers, plus the two rules the stage
/// actually meets (`allow "cargo test*"`, `deny "cargo publish*"`).
fn policy() -> Policy {
    let mut policy = Policy::default();
    let per_layer = (RULES - 2).div_ceil(3);
    for (n, layer) in ["operator", "user", "project"].into_iter().enumerate() {
        policy = policy.layer(layer);
        for i in n * per_layer..((n + 1) * per_layer).min(RULES - 2) {
            policy = match i % 10 {
                0..=4 => policy.deny_exec(&format!("tool{i}")),
                5..=7 => policy.allow_exec(&format!("tool{i} sub{i}*")),
                8 => policy.ask_exec(&format!("/opt/tool{i}/bin/*")),
                _ => policy.allow_exec(&format!("tool{i}-*")),
            };
        }
    }
    policy
        .layer("operator")
        .deny_exec("cargo publish*")
        .layer("project")
        .allow_exec("cargo test*")
}

pub fn run() {
    let policy = policy();
    let rules: usize = policy.layers().iter().map(|l| l.rules().len()).sum();
    let argv: Vec<String> = ["cargo", "test", "-p", "foo", "--release"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let check = CommandCheck {
        argv: &argv,
        program_path: None,
    };
    let names: Vec<String> = (0..RULES).map(|i| format!("tool{i}")).collect();
    let set: HashSet<&str> = names.iter().map(String::as_str).collect();

    // Warm up (the first check compiles the rules).
    let verdict = policy.check_command(&check);
    assert_eq!(verdict.effect, Effect::Allow, "{verdict}");
    for _ in 0..1000 {
        black_box(policy.check_command(black_box(&check)));
    }

    let (mut base, mut ours) = (Vec::with_capacity(SAMPLES), Vec::with_capacity(SAMPLES));
    for _ in 0..SAMPLES {
        let t = Instant::now();
        for _ in 0..BATCH {
            let program = black_box(&argv)[0].as_str();
            let name = program.rsplit('/').next().unwrap_or(program);
            black_box(set.contains(name));
        }
        base.push(t.elapsed() / BATCH as u32);
        let t = Instant::now();
        for _ in 0..BATCH {
            black_box(policy.check_command(black_box(&check)));
        }
        ours.push(t.elapsed() / BATCH as u32);
    }
    let (b, o) = (summarize(&mut base), summarize(&mut ours));
    println!(
        "rules: {rules} exec rules in 3 layers; {} calls each, in batches of {BATCH}, interleaved",
        SAMPLES * BATCH
    );
    println!(
        "HashSet basename lookup   median {:8.3} µs   p95 {:8.3} µs",
        micros(b.median),
        micros(b.p95)
    );
    println!(
        "check_command             median {:8.3} µs   p95 {:8.3} µs   (goal: median ≤ {GOAL_MEDIAN_US} µs)",
        micros(o.median),
        micros(o.p95)
    );
    println!(
        "ratio (median)            {:8.1}x",
        o.median.as_secs_f64() / b.median.as_secs_f64().max(1e-12)
    );
}
