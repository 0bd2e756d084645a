//! `exec(["true"])` over MCP (the rmcp client against a `corral mcp` child, over stdio)
//! against the same call through the library in this process, interleaved, 200 of each.
//! The difference of the medians is what MCP adds: JSON-RPC both ways, two pipe hops, the
//! server's runtime and blocking-thread hand-off. Run with and without a PID namespace
//! per call, since making one costs more in a bigger process.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Instant;

use corral::{ApprovalMode, ExecRequest, Policy, PolicyFiles, Run};
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};

use crate::stats::{micros, summarize};

const ROUNDS: usize = 200;

/// The `corral` binary beside this one, built (in this profile) first, so that the server
/// measured is the code measured in process, never a stale build.
pub(crate) fn corral_binary() -> PathBuf {
    // A build made before, measured as it is: a tree others are editing would otherwise
    // be built again (minutes, with LTO) by every bench run.
    if let Some(binary) = std::env::var_os("CORRAL_BENCH_CORRAL") {
        return PathBuf::from(binary);
    }
    let me = std::env::current_exe().unwrap();
    let mut build = std::process::Command::new(env!("CARGO"));
    build.args(["build", "-q", "-p", "corral-cli", "--bin", "corral"]);
    if !cfg!(debug_assertions) {
        build.arg("--release");
    }
    assert!(build.status().unwrap().success(), "building corral failed");
    me.with_file_name("corral")
}

pub fn run() {
    for pid_namespace in [true, false] {
        measure(pid_namespace);
    }
}

fn measure(pid_namespace: bool) {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    // Nothing is asked: both sides run `true` under the same files.
    std::fs::write(
        ws.join("corral.toml"),
        "tier = \"permissive\"\napproval = \"on-request\"\n",
    )
    .unwrap();
    let policy = PolicyFiles::discover(&ws, &[])
        .unwrap()
        .load_onto(Policy::default())
        .unwrap();
    let mode = policy
        .approval_mode()
        .unwrap_or(ApprovalMode::UnlessTrusted);
    let library = Run::builder(&ws)
        .config(corral::Config {
            pid_namespace,
            ..corral::Config::default()
        })
        .store(dir.path().join("library.db"))
        .policy(policy)
        .approval(mode)
        .open()
        .unwrap();
    let request = ExecRequest::new(["true"]);

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let corral = corral_binary();
    let client = runtime.block_on(async {
        let command = tokio::process::Command::new(&corral).configure(|cmd| {
            cmd.arg("mcp")
                .arg("--workspace")
                .arg(&ws)
                .args(["--pid-namespace", if pid_namespace { "on" } else { "off" }])
                .env("CORRAL_STORE", dir.path().join("server.db"));
        });
        let (transport, _) = TokioChildProcess::builder(command)
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        ().serve(transport).await.unwrap()
    });
    let arguments = serde_json::json!({"argv": ["true"]})
        .as_object()
        .unwrap()
        .clone();
    let call_mcp = || {
        runtime.block_on(async {
            client
                .call_tool(CallToolRequestParams::new("exec").with_arguments(arguments.clone()))
                .await
                .unwrap()
        })
    };

    for _ in 0..20 {
        library.exec(&request).unwrap();
        call_mcp();
    }
    let mut samples = [Vec::with_capacity(ROUNDS), Vec::with_capacity(ROUNDS)];
    for _ in 0..ROUNDS {
        let t = Instant::now();
        let outcome = library.exec(&request).unwrap();
        samples[0].push(t.elapsed());
        assert!(outcome.status.success(), "{}", outcome.observation);
        let t = Instant::now();
        let result = call_mcp();
        samples[1].push(t.elapsed());
        assert_eq!(result.is_error, Some(false));
    }
    let [lib, mcp] = samples.map(|mut v| summarize(&mut v));
    let containment = library.exec(&request).unwrap().containment;
    println!("rounds: {ROUNDS} each, interleaved, sequential; containment {containment}");
    for (name, x) in [
        ("corral Run::exec (in process)", lib),
        ("corral mcp exec (rmcp client, stdio)", mcp),
    ] {
        println!(
            "{name:<40} median {:8.1} µs   p95 {:8.1} µs",
            micros(x.median),
            micros(x.p95)
        );
    }
    println!(
        "MCP adds {:.3} ms at the median (goal: <= 0.5 ms)",
        (micros(mcp.median) - micros(lib.median)) / 1000.0
    );
    runtime.block_on(async { client.cancel().await.unwrap() });
    library.close().unwrap();
}
