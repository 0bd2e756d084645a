//! Ctrl-C at `corral run` and `corral verify`: what runs is ended, the last line says
//! "interrupted" with what the gate said and the run id, the trace records the run as
//! `interrupted`, and corral exits 130, also when it was started with SIGINT ignored and
//! while it waits for a model that does not answer.

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::common;
use crate::task_common;

use common::{Scratch, text, wait_bounded};
use serde_json::json;
use task_common::*;

/// A command the model or the gate runs: it says it started, then waits long, as
/// `sleep 301.25` (a spelling no other test uses, to look for in `/proc`).
const LONG: &str = "echo up > started; exec sleep 301.25";

/// `corral ARGS` in the background, stdin from /dev/null, stderr kept in a file.
fn start(s: &Scratch, args: &[&str], ignoring_sigint: bool) -> Child {
    start_with(s, args, ignoring_sigint, &[])
}

fn start_with(s: &Scratch, args: &[&str], ignoring_sigint: bool, env: &[(&str, String)]) -> Child {
    let err = std::fs::File::create(s.dir.path().join("stderr")).unwrap();
    let mut cmd = if ignoring_sigint {
        // As a script's `cmd &` leaves it: SIGINT ignored, which survives `exec`.
        let mut sh = Command::new("sh");
        sh.args([
            "-c",
            "trap '' INT; exec \"$0\" \"$@\"",
            env!("CARGO_BIN_EXE_corral"),
        ]);
        sh.args(args);
        sh
    } else {
        let mut c = Command::new(env!("CARGO_BIN_EXE_corral"));
        c.args(args);
        c
    };
    cmd.current_dir(s.workspace())
        .env("CORRAL_STORE", s.store())
        .env("XDG_CACHE_HOME", s.dir.path().join("cache"))
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(err)
        .spawn()
        .unwrap()
}

fn stderr_of(s: &Scratch) -> String {
    std::fs::read_to_string(s.dir.path().join("stderr")).unwrap_or_default()
}

/// Wait, bounded, until `what` holds; fail with `why` and corral's stderr if it never does.
fn wait_until(s: &Scratch, why: &str, what: impl Fn() -> bool) {
    let until = std::time::Instant::now() + Duration::from_secs(30);
    while !what() {
        assert!(
            std::time::Instant::now() < until,
            "{why} never happened: {}",
            stderr_of(s)
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn interrupt(child: &Child) {
    let sent = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
}

/// Processes still running `sleep 301.25`.
fn long_sleepers() -> usize {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| {
            std::fs::read(e.path().join("cmdline"))
                .is_ok_and(|c| c.windows(13).any(|w| w == b"sleep\x00301.25"))
        })
        .count()
}

fn run_line(s: &Scratch) -> String {
    let out = s.output(&["trace", "runs", "--limit", "1"]);
    text(&out.stdout)
}

fn started(s: &Scratch) -> impl Fn() -> bool + '_ {
    move || s.workspace().join("started").exists()
}

fn assert_interrupted(s: &Scratch, child: &mut Child, gate: &str) {
    let status = wait_bounded(child, Duration::from_secs(10), "an interrupted corral");
    let err = stderr_of(s);
    assert_eq!(status.code(), Some(130), "{err}");
    let last = err.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("corral: not verified: interrupted"),
        "{err}"
    );
    assert!(last.contains(gate), "{err}");
    assert!(last.contains(" · run r"), "{err}");
    assert!(run_line(s).contains("interrupted"), "{}", run_line(s));
    wait_until(s, "the call's processes ending", || long_sleepers() == 0);
}

#[test]
fn sigint_during_a_models_call_ends_it_and_says_interrupted() {
    for ignoring in [false, true] {
        let s = Scratch::new();
        failing_repo(&s.workspace());
        let model = script_model(
            s.dir.path(),
            &[
                vec![("exec", json!({"argv": ["sh", "-c", LONG]}))],
                vec![("done", json!({}))],
            ],
        );
        // `--yes`: where this host's box is not whole (an ordinary user's) the call
        // would be asked about, and headless not approved.
        let mut child = start(
            &s,
            &[
                "run",
                "fix it",
                "--verify",
                "sh test.sh",
                "--model",
                &model,
                "--yes",
            ],
            ignoring,
        );
        wait_until(&s, "the model's call starting", started(&s));
        interrupt(&child);
        assert_interrupted(&s, &mut child, "gate not run");
        let steps = text(&s.output(&["trace", "steps", "--limit", "1"]).stdout);
        assert!(steps.contains("cancelled"), "{steps}");
    }
}

