//! `corral mcp` against a peer MCP shell server, `@openai/codex-shell-tool-mcp`, over
//! stdio, with the same small JSON-RPC client on both sides, alternating call by call.
//!
//! The peer is installed from the npm registry into `target/tmp/mcp-peer` on first use
//! (`npm install @openai/codex-shell-tool-mcp@0.97.0`); where npm or the network is
//! missing, the bench says it skipped. The peer runs `true` through its patched Bash with
//! `login: false` and its sandbox policy set to `danger-full-access` (no sandbox: its
//! sandboxed mode needs a `codex-linux-sandbox` helper the package does not ship). corral
//! runs `exec ["true"]` in its cgroup and PID namespace, unsandboxed (`--sandbox full`)
//! and sandboxed (`workspace-write`, network off).
//!
//! `CORRAL_BENCH_BEFORE=PATH` adds another build's two servers to the same rounds (and to
//! the Python client's): a before and after measured in the same moments.
//!
//! Then the same servers through the official MCP Python client (`mcp` from PyPI,
//! in a venv the bench makes; skipped with the reason where python3 or pip is missing):
//! `echo hi` through the peer's shell, `exec ["echo","hi"]` through corral, in
//! [`PYTHON_PASSES`] passes of [`PYTHON_ROUNDS`] rounds, one call to each server a round.
//!
//! `CORRAL_BENCH_ROUNDS=N` cuts both clients' rounds to N, and the Python client's passes
//! to one: `.ci/bench-pass` prints the ratios in well under a minute that way.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::python_client::{self, Served};
use crate::stats::{micros, rounds, summarize};

const ROUNDS: usize = 200;
const PYTHON_PASSES: usize = 3;
const PYTHON_ROUNDS: usize = 100;
const PEER: &str = "@openai/codex-shell-tool-mcp@0.97.0";

/// A server on the other end of a pipe, spoken to one request at a time.
pub(crate) struct Server {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next: u64,
}

