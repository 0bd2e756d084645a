//! `corral mcp --listen 127.0.0.1:0` under load: 50 sessions at once, each making 20
//! `exec(["true"])` calls over Streamable HTTP, against the same 20 calls from one
//! session alone (the baseline, measured first in the same run against the same server).
//! Each call is one HTTP/1.1 request on a fresh loopback connection, its answer read to
//! the connection's end. Reports the median and p99 per call, the errors, and whether the
//! trace holds one run per session and one step per call.
//!
//! Before the load, one session of the official TypeScript SDK (`@modelcontextprotocol/sdk`,
//! installed from the npm registry into the bench's scratch directory; skipped with a
//! message where npm is missing): its calls over HTTP alternating with the same client's
//! calls over stdio to the same binary, and a `ping` on each (what the client's transport
//! itself costs a request).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::mcp_roundtrip::corral_binary;
use crate::stats::micros;

const SESSIONS: usize = 50;
const CALLS: usize = 20;
/// Timed rounds of the TypeScript SDK (after 10 to warm up).
const TS_ROUNDS: usize = 200;

/// The bearer token the server is started with, and every client sends.
const TOKEN: &str = "mcp-http-load-bench-token-0123456789abcdef";

pub fn run() {
    let corral = corral_binary();
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    std::fs::write(
        ws.join("corral.toml"),
        "tier = \"permissive\"\napproval = \"on-request\"\n",
    )
    .unwrap();
    let store = dir.path().join("trace.db");
    let mut server = Command::new(&corral)
        .args([
            "mcp",
            "--listen",
            "127.0.0.1:0",
            "--max-sessions",
            "100",
            "--workspace",
        ])
        .arg(&ws)
        .env("CORRAL_STORE", &store)
        .env_remove("CORRAL_POLICY")
        .env("CORRAL_MCP_TOKEN", TOKEN)
        .env("XDG_CONFIG_HOME", dir.path().join("config"))
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut log = BufReader::new(server.stderr.take().unwrap());
    let addr: SocketAddr = loop {
        let mut line = String::new();
        assert!(log.read_line(&mut line).unwrap() > 0, "corral mcp exited");
        if let Some(url) = line.trim().strip_prefix("corral mcp: listening on http://") {
            break url.strip_suffix("/mcp").unwrap().parse().unwrap();
        }
    };
    std::thread::spawn(move || std::io::copy(&mut log, &mut std::io::sink()));

    let typescript = typescript_session(dir.path(), addr, &corral, &ws);
    let (mut alone, alone_errors) = session(addr);
    let started = Instant::now();
    let workers: Vec<_> = (0..SESSIONS)
        .map(|_| std::thread::spawn(move || session(addr)))
        .collect();
    let mut loaded = Vec::new();
    let mut errors = 0;
    for worker in workers {
        let (samples, failed) = worker.join().unwrap();
        loaded.extend(samples);
        errors += failed;
    }
    let wall = started.elapsed();
    Command::new("kill")
        .args(["-TERM", &server.id().to_string()])
        .status()
        .unwrap();
    server.wait().unwrap();

    let (a50, a99) = percentiles(&mut alone);
    let (l50, l99) = percentiles(&mut loaded);
    println!(
        "1 session x {CALLS} calls:  median {:.0} us, p99 {:.0} us, errors {alone_errors}",
        micros(a50),
        micros(a99)
    );
    println!(
        "{SESSIONS} sessions x {CALLS} calls: median {:.0} us, p99 {:.0} us, errors {errors}, {} calls in {:.2} s ({:.0} calls/s)",
        micros(l50),
        micros(l99),
        loaded.len(),
        wall.as_secs_f64(),
        loaded.len() as f64 / wall.as_secs_f64()
    );
    println!(
        "ratio loaded/alone: median {:.2}, p99 {:.2}",
        l50.as_secs_f64() / a50.as_secs_f64(),
        l99.as_secs_f64() / a99.as_secs_f64()
    );
    match &typescript {
        Ok(ts) => {
            println!(
                "official TypeScript SDK, 1 session each, {TS_ROUNDS} rounds alternating, before the load:"
            );
            println!(
                "  exec [\"true\"]: HTTP median {} us (p99 {}), stdio median {} us (p99 {}); HTTP/stdio {:.2}",
                ts.http_call.0,
                ts.http_call.1,
                ts.stdio_call.0,
                ts.stdio_call.1,
                ts.http_call.0 as f64 / ts.stdio_call.0 as f64
            );
            println!(
                "  ping:          HTTP median {} us (p99 {}), stdio median {} us (p99 {})",
                ts.http_ping.0, ts.http_ping.1, ts.stdio_ping.0, ts.stdio_ping.1
            );
        }
        Err(why) => println!("TypeScript SDK rows skipped: {why}"),
    }
    let trace = |what: &str| -> serde_json::Value {
        let out = Command::new(&corral)
            .args(["trace", what, "--limit", "100000", "--json"])
            .env("CORRAL_STORE", &store)
            .output()
            .unwrap();
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let typescript_ran = typescript.is_ok();
    let runs = trace("runs");
    let steps = trace("steps");
    println!(
        "trace: {} runs (want {}), {} steps (want {})",
        runs.as_array().map_or(0, Vec::len),
        SESSIONS + 1 + usize::from(typescript_ran),
        steps.as_array().map_or(0, Vec::len),
        (SESSIONS + 1) * CALLS + if typescript_ran { TS_ROUNDS + 10 } else { 0 }
    );
}

/// Medians and p99s (µs) of what the TypeScript SDK's script times.
struct TypeScript {
    http_call: (u64, u64),
    stdio_call: (u64, u64),
    http_ping: (u64, u64),
    stdio_ping: (u64, u64),
}

/// The official TypeScript SDK against the server at `addr`, and over stdio against
/// `corral mcp --workspace ws` (a store of its own), in the same rounds; or why it could
/// not run.
fn typescript_session(
    scratch: &std::path::Path,
    addr: SocketAddr,
    corral: &std::path::Path,
    ws: &std::path::Path,
) -> Result<TypeScript, String> {
    let dir = scratch.join("ts");
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    std::fs::write(
        dir.join("package.json"),
        r#"{"type":"module","private":true}"#,
    )
    .map_err(|e| e.to_string())?;
    std::fs::write(
        dir.join("one_session.mjs"),
        include_str!("../ts/one_session.mjs"),
    )
    .map_err(|e| e.to_string())?;
    let installed = Command::new("npm")
        .args([
            "install",
            "--no-audit",
            "--no-fund",
            "--silent",
            "@modelcontextprotocol/sdk@1",
        ])
        .current_dir(&dir)
        .stdout(Stdio::null())
        .status()
        .map_err(|e| format!("npm is not installed ({e})"))?;
    if !installed.success() {
        return Err(format!(
            "npm install @modelcontextprotocol/sdk failed ({installed})"
        ));
    }
    let out = Command::new("node")
        .arg("one_session.mjs")
        .arg(format!("http://{addr}/mcp"))
        .arg(TS_ROUNDS.to_string())
        .arg(corral)
        .arg(ws)
        .env("CORRAL_STORE", scratch.join("trace-stdio.db"))
        .env("CORRAL_BENCH_TOKEN", TOKEN)
        .env_remove("CORRAL_POLICY")
        .env("XDG_CONFIG_HOME", scratch.join("config"))
        .current_dir(&dir)
        .output()
        .map_err(|e| format!("node is not installed ({e})"))?;
    let text = String::from_utf8_lossy(&out.stdout);
    let figures: Vec<u64> = text
        .split_whitespace()
        .filter_map(|f| f.parse().ok())
        .collect();
    match (out.status.success(), figures.as_slice()) {
        (true, [a, b, c, d, e, f, g, h]) => Ok(TypeScript {
            http_call: (*a, *b),
            stdio_call: (*c, *d),
            http_ping: (*e, *f),
            stdio_ping: (*g, *h),
        }),
        _ => Err(format!(
            "the TypeScript client failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )),
    }
}

fn percentiles(samples: &mut [Duration]) -> (Duration, Duration) {
    samples.sort_unstable();
    let at = |q: f64| samples[((samples.len() - 1) as f64 * q).round() as usize];
    (at(0.5), at(0.99))
}

/// One session: initialize, `CALLS` timed calls, DELETE. The call times and the errors.
fn session(addr: SocketAddr) -> (Vec<Duration>, usize) {
    let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"load","version":"1"}}}"#;
    let (head, _) = post(addr, None, init);
    let Some(id) = head.lines().find_map(|l| {
        l.to_ascii_lowercase()
            .strip_prefix("mcp-session-id: ")
            .map(str::to_string)
    }) else {
        return (Vec::new(), CALLS);
    };
    let id = id.trim().to_string();
    post(
        addr,
        Some(&id),
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    );
    let mut samples = Vec::with_capacity(CALLS);
    let mut errors = 0;
    for n in 1..=CALLS {
        let call = format!(
            r#"{{"jsonrpc":"2.0","id":{n},"method":"tools/call","params":{{"name":"exec","arguments":{{"argv":["true"]}}}}}}"#
        );
        let started = Instant::now();
        let (_, body) = post(addr, Some(&id), &call);
        samples.push(started.elapsed());
        if !body.contains(r#""exit_code":0"#) {
            errors += 1;
        }
    }
    request(addr, "DELETE", Some(&id), "");
    (samples, errors)
}

fn post(addr: SocketAddr, session: Option<&str>, body: &str) -> (String, String) {
    request(addr, "POST", session, body)
}

fn request(addr: SocketAddr, method: &str, session: Option<&str>, body: &str) -> (String, String) {
    let Ok(mut stream) = TcpStream::connect(addr) else {
        return (String::new(), String::new());
    };
    let session = session.map_or(String::new(), |id| format!("Mcp-Session-Id: {id}\r\n"));
    let head = format!(
        "{method} /mcp HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nAuthorization: Bearer {TOKEN}\r\n\
         Content-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\n{session}Content-Length: {}\r\n\r\n{body}",
        body.len()
    );
    if stream.write_all(head.as_bytes()).is_err() {
        return (String::new(), String::new());
    }
    let mut response = String::new();
    let _ = stream.read_to_string(&mut response);
    match response.split_once("\r\n\r\n") {
        Some((head, body)) => (head.to_string(), body.to_string()),
        None => (response, String::new()),
    }
}