#[test]
fn sigint_during_the_gate_ends_it_and_says_interrupted() {
    let gate = format!("sh -c '{LONG}'");
    for verb in ["run", "verify"] {
        let s = Scratch::new();
        let model = script_model(s.dir.path(), &[vec![("done", json!({}))]]);
        let args: &[&str] = match verb {
            "run" => &["run", "x", "--verify", &gate, "--model", &model],
            _ => &["verify", "--verify", &gate],
        };
        let mut child = start(&s, args, false);
        wait_until(&s, "the gate starting", started(&s));
        interrupt(&child);
        assert_interrupted(&s, &mut child, "gate");
    }
}

#[test]
fn sigint_while_the_model_has_not_answered_ends_the_run_at_once() {
    let s = Scratch::new();
    failing_repo(&s.workspace());
    let server = Server::start(vec![
        Reply::json(openai(Some("late"), &[])).after(Duration::from_secs(120)),
    ]);
    let mut child = start_with(
        &s,
        &[
            "run",
            "fix it",
            "--verify",
            "sh test.sh",
            "--model",
            "openai:local-model",
        ],
        false,
        &[
            ("OPENAI_BASE_URL", format!("{}/v1", server.base)),
            ("OPENAI_API_KEY", "sk-test".into()),
        ],
    );
    wait_until(&s, "the model request arriving", || {
        !server.received().is_empty()
    });
    interrupt(&child);
    let status = wait_bounded(
        &mut child,
        Duration::from_secs(2),
        "a corral waiting for a model",
    );
    let err = stderr_of(&s);
    assert_eq!(status.code(), Some(130), "{err}");
    assert!(
        err.contains("interrupted while waiting for the model · gate not run"),
        "{err}"
    );
    assert!(run_line(&s).contains("interrupted"), "{}", run_line(&s));
}

#[test]
fn the_last_line_counts_the_calls_that_were_not_approved() {
    let s = Scratch::new();
    failing_repo(&s.workspace());
    // What a rule asks about is asked; headless, nobody can answer.
    let ask = ("exec", json!({"argv": ["python3", "-c", "print(1)"]}));
    let model = script_model(
        s.dir.path(),
        &[vec![ask.clone(), ask], vec![("done", json!({}))]],
    );
    let out = s.output(&[
        "run", "x", "--verify", "true", "--ask", "python3", "--model", &model,
    ]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let live = err.lines().filter(|l| l.starts_with("  exec"));
    assert_eq!(
        live.filter(|l| l.contains("  not approved ·")).count(),
        2,
        "{err}"
    );
    let last = err
        .lines()
        .rfind(|l| l.starts_with("corral: verified"))
        .unwrap();
    assert!(
        last.contains(", 2 calls were not approved · run r"),
        "{err}"
    );
}

#[test]
fn a_refusal_of_the_gate_is_the_gates_in_the_trace() {
    let s = Scratch::new();
    failing_repo(&s.workspace());
    let model = script_model(
        s.dir.path(),
        &[
            vec![("exec", json!({"argv": ["python3", "-c", "print(1)"]}))],
            vec![("done", json!({}))],
        ],
    );
    let out = s.output(&[
        "run",
        "x",
        "--verify",
        "sh test.sh",
        "--deny",
        "sh",
        "--ask",
        "python3",
        "--model",
        &model,
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let listed = s.output(&["trace", "refused"]);
    let refused = text(&listed.stdout);
    assert!(listed.status.success(), "{}", text(&listed.stderr));
    let gate = refused
        .lines()
        .find(|l| l.contains("sh test.sh"))
        .expect(&refused);
    assert!(gate.contains("asked by the gate"), "{refused}");
    let call = refused
        .lines()
        .find(|l| l.contains("python3"))
        .unwrap_or_else(|| panic!("{refused}{}", text(&out.stderr)));
    assert!(call.contains("asked by a call (exec)"), "{refused}");
    let json: serde_json::Value =
        serde_json::from_slice(&s.output(&["trace", "refused", "--json"]).stdout).unwrap();
    let by: Vec<&str> = json
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["asked_by"].as_str().unwrap())
        .collect();
    assert_eq!(by, ["gate", "call"], "{json}");
}
