//! `corral mcp` killed with SIGKILL while a call and a background handle run: nothing it
//! started is left, and the next corral to open the store closes its run, step and handle
//! as `aborted`, and says so once.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::mcp_common;
use mcp_common::*;
use serde_json::{Value, json};

#[test]
fn sigkill_of_the_server_leaves_nothing_running_after_the_next_open() {
    if !crate::common::leftovers_of_a_killed_corral_are_reachable(&crate::common::Scratch::new()) {
        return;
    }
    let dir = scratch(Some(PERMISSIVE));
    let handle_marker = marker(77);
    let call_marker = marker(78);
    let mut child = Command::new(corral_bin())
        .args(["mcp", "--workspace"])
        .arg(dir.path().join("ws"))
        .env("CORRAL_STORE", store(dir.path()))
        .env("XDG_CACHE_HOME", dir.path().join("cache"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut send = |msg: Value| {
        stdin.write_all(msg.to_string().as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    };
    let mut answer = |id: i64| -> Value {
        loop {
            let mut line = String::new();
            assert!(stdout.read_line(&mut line).unwrap() > 0, "server stopped");
            let msg: Value = serde_json::from_str(&line).unwrap();
            if msg["id"] == id {
                return msg;
            }
        }
    };
    send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"}}}),
    );
    answer(1);
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    send(
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "shell_start", "arguments": {"line": format!("sleep {handle_marker}")}}}),
    );
    assert_eq!(answer(2)["result"]["isError"], false);
    // A foreground call still running when the server dies.
    send(
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
        "name": "exec", "arguments": {"argv": ["sleep", call_marker]}}}),
    );
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while processes_with(&call_marker).is_empty() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();

    let next = Command::new(corral_bin())
        .args(["exec", "--", "true"])
        .current_dir(dir.path().join("ws"))
        .env("CORRAL_STORE", store(dir.path()))
        .env("XDG_CACHE_HOME", dir.path().join("cache"))
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&next.stderr).into_owned();
    assert!(next.status.success(), "{said}");
    assert!(said.contains("1 call and 1 handle left running"), "{said}");
    for m in [&handle_marker, &call_marker] {
        assert!(
            survivors_after(m, Duration::from_secs(5)).is_empty(),
            "{m} outlived the server"
        );
    }
    let trace = |args: &[&str]| -> Value {
        let out = Command::new(corral_bin())
            .args(args)
            .env("CORRAL_STORE", store(dir.path()))
            .env("XDG_CACHE_HOME", dir.path().join("cache"))
            .output()
            .unwrap();
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let runs = trace(&["trace", "runs", "--json"]);
    let served = &runs.as_array().unwrap()[1];
    assert_eq!(served["ended_how"], "aborted", "{served}");
    let id = served["id"].as_str().unwrap();
    for step in trace(&["trace", "steps", "--run", id, "--json"])
        .as_array()
        .unwrap()
    {
        assert!(!step["outcome"].is_null(), "{step}");
    }
    let handles = trace(&["trace", "handles", "--run", id, "--json"]);
    assert_eq!(handles[0]["how"], "aborted", "{handles}");

    // Said once.
    let again = Command::new(corral_bin())
        .args(["exec", "--", "true"])
        .current_dir(dir.path().join("ws"))
        .env("CORRAL_STORE", store(dir.path()))
        .env("XDG_CACHE_HOME", dir.path().join("cache"))
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&again.stderr).contains("aborted"));
}
