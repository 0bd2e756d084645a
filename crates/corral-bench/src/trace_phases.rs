//! What a command-line call's trace costs, step by step: each round opens the store the
//! way `corral exec` does (a log the last opener kept, which this open reads back),
//! records a run and one unsandboxed step, ends them and closes, timing each step. Next
//! to it, in the same rounds, the same rows written by one open SQLite connection held
//! across rounds: what the rows cost when nothing is opened, the floor the steps are
//! measured against.

use std::time::{Duration, Instant};

use corral_trace::{NewRun, NewSandboxEvent, NewStep, Retention, StepDone, Store};

use crate::stats::{micros, summarize};

const ROUNDS: usize = 300;
const WARMUP: usize = 20;

const STEPS: [&str; 10] = [
    "open the store (its log read back)",
    "close runs a dead corral left",
    "record the run",
    "claim it (the owners file)",
    "apply the capture retention",
    "record the step's start",
    "record its sandbox row",
    "record its end",
    "record the run's end",
    "close (the log kept)",
];

pub fn run() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("trace.db");
    let held = Store::open(&dir.path().join("held.db")).unwrap();
    let mut steps: Vec<Vec<Duration>> = STEPS.iter().map(|_| Vec::new()).collect();
    let (mut whole, mut floor) = (Vec::new(), Vec::new());
    for round in 0..WARMUP + ROUNDS {
        let counted = round >= WARMUP;
        let began = Instant::now();
        let mut lap = Instant::now();
        let mut step = |i: usize| {
            let now = Instant::now();
            if counted {
                steps[i].push(now - lap);
            }
            lap = now;
        };
        let store = Store::open(&path).unwrap();
        store.keep_log_on_close().unwrap();
        step(0);
        store.close_abandoned(0).unwrap();
        step(1);
        let id = format!("r{round}");
        store.begin_run(&new_run(&id)).unwrap();
        step(2);
        let claim = store.claim_run(&id).unwrap();
        step(3);
        store.prune(&Retention::default()).unwrap();
        step(4);
        rows(&store, &id, &mut step);
        drop((claim, store));
        step(9);
        if counted {
            whole.push(began.elapsed());
        }
        // The floor: the same rows on a connection that stays open.
        let began = Instant::now();
        let id = format!("held{round}");
        held.begin_run(&new_run(&id)).unwrap();
        rows(&held, &id, &mut |_| {});
        if counted {
            floor.push(began.elapsed());
        }
    }
    println!("rounds: {ROUNDS}, each a fresh open of a store whose log the last one kept");
    let mut sum = 0.0;
    for (name, mut samples) in STEPS.iter().zip(steps) {
        let s = summarize(&mut samples);
        sum += micros(s.median);
        println!(
            "{name:<40} median {:8.1} µs   p95 {:8.1} µs",
            micros(s.median),
            micros(s.p95)
        );
    }
    let (w, f) = (summarize(&mut whole), summarize(&mut floor));
    println!("{:<40} median {sum:8.1} µs", "sum of the steps' medians");
    println!(
        "{:<40} median {:8.1} µs ({:.2}x the held connection's)",
        "the whole, opened and closed",
        micros(w.median),
        micros(w.median) / micros(f.median)
    );
    println!(
        "{:<40} median {:8.1} µs",
        "the same rows on a held connection",
        micros(f.median)
    );
}

/// A run's step, its sandbox row, its end and the run's end, as an unsandboxed call
/// writes them; `step(i)` after each.
fn rows(store: &Store, run_id: &str, step: &mut dyn FnMut(usize)) {
    let ids = store
        .begin_step(&NewStep {
            run_id: run_id.into(),
            tool: "exec".into(),
            call_json: r#"{"argv":["true"]}"#.into(),
            cwd: "/ws".into(),
            started_at_ms: 1,
        })
        .unwrap();
    step(5);
    store
        .record_sandbox_event(&NewSandboxEvent {
            run_id: run_id.into(),
            step_id: Some(ids.id),
            at_ms: 1,
            mode: "full".into(),
            network: true,
            layer: "mode".into(),
            level: "none".into(),
            detail: "sandbox mode full: corral applied none".into(),
        })
        .unwrap();
    step(6);
    store.finish_step(ids.id, &exited_true()).unwrap();
    step(7);
    store.end_run(run_id, 2, "closed").unwrap();
    step(8);
}

/// The end of a step that ran `true` and printed nothing.
pub(crate) fn exited_true() -> StepDone {
    StepDone {
        argv_json: r#"["true"]"#.into(),
        duration_ms: 1,
        exit_code: Some(0),
        signal: None,
        timed_out: false,
        outcome: "exited".into(),
        stdout_bytes: 0,
        stderr_bytes: 0,
        stdout_path: None,
        stderr_path: None,
        observation: "exit 0 · 1ms\n(no output)\n".into(),
        error: None,
        containment: Some("cgroup-v2+pids-v1+pid-ns".into()),
    }
}

fn new_run(id: &str) -> NewRun {
    NewRun {
        id: id.into(),
        workspace: "/ws".into(),
        started_at_ms: 1,
        pid: std::process::id(),
        config_json: "{}".into(),
    }
}
