//! A command-line one-shot, step by step: `corral exec -- true` and `corral exec --sandbox
//! workspace-write -- git status --short`, each a fresh process, taken apart.
//!
//! The steps from `main` to the exit are the library's, taken the way `corral exec` takes
//! them (`crates/corral-cli/src/main.rs` and `exec.rs`) in a process of their own: this
//! bench's binary started again as a worker ([`WORKER`]), so that what a process pays once
//! (the probes, SQLite's first pages, the helper thread) is paid in every round, as a
//! one-shot pays it. The worker stamps each step on its opening thread, the thread the
//! call's time passes on; what helper threads do beside it shows only where that thread
//! waits for them. What comes before `main` and after the exit (the `exec`, the binary's
//! pages, the standard library's start, the exit and the reap) is `corral --version`'s
//! whole time, on corral's own binary.
//!
//! Every round runs, in turn: `corral --version`, the two one-shots, the two workers and
//! the two commands alone. The steps' medians are added up and set against the one-shot's
//! median; what is left (clap's parse of `exec`'s arguments, the signal forwarding, the
//! output's passthrough and what differs between the bench's binary and corral's) is
//! printed as unaccounted, never folded into a step.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use corral::sandbox::SandboxMode;
use corral::{CallOptions, Cancel, Config, ExecRequest, Overrides, Posture, Run, Surface};

use crate::stats::{Summary, micros, rounds, spread, summarize};

/// Set in a worker's environment: which part it plays (see [`worker`]).
pub(crate) const WORKER: &str = "CORRAL_BENCH_WORKER";

const ROUNDS: usize = 200;

/// The two one-shots measured.
#[derive(Clone, Copy)]
pub(crate) enum Shot {
    /// `corral exec -- true`.
    Bare,
    /// `corral exec --sandbox workspace-write -- git status --short`, in a git repository.
    Sandboxed,
}

impl Shot {
    pub(crate) fn argv(self) -> &'static [&'static str] {
        match self {
            Shot::Bare => &["true"],
            Shot::Sandboxed => &["git", "status", "--short"],
        }
    }

    /// `corral`'s arguments for it.
    pub(crate) fn cli_args(self) -> Vec<&'static str> {
        let mut args = vec!["exec"];
        if let Shot::Sandboxed = self {
            args.extend(["--sandbox", "workspace-write"]);
        }
        args.push("--");
        args.extend(self.argv());
        args
    }

    fn role(self) -> &'static str {
        match self {
            Shot::Bare => "one-shot-bare",
            Shot::Sandboxed => "one-shot-sandboxed",
        }
    }

    fn title(self) -> String {
        format!("corral {}", self.cli_args().join(" "))
    }
}

/// What the worker times, in the order `corral exec` takes the steps.
const STEPS: [&str; 5] = [
    "keep the process private, signal handlers",
    "the policy files and the posture",
    "open the run (store, rows, helper, namespace)",
    "the call (plan, gate, box, command, rows)",
    "close the run for the exit",
];

/// A git repository with one commit and one changed file, as `git status --short` finds
/// a working tree: in `dir`, named `repo`.
pub(crate) fn git_repo(dir: &Path) -> PathBuf {
    let repo = dir.join("repo");
    std::fs::create_dir(&repo).unwrap();
    let git = |args: &[&str]| {
        let status = Command::new("git")
            .args([
                "-c",
                "user.name=bench",
                "-c",
                "user.email=bench@example.org",
            ])
            .args(args)
            .current_dir(&repo)
            .stdout(Stdio::null())
            .status()
            .expect("git is installed");
        assert!(status.success(), "git {args:?}");
    };
    git(&["init", "-q"]);
    for n in 0..20 {
        std::fs::write(repo.join(format!("file{n}.txt")), format!("{n}\n")).unwrap();
    }
    git(&["add", "."]);
    git(&["commit", "-q", "-m", "first"]);
    std::fs::write(repo.join("file0.txt"), "changed\n").unwrap();
    repo
}

/// Time a fresh process from its spawn to its reap, its output thrown away.
pub(crate) fn wall(cmd: &mut Command) -> Duration {
    let t = Instant::now();
    let status = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    let took = t.elapsed();
    assert!(status.success(), "{cmd:?}: {status}");
    took
}

