//! Rough cost of recording a step, and of opening a large store.
//!
//! `cargo run --release -p corral-trace --example step_cost [DIR]`
//!
//! Prints numbers; asserts nothing.

use std::path::PathBuf;
use std::time::Instant;

use corral_trace::{NewRun, NewStep, Retention, StepDone, Store};

const STEPS: i64 = 100_000;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let scratch = std::env::args()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            std::env::temp_dir().join(format!("corral-trace-bench-{}", std::process::id()))
        });
    let path = scratch.join("trace.db");
    let _ = std::fs::remove_dir_all(&scratch);

    let store = Store::open(&path)?;
    store.begin_run(&NewRun {
        id: "bench".into(),
        workspace: "/w".into(),
        started_at_ms: 0,
        pid: std::process::id(),
        config_json: "{}".into(),
    })?;
    let step = NewStep {
        run_id: "bench".into(),
        tool: "exec".into(),
        call_json: r#"{"argv":["cargo","test","--workspace"]}"#.into(),
        cwd: "/w".into(),
        started_at_ms: 1,
    };
    let done = StepDone {
        argv_json: r#"["cargo","test","--workspace"]"#.into(),
        duration_ms: 1234,
        exit_code: Some(0),
        outcome: "exited".into(),
        stdout_bytes: 4096,
        stderr_bytes: 100,
        stdout_path: Some("captures/bench/1.stdout".into()),
        stderr_path: Some("captures/bench/1.stderr".into()),
        observation: "test result: ok. 42 passed\n".repeat(8),
        ..StepDone::default()
    };

    let (mut begin, mut finish) = (std::time::Duration::ZERO, std::time::Duration::ZERO);
    for _ in 0..STEPS {
        let t = Instant::now();
        let ids = store.begin_step(&step)?;
        let t2 = Instant::now();
        store.finish_step(ids.id, &done)?;
        begin += t2 - t;
        finish += t2.elapsed();
    }
    let n = STEPS as u32;
    println!(
        "begin_step + finish_step: {:?} per step (begin {:?}, finish {:?}; {STEPS} steps)",
        (begin + finish) / n,
        begin / n,
        finish / n
    );
    drop(store);

    let t = Instant::now();
    let store = Store::open(&path)?;
    println!("open with {STEPS} steps: {:?}", t.elapsed());
    let t = Instant::now();
    let runs = store.runs(100)?;
    println!(
        "runs(100): {:?} ({} steps in newest)",
        t.elapsed(),
        runs[0].steps
    );
    let t = Instant::now();
    let report = store.prune(&Retention::default())?;
    println!("prune: {:?} ({report:?})", t.elapsed());
    let t = Instant::now();
    let ids = store.begin_step(&step)?;
    store.finish_step(ids.id, &done)?;
    println!(
        "one more step after reopen: {:?} (seq {})",
        t.elapsed(),
        ids.seq
    );
    drop(store);

    std::fs::remove_dir_all(&scratch)?;
    Ok(())
}
