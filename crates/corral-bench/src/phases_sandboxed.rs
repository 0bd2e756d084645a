//! A command-line one-shot from `main` to its exit, step by step (`one_shot`), the probes
//! it makes at every start (`probes`); then, in one process:
//! the per-call work of a sandboxed call (`workspace-write`, network off) beside the same
//! call outside the sandbox (both with the permissive policy), the sandboxed call again
//! with the policy and approval `corral mcp` gives a run by default, and the
//! parts of it that can be timed on their own: building the confinement
//! (`corral_sys::sandbox::build`, whose seccomp filters and Landlock ruleset are made for
//! each stage) and checking a plan against the run's policy.

use std::path::Path;
use std::time::{Duration, Instant};

use corral::sandbox::{SandboxConfig, SandboxMode};
use corral::{Config, ExecRequest, Run};
use corral_sys::sandbox as sys;

use crate::stats::{micros, rounds, summarize};

const ROUNDS: usize = 300;

fn open(dir: &Path, name: &str, mode: SandboxMode, permissive: bool) -> Run {
    let config = Config {
        sandbox: SandboxConfig::mode(mode),
        ..Config::default()
    };
    let builder = Run::builder(dir).store(dir.join(format!("{name}.db")));
    let builder = if permissive {
        builder.config(config).policy(corral::Policy::permissive())
    } else {
        // What `corral mcp` gives a run by default: its layered policy and approval mode.
        let overrides = corral::Overrides {
            sandbox: Some(mode),
            ..Default::default()
        };
        let posture = corral::Posture::new(corral::Surface::Mcp, dir, config, &overrides).unwrap();
        builder
            .config(posture.config)
            .policy(posture.policy)
            .approval(posture.approval)
    };
    builder.open().unwrap()
}

pub fn run() {
    crate::one_shot::run();
    crate::probes::run();
    library();
}

/// Calls in one process: the run's probes made once, its store held open.
fn library() {
    let rounds = rounds(ROUNDS);
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    let runs = [
        (
            "full, permissive policy",
            open(&ws, "a", SandboxMode::Full, true),
        ),
        (
            "workspace-write, permissive policy",
            open(&ws, "c", SandboxMode::WorkspaceWrite, true),
        ),
        (
            "workspace-write, corral mcp's default policy",
            open(&ws, "d", SandboxMode::WorkspaceWrite, false),
        ),
    ];
    let request = ExecRequest::new(["echo", "hi"]);
    let spec = sys::Spec {
        writable: vec![ws.clone(), std::env::temp_dir()],
        writable_files: vec!["/dev/null".into(), "/dev/zero".into()],
        writable_mounts: vec![ws.clone(), std::env::temp_dir()],
        private_dev: true,
        drop_caps: true,
        ..sys::Spec::default()
    };
    let host = sys::host_support();
    let mut samples: Vec<Vec<Duration>> = vec![Vec::new(); runs.len() + 1];
    for i in 0..rounds + 20 {
        for (n, (_, run)) in runs.iter().enumerate() {
            let t = Instant::now();
            let outcome = run.exec(&request).unwrap();
            let took = t.elapsed();
            assert!(outcome.status.success(), "{}", outcome.observation);
            if i >= 20 {
                samples[n].push(took);
            }
        }
        let t = Instant::now();
        let built = sys::build(&spec, &host).unwrap();
        let took = t.elapsed();
        drop(built);
        if i >= 20 {
            samples[runs.len()].push(took);
        }
    }
    println!("rounds: {rounds}, interleaved; exec [\"echo\",\"hi\"] with the trace on");
    let base = summarize(&mut samples[0]).median;
    for (n, (name, _)) in runs.iter().enumerate() {
        let s = summarize(&mut samples[n]);
        println!(
            "  Run::exec, {name:<36} median {:8.1} µs ({:.2}x)   p95 {:8.1} µs",
            micros(s.median),
            micros(s.median) / micros(base),
            micros(s.p95)
        );
    }
    let s = summarize(&mut samples[runs.len()]);
    println!(
        "  {:<47} median {:8.1} µs   p95 {:8.1} µs",
        "sandbox::build of one stage's confinement",
        micros(s.median),
        micros(s.p95)
    );
    for (_, run) in runs {
        run.close().unwrap();
    }
}