/// The worker's side: take `role`'s steps and print their durations in nanoseconds, one
/// line, for the bench that started it.
pub(crate) fn worker(role: &str) {
    let shot = match role {
        "one-shot-bare" => Shot::Bare,
        "one-shot-sandboxed" => Shot::Sandboxed,
        // The bench binary's own start and exit, for the worker's exit to be told apart.
        "nothing" => return,
        other => panic!("no worker {other:?}"),
    };
    let mut laps = Vec::with_capacity(STEPS.len());
    let mut lap = Instant::now();
    let mut step = || {
        let now = Instant::now();
        laps.push(now - lap);
        lap = now;
    };
    // main: what a command that runs things does first.
    corral_sys::own_process::make_private().unwrap();
    corral_sys::escalation::install().unwrap();
    step();
    // exec::open_run: the workspace, the policy from its files, the sandbox's flags.
    let workspace = std::env::current_dir().unwrap();
    let posture = Posture::new(
        Surface::Cli,
        &workspace,
        Config::default(),
        &Overrides::default(),
    )
    .unwrap();
    let mut config = Config::default();
    if let Shot::Sandboxed = shot {
        config.sandbox.mode = SandboxMode::WorkspaceWrite;
    }
    config.sandbox.network = false;
    config.read_more = corral::config::ReadMore::Command;
    let _ = posture.files.settings().unwrap();
    step();
    let run = Run::builder(&workspace)
        .config(config)
        .policy(posture.policy)
        .approval(posture.approval)
        .keep_trace_log()
        .housekeeping_in_background()
        .approver(corral::approve::ApproveAll)
        .store(std::env::var_os("CORRAL_STORE").expect("the bench sets CORRAL_STORE"))
        .open()
        .unwrap();
    step();
    // exec::call: a cancel for the signals, the call, its outcome.
    let options = CallOptions {
        cancel: Some(Cancel::new().unwrap()),
        ..CallOptions::default()
    };
    let answer = corral::tools::EXEC
        .call_with(&run, ExecRequest::new(shot.argv().to_vec()), options)
        .unwrap();
    let outcome = answer.into_outcome().expect("exec answers an outcome");
    assert!(outcome.status.success(), "{}", outcome.observation);
    step();
    run.close_for_exit().unwrap();
    step();
    let line: Vec<String> = laps.iter().map(|d| d.as_nanos().to_string()).collect();
    println!("{}", line.join(" "));
}

/// Start this bench's binary as `role`'s worker in `dir` and read the line it prints.
pub(crate) fn run_worker(role: &str, dir: &Path, store: &Path) -> (Duration, String) {
    let t = Instant::now();
    let out = Command::new(std::env::current_exe().unwrap())
        .env(WORKER, role)
        .env("CORRAL_STORE", store)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .unwrap();
    let took = t.elapsed();
    assert!(out.status.success(), "worker {role}: {}", out.status);
    (took, String::from_utf8(out.stdout).unwrap())
}

/// One one-shot's samples.
struct Samples {
    shot: Shot,
    whole: Vec<Duration>,
    worker: Vec<Duration>,
    /// The worker's whole, less its binary's start and exit alone and its steps: what
    /// exiting costs a process that did the call (its threads, its mappings, its files).
    exit: Vec<Duration>,
    /// The one-shot's whole, less `corral --version`, the worker's steps and its exit, all
    /// of the same round.
    /// In µs, signed: the parts may add up to more than the whole.
    rest: Vec<f64>,
    steps: Vec<Vec<Duration>>,
    alone: Vec<Duration>,
}

impl Samples {
    fn new(shot: Shot) -> Self {
        Self {
            shot,
            whole: Vec::new(),
            worker: Vec::new(),
            exit: Vec::new(),
            rest: Vec::new(),
            steps: STEPS.iter().map(|_| Vec::new()).collect(),
            alone: Vec::new(),
        }
    }

