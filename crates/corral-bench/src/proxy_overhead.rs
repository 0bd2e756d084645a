//! The sandbox proxy's cost, against the same sandboxed `curl` reaching the same local
//! server directly (network on, the host's namespace), interleaved in one process:
//!
//! - a 1 GiB download: direct, through the proxy as plain HTTP, and through a `CONNECT`
//!   tunnel (what an `https://` fetch uses);
//! - connection setup: one `curl` fetching 200 tiny responses, each on a new connection
//!   (the server closes every one), direct and through the proxy.
//!
//! Each sample is one whole `exec` (the same sandbox and spawn either way), so a ratio is
//! what a command sees. Reports medians and ratios.

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener};
use std::process::Command;
use std::time::{Duration, Instant};

use corral::{Config, ExecRequest, Run, sandbox::SandboxConfig, sandbox::SandboxMode};

use crate::stats::summarize;

const GIB: u64 = 1 << 30;
const DOWNLOAD_ROUNDS: usize = 5;
const SETUP_ROUNDS: usize = 15;
const CONNECTIONS: usize = 200;

/// A server on the host's loopback: `/big` is 1 GiB of zeroes, anything else two bytes.
fn serve() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut request = String::new();
                let _ = reader.read_line(&mut request);
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                        break;
                    }
                }
                if request.contains(" /big ") {
                    let chunk = vec![0u8; 1 << 20];
                    let _ = write!(
                        stream,
                        "HTTP/1.1 200 OK\r\nContent-Length: {GIB}\r\nConnection: close\r\n\r\n"
                    );
                    for _ in 0..(GIB >> 20) {
                        if stream.write_all(&chunk).is_err() {
                            return;
                        }
                    }
                } else {
                    let _ = stream.write_all(
                        b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok",
                    );
                }
            });
        }
    });
    addr
}

fn open(dir: &std::path::Path, server: SocketAddr, by_domain: bool) -> Run {
    let mut sandbox = SandboxConfig::mode(SandboxMode::WorkspaceWrite);
    if by_domain {
        sandbox.network_allow = vec!["bench.test".into()];
        sandbox.test_resolve.insert("bench.test".into(), server);
    } else {
        sandbox.network = true;
    }
    Run::builder(dir)
        .store(dir.join(if by_domain { "proxy.db" } else { "direct.db" }))
        .config(Config {
            sandbox,
            ..Config::default()
        })
        .policy(
            corral::Policy::permissive()
                .unparsable_inner_line(corral_policy::Effect::Allow)
                .interpreter_one_liner(corral_policy::Effect::Allow),
        )
        .open()
        .unwrap()
}

fn timed(run: &Run, script: &str) -> Duration {
    let request = ExecRequest::new(["sh", "-c", script]).timeout(Duration::from_secs(600));
    let t = Instant::now();
    let outcome = run.exec(&request).unwrap();
    let took = t.elapsed();
    assert!(
        outcome.status.success(),
        "{script}: {}",
        outcome.observation
    );
    took
}

fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
}

pub fn run() {
    if Command::new("curl").arg("--version").output().is_err() {
        println!("curl is not installed: skipped");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let server = serve();
    let direct = open(dir.path(), server, false);
    let proxied = open(dir.path(), server, true);
    let big_direct = format!("curl -sf --noproxy '*' -o /dev/null http://{server}/big");
    let big_http = "curl -sf -o /dev/null http://bench.test/big".to_string();
    let big_connect = "curl -sf -p -o /dev/null http://bench.test/big".to_string();
    let many = |base: String, extra: &str| {
        format!("curl -sf {extra} '{base}/s[1-{CONNECTIONS}]' > /dev/null")
    };
    let many_direct = many(format!("http://{server}"), "--noproxy '*'");
    let many_http = many("http://bench.test".into(), "");
    let many_connect = many("http://bench.test".into(), "-p");
    // Warm up: page cache, the binaries, the proxy's first threads.
    timed(&direct, &many_direct);
    timed(&proxied, &many_http);

    let mut big = [Vec::new(), Vec::new(), Vec::new()];
    for _ in 0..DOWNLOAD_ROUNDS {
        big[0].push(timed(&direct, &big_direct));
        big[1].push(timed(&proxied, &big_http));
        big[2].push(timed(&proxied, &big_connect));
    }
    let [d, h, c] = big.map(|mut v| summarize(&mut v));
    let rate = |t: Duration| GIB as f64 / secs(t) / (1u64 << 20) as f64;
    println!("1 GiB download, {DOWNLOAD_ROUNDS} rounds each, interleaved (median)");
    println!(
        "  direct            {:7.3} s  {:7.0} MiB/s",
        secs(d.median),
        rate(d.median)
    );
    println!(
        "  proxy, HTTP       {:7.3} s  {:7.0} MiB/s  ratio {:.2}",
        secs(h.median),
        rate(h.median),
        secs(h.median) / secs(d.median)
    );
    println!(
        "  proxy, CONNECT    {:7.3} s  {:7.0} MiB/s  ratio {:.2}",
        secs(c.median),
        rate(c.median),
        secs(c.median) / secs(d.median)
    );

    let mut setup = [Vec::new(), Vec::new(), Vec::new()];
    for _ in 0..SETUP_ROUNDS {
        setup[0].push(timed(&direct, &many_direct));
        setup[1].push(timed(&proxied, &many_http));
        setup[2].push(timed(&proxied, &many_connect));
    }
    let [d, h, c] = setup.map(|mut v| summarize(&mut v));
    let per = |t: Duration| secs(t) * 1e6 / CONNECTIONS as f64;
    println!(
        "{CONNECTIONS} connections in one curl, {SETUP_ROUNDS} rounds each, interleaved (median)"
    );
    println!(
        "  direct            {:7.1} ms  {:6.0} µs/connection",
        secs(d.median) * 1e3,
        per(d.median)
    );
    println!(
        "  proxy, HTTP       {:7.1} ms  {:6.0} µs/connection  ratio {:.2}",
        secs(h.median) * 1e3,
        per(h.median),
        secs(h.median) / secs(d.median)
    );
    println!(
        "  proxy, CONNECT    {:7.1} ms  {:6.0} µs/connection  ratio {:.2}",
        secs(c.median) * 1e3,
        per(c.median),
        secs(c.median) / secs(d.median)
    );
}
