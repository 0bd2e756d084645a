//! No row is left `running` once its owner is gone. A corral killed with SIGKILL at any
//! moment of a call leaves nothing alive, and the next corral to open the store closes the
//! run, its step and its handles as `aborted`, and says so once. A corral ended by SIGTERM
//! or SIGINT closes them itself.

use crate::common;

use std::io::Write;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use common::{Scratch, testbin, text};

fn alive(marker: &str) -> usize {
    corral_test_support::processes_with(marker).len()
}

/// Wait until nothing carrying `marker` is left (the kernel delivers a kill a moment
/// after it is sent); how many are.
fn settle(marker: &str) -> usize {
    let until = Instant::now() + Duration::from_secs(5);
    while alive(marker) > 0 && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    alive(marker)
}

fn kill(child: &mut Child, signal: &str) {
    let status = std::process::Command::new("kill")
        .args([signal, &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

/// Every run, step and handle of the store, as listings show them; none `running`.
fn assert_nothing_running(s: &Scratch) {
    let runs = text(&s.output(&["trace", "runs", "--json"]).stdout);
    let runs: serde_json::Value = serde_json::from_str(&runs).unwrap();
    for run in runs.as_array().unwrap() {
        assert!(!run["ended_how"].is_null(), "a run is left running: {run}");
        let id = run["id"].as_str().unwrap();
        let handles = text(
            &s.output(&["trace", "handles", "--run", id, "--json"])
                .stdout,
        );
        let handles: serde_json::Value = serde_json::from_str(&handles).unwrap();
        for h in handles.as_array().unwrap() {
            assert!(!h["how"].is_null(), "a handle is left running: {h}");
        }
    }
    let steps = text(&s.output(&["trace", "steps", "--json"]).stdout);
    let steps: serde_json::Value = serde_json::from_str(&steps).unwrap();
    for step in steps.as_array().unwrap() {
        assert!(!step["outcome"].is_null(), "a step is left running: {step}");
    }
}

#[test]
fn sigkill_at_any_moment_of_a_call_leaves_nothing_running_after_the_next_open() {
    if !common::leftovers_of_a_killed_corral_are_reachable(&Scratch::new()) {
        return;
    }
    // From before the run is recorded, through the spawn, to the command running.
    for delay_ms in [0, 5, 20, 60, 150, 400] {
        let s = Scratch::new();
        let marker = format!("corral-abandoned-{}-{delay_ms}", std::process::id());
        let mut corral = s
            .corral(&["exec", "--", &testbin(), "pair", "60000", &marker])
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(delay_ms));
        kill(&mut corral, "-KILL");
        corral.wait().unwrap();

        let next = s.output(&["exec", "--", "true"]);
        assert!(next.status.success(), "{}", text(&next.stderr));
        let left = settle(&marker);
        corral_test_support::cleanup(&marker);
        assert_eq!(
            left, 0,
            "processes outlived corral (killed after {delay_ms} ms)"
        );
        assert_nothing_running(&s);
        let said = text(&next.stderr);
        if said.contains("aborted") {
            assert!(said.contains("had ended without closing it"), "{said}");
            // The step that was running, if the kill came after it was recorded, says
            // what became of it.
            let steps = text(&s.output(&["trace", "steps", "--json"]).stdout);
            let steps: serde_json::Value = serde_json::from_str(&steps).unwrap();
            for step in steps.as_array().unwrap() {
                if step["call_json"]
                    .as_str()
                    .is_some_and(|c| c.contains("pair"))
                {
                    assert!(
                        step.to_string().contains("ended before this call did"),
                        "{step}"
                    );
                }
            }
        }
        // Said once: the next corral finds nothing more to close.
        let again = s.output(&["exec", "--", "true"]);
        assert!(
            !text(&again.stderr).contains("aborted"),
            "{}",
            text(&again.stderr)
        );
    }
}

#[test]
fn a_killed_run_is_closed_with_its_last_output() {
    let s = Scratch::new();
    let marker = format!("corral-abandoned-output-{}", std::process::id());
    let mut corral = s
        .corral(&[
            "exec",
            "--",
            "sh",
            "-c",
            "echo last words; sleep 60",
            &marker,
        ])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    // Once the line came through, it is in the capture too.
    let mut out = std::io::BufReader::new(corral.stdout.take().unwrap());
    let mut line = String::new();
    std::io::BufRead::read_line(&mut out, &mut line).unwrap();
    assert_eq!(line, "last words\n");
    kill(&mut corral, "-KILL");
    corral.wait().unwrap();

    let next = s.output(&["exec", "--", "true"]);
    let said = text(&next.stderr);
    assert_eq!(said.matches("as aborted").count(), 1, "{said}");
    assert!(said.contains("1 call and 0 handles"), "{said}");
    let steps = text(&s.output(&["trace", "steps", "--json"]).stdout);
    let steps: serde_json::Value = serde_json::from_str(&steps).unwrap();
    let aborted = steps
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["outcome"] == "aborted")
        .expect("the killed call is aborted");
    let observation = aborted["observation"].as_str().unwrap();
    assert!(observation.contains("last words"), "{observation}");
    assert_eq!(aborted["stdout_bytes"], 11);
    assert_nothing_running(&s);
    corral_test_support::cleanup(&marker);
}

#[test]
fn a_killed_terminal_session_leaves_its_handle_closed_too() {
    let s = Scratch::new();
    let marker = format!("corral-abandoned-tty-{}", std::process::id());
    let mut corral = s
        .corral(&[
            "shell",
            "--tty",
            &format!("{} pair 60000 {marker}", testbin()),
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let until = Instant::now() + Duration::from_secs(10);
    // corral carries the marker in its argv, then the pair.
    while alive(&marker) < 3 && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    kill(&mut corral, "-KILL");
    corral.wait().unwrap();
    let next = s.output(&["exec", "--", "true"]);
    assert!(
        text(&next.stderr).contains("1 handle left running"),
        "{}",
        text(&next.stderr)
    );
    let left = settle(&marker);
    corral_test_support::cleanup(&marker);
    assert_eq!(left, 0);
    assert_nothing_running(&s);
}

fn end_a_terminal_session_with(signal: &str, expect: i32) {
    let s = Scratch::new();
    let marker = format!("corral-tty-{signal}-{}", std::process::id());
    let mut corral = s
        .corral(&[
            "shell",
            "--tty",
            &format!("{} pair 60000 {marker}", testbin()),
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let until = Instant::now() + Duration::from_secs(10);
    while alive(&marker) < 3 && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    kill(&mut corral, signal);
    let status = corral.wait().unwrap();
    let left = settle(&marker);
    corral_test_support::cleanup(&marker);
    assert_eq!(status.code(), Some(expect));
    assert_eq!(left, 0);
    // Closed by the session itself: the next corral has nothing to close.
    let next = s.output(&["exec", "--", "true"]);
    assert!(
        !text(&next.stderr).contains("aborted"),
        "{}",
        text(&next.stderr)
    );
    assert_nothing_running(&s);
}

#[test]
fn sigterm_ends_a_terminal_session_and_closes_its_rows() {
    end_a_terminal_session_with("-TERM", 143);
}

#[test]
fn sigint_ends_a_terminal_session_and_closes_its_rows() {
    end_a_terminal_session_with("-INT", 130);
}

#[test]
fn a_terminal_session_honours_its_timeout() {
    let s = Scratch::new();
    let mut corral = s
        .corral(&["shell", "--tty", "--timeout", "1s", "sleep 60"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let out = {
        let _keep_stdin_open = corral.stdin.take();
        corral.wait_with_output().unwrap()
    };
    assert_eq!(out.status.code(), Some(124), "{}", text(&out.stderr));
    assert!(started.elapsed() < Duration::from_secs(20));
    assert_nothing_running(&s);
}

#[test]
fn input_that_ends_ends_a_repl_the_way_c_d_does() {
    for program in ["python3", "bash"] {
        let s = Scratch::new();
        let mut corral = s
            .corral(&["shell", "--tty", "--timeout", "30s", program])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        corral
            .stdin
            .take()
            .unwrap()
            .write_all(b"print(6 * 7) if True else 0\n")
            .unwrap();
        let out = corral.wait_with_output().unwrap();
        // Not the timeout: the end of input ended it.
        assert_ne!(
            out.status.code(),
            Some(124),
            "{program} waited for input forever"
        );
        if program == "python3" {
            assert!(text(&out.stdout).contains("42"), "{}", text(&out.stdout));
        }
    }
}

#[test]
fn bytes_typed_arrive_unchanged() {
    let s = Scratch::new();
    let mut corral = s
        .corral(&["shell", "--tty", "--timeout", "30s", "od -An -tx1 -N3"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    // Raw bytes that are not UTF-8, with the terminal's line discipline left alone: the
    // 0xff and 0xfe reach `od` as typed.
    corral
        .stdin
        .take()
        .unwrap()
        .write_all(b"\xff\xfe\n")
        .unwrap();
    let out = corral.wait_with_output().unwrap();
    assert!(
        text(&out.stdout).contains("ff fe 0a"),
        "{:?}",
        text(&out.stdout)
    );
}
