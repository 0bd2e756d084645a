//! A failure of corral's own while a line runs (here: out of file descriptors, midway
//! through a long pipeline) ends the line and is its status, the same in the foreground
//! and in a handle: the program could not be run (`unavailable`, 126), with corral's
//! reason, on the result and on the step's row.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use crate::common::{Scratch, text};
use crate::mcp_raw;

/// `echo hi | cat | … | cat`: 200 stages, more pipes than the descriptor limit allows.
fn long_pipeline() -> String {
    let mut line = String::from("echo hi");
    for _ in 0..200 {
        line.push_str(" | cat");
    }
    line
}

/// The limit on open files a test runs corral under: enough to open the run and the
/// first stages, not the whole pipeline.
const NOFILE: &str = "--nofile=128";

fn have_prlimit() -> bool {
    Command::new("prlimit").arg("--version").output().is_ok()
}

#[test]
fn in_the_foreground_it_is_126_with_the_reason_on_the_row() {
    if !have_prlimit() {
        eprintln!("skipped: no prlimit here");
        return;
    }
    let s = Scratch::new();
    let cmd = s.corral(&["shell", &long_pipeline()]);
    let program = cmd.get_program().to_owned();
    let args: Vec<_> = cmd.get_args().map(|a| a.to_owned()).collect();
    let mut limited = Command::new("prlimit");
    limited
        .arg(NOFILE)
        .arg("--")
        .arg(program)
        .args(args)
        .current_dir(s.workspace());
    for (k, v) in cmd.get_envs() {
        if let Some(v) = v {
            limited.env(k, v);
        }
    }
    let out = limited.output().unwrap();
    let said = text(&out.stderr);
    assert_eq!(out.status.code(), Some(126), "{said}");
    assert!(said.contains("could not run the line to its end"), "{said}");
    let steps: Value =
        serde_json::from_slice(&s.output(&["trace", "steps", "--json"]).stdout).unwrap();
    let step = steps.as_array().unwrap().last().unwrap().clone();
    assert_eq!(step["outcome"], "unavailable", "{step}");
    assert_eq!(step["exit_code"], 126, "{step}");
}

#[test]
fn in_a_handle_it_is_the_same_126() {
    if !have_prlimit() {
        eprintln!("skipped: no prlimit here");
        return;
    }
    let s = Scratch::new();
    let template = s.corral(&["mcp", "--workspace"]);
    let mut server = Command::new("prlimit");
    server
        .arg(NOFILE)
        .arg("--")
        .arg(template.get_program())
        .args(template.get_args())
        .arg(s.workspace())
        .current_dir(s.workspace())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    for (k, v) in template.get_envs() {
        if let Some(v) = v {
            server.env(k, v);
        }
    }
    let mut server = server.spawn().unwrap();
    let mut to = server.stdin.take().unwrap();
    let mut from = BufReader::new(server.stdout.take().unwrap());
    let mut answer = |message: String, id: i64| -> Value {
        writeln!(to, "{message}").unwrap();
        loop {
            let mut line = String::new();
            assert!(from.read_line(&mut line).unwrap() > 0, "the server ended");
            let value: Value = serde_json::from_str(&line).unwrap();
            if value["id"] == id {
                return value;
            }
        }
    };
    answer(mcp_raw::initialize(1), 1);
    let call = |id: i64, name: &str, arguments: Value| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": name, "arguments": arguments}})
        .to_string()
    };
    let started = answer(call(2, "shell_start", json!({"line": long_pipeline()})), 2);
    let said = started["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    let handle = said
        .split(|c: char| !c.is_ascii_digit())
        .find(|w| !w.is_empty())
        .and_then(|w| w.parse::<u64>().ok())
        .unwrap_or_else(|| panic!("no handle in {started}"));
    // Polled until it ends: each poll returns at news, and the refused stages print some.
    let mut shown = String::new();
    for id in 3..200 {
        let polled = answer(
            call(id, "shell_poll", json!({"handle": handle, "wait_ms": 2000})),
            id,
        );
        let state = polled["result"]["structuredContent"]["state"].clone();
        shown = polled["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        if state != "running" {
            break;
        }
    }
    let end = &shown[shown.len().saturating_sub(600)..];
    assert!(
        end.contains("unavailable: corral could not run the line to its end"),
        "{end}"
    );
    drop(to);
    server.wait().unwrap();
}
