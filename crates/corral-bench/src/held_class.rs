//! What holding the files host programs run adds to a sandboxed call: `exec(["touch",
//! "x"])` (workspace-write, network off, through the library with the trace on; a call
//! that may write, so the walk for nested `.git` runs after it), interleaved in one run,
//! with the undo record off: in an empty workspace (the baseline); with eight held paths
//! (per-call copies made, bound over each, compared after the call); with 10,000
//! directories and no held path (the walk alone). And, for scale, the 10,000 directories
//! with the undo record on (its own walk of the workspace before and after).

use std::path::Path;
use std::time::Instant;

use corral::{Config, ExecRequest, Run, sandbox::SandboxConfig, sandbox::SandboxMode};

use crate::stats::{micros, rounds, summarize};

fn open(dir: &Path, record: bool) -> Run {
    Run::builder(dir.join("ws"))
        .store(dir.join(if record { "recorded.db" } else { "trace.db" }))
        .config(Config {
            sandbox: SandboxConfig::mode(SandboxMode::WorkspaceWrite),
            record,
            ..Config::default()
        })
        .policy(corral::Policy::permissive())
        .open()
        .unwrap()
}

fn workspace(files: &[(&str, &str)], dirs: usize) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    for (path, content) in files {
        let path = ws.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }
    for i in 0..dirs {
        std::fs::create_dir_all(ws.join(format!("d{}/e{}", i / 100, i % 100))).unwrap();
    }
    dir
}

pub fn run() {
    let n = rounds(200);
    let empty = workspace(&[], 0);
    let held = workspace(
        &[
            (
                ".claude/settings.json",
                r#"{"permissions": {"deny": ["Bash"]}}"#,
            ),
            (".claude/hooks/check.sh", "#!/bin/sh\nexit 0\n"),
            (".mcp.json", r#"{"mcpServers": {}}"#),
            (".vscode/tasks.json", r#"{"tasks": []}"#),
            (".vscode/settings.json", "{}"),
            (".husky/pre-commit", "npx lint-staged\n"),
            (".cargo/config.toml", "[build]\njobs = 2\n"),
            (".npmrc", "fund=false\n"),
        ],
        0,
    );
    let deep = workspace(&[], 10_000);
    let runs = [
        open(empty.path(), false),
        open(held.path(), false),
        open(deep.path(), false),
        open(deep.path(), true),
    ];
    let request = ExecRequest::new(["touch", "x"]);
    // A run's first writing call walks every directory; later ones only what changed.
    for (what, run) in [
        "empty",
        "8 held paths",
        "10,000 directories",
        "10,000 directories, undo on",
    ]
    .iter()
    .zip(&runs)
    {
        let t = Instant::now();
        run.exec(&request).unwrap();
        println!(
            "first call of the run, {what:30} {:8.1} µs",
            micros(t.elapsed())
        );
    }
    for _ in 0..10 {
        for run in &runs {
            run.exec(&request).unwrap();
        }
    }
    let mut samples = [Vec::new(), Vec::new(), Vec::new(), Vec::new()];
    for _ in 0..n {
        for (i, run) in runs.iter().enumerate() {
            let t = Instant::now();
            let outcome = run.exec(&request).unwrap();
            samples[i].push(t.elapsed());
            assert!(outcome.status.success());
        }
    }
    let [e, h, d, r] = samples.map(|mut v| summarize(&mut v));
    println!("rounds: {n} each, interleaved");
    for (what, s) in [
        ("empty workspace (baseline)", e),
        ("8 held paths, copied and bound", h),
        ("10,000 directories (nested .git walk)", d),
        ("10,000 directories, undo record on", r),
    ] {
        println!(
            "touch x, {what:40} median {:8.1} µs  p95 {:8.1} µs  ({:.2}x)",
            micros(s.median),
            micros(s.p95),
            micros(s.median) / micros(e.median)
        );
    }
}