impl Server {
    pub(crate) fn start(mut cmd: Command) -> Self {
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut server = Self {
            child,
            stdin,
            stdout,
            next: 1,
        };
        server.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "corral-bench", "version": "1"}}),
        );
        server.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        server
    }

    fn send(&mut self, message: &Value) {
        let mut line = serde_json::to_vec(message).unwrap();
        line.push(b'\n');
        self.stdin.write_all(&line).unwrap();
        self.stdin.flush().unwrap();
    }

    /// Send a request; read until its answer (skipping notifications and requests).
    pub(crate) fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next;
        self.next += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let mut line = String::new();
        loop {
            line.clear();
            assert!(
                self.stdout.read_line(&mut line).unwrap() > 0,
                "server went away"
            );
            let message: Value = serde_json::from_str(&line).unwrap();
            if message["id"] == id && message.get("method").is_none() {
                assert!(message.get("error").is_none(), "{method}: {message}");
                return message["result"].clone();
            }
        }
    }

    pub(crate) fn call(&mut self, tool: &str, arguments: &Value) -> Duration {
        let t = Instant::now();
        let result = self.request("tools/call", json!({"name": tool, "arguments": arguments}));
        let took = t.elapsed();
        assert_ne!(result["isError"], true, "{result}");
        took
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The peer's launcher, installed with npm under `target/tmp` if it is not there yet.
fn peer_launcher() -> Option<PathBuf> {
    let target = std::env::current_exe()
        .ok()?
        .parent()?
        .parent()?
        .to_path_buf();
    let dir = target.join("tmp").join("mcp-peer");
    let launcher = dir.join("node_modules/@openai/codex-shell-tool-mcp/bin/mcp-server.js");
    if !launcher.exists() {
        std::fs::create_dir_all(&dir).ok()?;
        let installed = Command::new("npm")
            .args(["install", "--no-audit", "--no-fund", "--prefix"])
            .arg(&dir)
            .arg(PEER)
            .stdout(Stdio::null())
            .status()
            .ok()?;
        if !installed.success() {
            return None;
        }
    }
    (launcher.exists() && Command::new("node").arg("--version").output().is_ok())
        .then_some(launcher)
}

fn corral(binary: &Path, ws: &Path, store: &Path, sandbox: &str) -> Server {
    let mut cmd = Command::new(binary);
    cmd.arg("mcp")
        .arg("--workspace")
        .arg(ws)
        .args(["--sandbox", sandbox, "--network", "off"])
        .env("CORRAL_STORE", store);
    Server::start(cmd)
}

/// The corral builds measured: this one, and the one `CORRAL_BENCH_BEFORE` names.
fn builds() -> Vec<(&'static str, PathBuf)> {
    let mut builds = vec![("", crate::mcp_roundtrip::corral_binary())];
    if let Some(before) = std::env::var_os("CORRAL_BENCH_BEFORE") {
        builds.push(("before: ", PathBuf::from(before)));
    }
    builds
}

/// The sandbox modes measured, each with its row's words.
const MODES: [(&str, &str); 2] = [
    ("full", "--sandbox full"),
    ("workspace-write", "workspace-write, no network"),
];

pub fn run() {
    let rounds = rounds(ROUNDS);
    let Some(launcher) = peer_launcher() else {
        println!("skipped: could not install {PEER} with npm (no npm, node or network)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    std::fs::write(
        ws.join("corral.toml"),
        "tier = \"permissive\"\napproval = \"on-request\"\n",
    )
    .unwrap();
    let mut peer = {
        let mut cmd = Command::new("node");
        cmd.arg(&launcher).current_dir(&ws);
        Server::start(cmd)
    };
    peer.request(
        "codex/sandbox-state/update",
        json!({"sandboxPolicy": {"type": "danger-full-access"}, "sandboxCwd": ws}),
    );
    let builds = builds();
    let mut sides: Vec<(String, Server)> = Vec::new();
    for (n, (label, binary)) in builds.iter().enumerate() {
        for (mode, words) in MODES {
            let store = dir.path().join(format!("{n}-{mode}.db"));
            sides.push((
                format!("{label}corral mcp exec true, {words}"),
                corral(binary, &ws, &store, mode),
            ));
        }
    }
    let peer_args = json!({"command": "true", "workdir": ws, "login": false});
    let exec_args = json!({"argv": ["true"]});
    for _ in 0..20 {
        peer.call("shell", &peer_args);
        for (_, server) in &mut sides {
            server.call("exec", &exec_args);
        }
    }
    let mut peer_samples = Vec::new();
    let mut samples = vec![Vec::new(); sides.len()];
    for _ in 0..rounds {
        peer_samples.push(peer.call("shell", &peer_args));
        for ((_, server), samples) in sides.iter_mut().zip(&mut samples) {
            samples.push(server.call("exec", &exec_args));
        }
    }
    let p = summarize(&mut peer_samples);
    println!("rounds: {rounds} each, alternating, sequential");
    let rows = std::iter::once((
        "codex-shell-tool-mcp shell `true` (no sandbox)".to_string(),
        p,
    ))
    .chain(
        sides
            .iter()
            .zip(&mut samples)
            .map(|((name, _), samples)| (name.clone(), summarize(samples))),
    );
    for (name, x) in rows {
        println!(
            "{name:<58} median {:8.1} µs ({:.2}x)   p95 {:8.1} µs",
            micros(x.median),
            micros(x.median) / micros(p.median),
            micros(x.p95)
        );
    }
    println!("goals: corral unsandboxed <= 1.0x the peer, sandboxed <= 1.5x");
    drop((peer, sides));
    python_rows(&launcher, dir.path(), &ws, &builds);
}

/// The peer and corral, bare and boxed (each build), through the official Python client.
fn python_rows(launcher: &Path, scratch: &Path, ws: &Path, builds: &[(&'static str, PathBuf)]) {
    let python = match python_client::python() {
        Ok(python) => python,
        Err(why) => {
            println!("official Python client rows skipped: {why}");
            return;
        }
    };
    let mut servers = vec![Served {
        name: "codex-shell-tool-mcp shell `echo hi` (no sandbox)".into(),
        command: "node".into(),
        args: vec![launcher.display().to_string()],
        cwd: ws.to_path_buf(),
        env: Vec::new(),
        tool: "shell",
        arguments: json!({"command": "echo hi", "workdir": ws, "login": false}),
        setup: vec![(
            "codex/sandbox-state/update",
            json!({"sandboxPolicy": {"type": "danger-full-access"}, "sandboxCwd": ws}),
        )],
    }];
    for (n, (label, binary)) in builds.iter().enumerate() {
        for (mode, words) in MODES {
            servers.push(Served {
                name: format!("{label}corral mcp exec echo hi, {words}"),
                command: binary.clone(),
                args: ["mcp", "--workspace", &ws.display().to_string()]
                    .into_iter()
                    .chain(["--sandbox", mode, "--network", "off"])
                    .map(str::to_string)
                    .collect(),
                cwd: ws.to_path_buf(),
                env: vec![("CORRAL_STORE", scratch.join(format!("py-{n}-{mode}.db")))],
                tool: "exec",
                arguments: json!({"argv": ["echo", "hi"]}),
                setup: Vec::new(),
            });
        }
    }
    let python_rounds = rounds(PYTHON_ROUNDS);
    let passes = if python_rounds < PYTHON_ROUNDS {
        1
    } else {
        PYTHON_PASSES
    };
    println!(
        "official Python client (mcp from PyPI): `echo hi`, {passes} pass{} of {python_rounds} rounds, alternating",
        if passes == 1 { "" } else { "es" }
    );
    for pass in 1..=passes {
        let mut times =
            match python_client::alternate(&python, scratch, &servers, 10, python_rounds) {
                Ok(times) => times,
                Err(why) => {
                    println!("official Python client rows skipped: {why}");
                    return;
                }
            };
        let mut take = |name: &str| {
            summarize(
                times
                    .get_mut(name)
                    .expect("the client times every server it was given"),
            )
        };
        let p = take(&servers[0].name);
        for served in &servers {
            let x = take(&served.name);
            println!(
                "pass {pass}: {:<58} median {:8.1} µs ({:.2}x)   p95 {:8.1} µs",
                served.name,
                micros(x.median),
                micros(x.median) / micros(p.median),
                micros(x.p95)
            );
        }
    }
    println!(
        "goals through the Python client: workspace-write <= 1.0x the peer, --sandbox full <= 0.7x"
    );
}