    fn print(&mut self, start: Summary) {
        let w = summarize(&mut self.whole);
        println!("{}", self.shot.title());
        println!("  {:<52} {}", "the whole process, spawn to reap", spread(w));
        println!(
            "  {:<52} {}",
            "1. start and exit (corral --version)",
            spread(start)
        );
        let mut sum = micros(start.median);
        for (n, (name, samples)) in STEPS.iter().zip(&mut self.steps).enumerate() {
            let s = summarize(samples);
            sum += micros(s.median);
            println!("  {:<52} {}", format!("{}. {name}", n + 2), spread(s));
            if n == 3 {
                let a = summarize(&mut self.alone);
                println!(
                    "  {:<52} {}",
                    format!("     of which the command alone ({})", self.shot.argv()[0]),
                    spread(a)
                );
            }
        }
        let exit = summarize(&mut self.exit);
        sum += micros(exit.median);
        println!(
            "  {:<52} {}",
            "7. the exit after the work (see below)",
            spread(exit)
        );
        let rest = micros(w.median) - sum;
        println!("  {:<52} median {sum:8.1} µs", "sum of the steps' medians");
        println!(
            "  {:<52} median {rest:8.1} µs ({:+.1} % of the whole)",
            "unaccounted (whole - sum)",
            100.0 * rest / micros(w.median)
        );
        self.rest.sort_by(f64::total_cmp);
        let paired = self.rest[self.rest.len() / 2];
        println!(
            "  {:<52} median {paired:8.1} µs ({:+.1} % of the whole)",
            "unaccounted, round by round (median)",
            100.0 * paired / micros(w.median)
        );
        println!(
            "  {:<52} {}",
            "(the worker's own process, spawn to reap)",
            spread(summarize(&mut self.worker))
        );
        println!(
            "  (7: the worker's whole less its steps and less the bench binary started and \
             ended alone; unaccounted: clap's parse of exec's arguments, the signal \
             forwarding, the passthrough, and what differs between the two binaries)"
        );
    }
}

pub fn run() {
    let rounds = rounds(ROUNDS);
    let corral = crate::mcp_roundtrip::corral_binary();
    let dir = tempfile::tempdir().unwrap();
    let repo = git_repo(dir.path());
    let bare_ws = dir.path().join("ws");
    std::fs::create_dir(&bare_ws).unwrap();
    let stores = [dir.path().join("cli.db"), dir.path().join("worker.db")];
    let version = || {
        let mut cmd = Command::new(&corral);
        cmd.arg("--version");
        cmd
    };
    let cli = |shot: Shot, ws: &Path| {
        let mut cmd = Command::new(&corral);
        cmd.args(shot.cli_args())
            .current_dir(ws)
            .env("CORRAL_STORE", &stores[0]);
        cmd
    };
    let alone = |shot: Shot, ws: &Path| {
        let argv = shot.argv();
        let mut cmd = Command::new(argv[0]);
        cmd.args(&argv[1..]).current_dir(ws);
        cmd
    };
    let mut start = Vec::new();
    let nothing_store = dir.path().join("nothing.db");
    let mut shots = [Samples::new(Shot::Bare), Samples::new(Shot::Sandboxed)];
    for round in 0..rounds + 10 {
        let counted = round >= 10;
        let v = wall(&mut version());
        let (bench_start, _) = run_worker("nothing", dir.path(), &nothing_store);
        if counted {
            start.push(v);
        }
        for samples in &mut shots {
            let ws = match samples.shot {
                Shot::Bare => &bare_ws,
                Shot::Sandboxed => &repo,
            };
            let whole = wall(&mut cli(samples.shot, ws));
            let (worker, line) = run_worker(samples.shot.role(), ws, &stores[1]);
            let a = wall(&mut alone(samples.shot, ws));
            if !counted {
                continue;
            }
            samples.whole.push(whole);
            samples.worker.push(worker);
            samples.alone.push(a);
            let steps: Vec<Duration> = line
                .split_whitespace()
                .map(|ns| Duration::from_nanos(ns.parse().unwrap()))
                .collect();
            let took: Duration = steps.iter().sum();
            let exit = worker.saturating_sub(took + bench_start);
            samples.exit.push(exit);
            let parts = v + took + exit;
            samples.rest.push(micros(whole) - micros(parts));
            for (samples, step) in samples.steps.iter_mut().zip(steps) {
                samples.push(step);
            }
        }
    }
    println!(
        "rounds: {rounds}, each a fresh process, alternating (--version, the one-shot, its worker, the command alone)"
    );
    let start = summarize(&mut start);
    for samples in &mut shots {
        samples.print(start);
    }
}
