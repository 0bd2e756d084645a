//! One network namespace per run: with the network off, a run's sandboxed calls share a
//! loopback of their own, so a server started in a handle answers a later call, while
//! another run's calls (and the host) cannot reach it.

use crate::common;

use std::time::{Duration, Instant};

use common::Fixture;
use corral::{
    Config, ExecRequest, Run, handle::KillRequest, handle::PollRequest, handle::StartRequest,
    sandbox::SandboxConfig, sandbox::SandboxMode,
};

/// A sandboxed run in which inline programs run without asking.
fn sandboxed(fx: &Fixture) -> Run {
    Run::builder(fx.workspace())
        .store(fx.store())
        .config(Config {
            sandbox: SandboxConfig::mode(SandboxMode::WorkspaceWrite),
            ..Config::default()
        })
        .policy(corral::Policy::permissive().interpreter_one_liner(corral::policy::Effect::Allow))
        .open()
        .unwrap()
}

fn py(run: &Run, code: &str) -> corral::Outcome {
    run.exec(&ExecRequest::new(["python3", "-c", code]).timeout(Duration::from_secs(30)))
        .unwrap()
}

/// The network namespace a call of `run` is in.
fn namespace(run: &Run) -> String {
    let o = run
        .exec(&ExecRequest::new(["readlink", "/proc/self/ns/net"]))
        .unwrap();
    assert!(o.status.success(), "{}", o.observation);
    o.stdout.window.head.trim().to_string()
}

fn run_namespace_available(run: &Run) -> bool {
    let o = run.exec(&ExecRequest::new(["true"])).unwrap();
    let report = o.sandbox.unwrap();
    let network = report
        .layers
        .iter()
        .find(|l| l.layer == corral::sandbox::Layer::Network)
        .unwrap();
    network.detail.contains("the run's network namespace")
}

/// A listener on a free port in `run`'s namespace; returns its handle once it accepts.
fn serve(run: &Run) -> (u32, u16) {
    let started = run
        .shell_start(&StartRequest::new(
            "python3 -u -c 'import socket; s = socket.socket(); s.bind((\"127.0.0.1\", 0)); \
             s.listen(); print(\"port\", s.getsockname()[1], flush=True); \
             [c.sendall(b\"hello\") or c.close() for c, _ in iter(s.accept, None)]'",
        ))
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut seen = String::new();
    loop {
        let poll = run
            .shell_poll(&PollRequest {
                handle: started.handle,
                wait_ms: Some(1000),
                ..Default::default()
            })
            .unwrap();
        seen.push_str(&poll.output);
        if let Some(port) = seen
            .split_whitespace()
            .skip_while(|w| *w != "port")
            .nth(1)
            .and_then(|p| p.parse().ok())
        {
            return (started.handle, port);
        }
        assert!(
            Instant::now() < deadline,
            "the server never listened: {seen}"
        );
    }
}

fn connect(port: u16) -> String {
    format!(
        "import socket; print(socket.create_connection(('127.0.0.1', {port}), 3).recv(5).decode())"
    )
}

#[test]
fn a_runs_calls_share_a_loopback_no_other_run_reaches() {
    let (fa, fb) = (Fixture::new(), Fixture::new());
    let (a, b) = (sandboxed(&fa), sandboxed(&fb));
    if !run_namespace_available(&a) {
        eprintln!("no run network namespace on this host (needs root); nothing to compare");
        return;
    }
    // Every call of a run is in the same namespace; another run's is another.
    assert_eq!(namespace(&a), namespace(&a));
    assert_ne!(namespace(&a), namespace(&b));

    let (handle, port) = serve(&a);
    let same_run = py(&a, &connect(port));
    assert!(same_run.status.success(), "{}", same_run.observation);
    assert!(same_run.stdout.window.head.contains("hello"));

    let other_run = py(&b, &connect(port));
    assert!(!other_run.status.success(), "{}", other_run.observation);
    // Nor does the host's loopback lead there.
    assert!(std::net::TcpStream::connect(("127.0.0.1", port)).is_err() || port_is_hosts(port));

    a.shell_kill(&KillRequest { handle }).unwrap();
}

/// Whether something on the host happens to listen on `port` too (then connecting there
/// proves nothing about the run's namespace).
fn port_is_hosts(port: u16) -> bool {
    std::net::TcpListener::bind(("127.0.0.1", port)).is_err()
}

#[test]
fn the_network_on_uses_the_hosts_namespace() {
    let fx = Fixture::new();
    let mut config = SandboxConfig::mode(SandboxMode::WorkspaceWrite);
    config.network = true;
    let run = fx.run_with(Config {
        sandbox: config,
        ..Config::default()
    });
    let host = std::fs::read_link("/proc/self/ns/net").unwrap();
    assert_eq!(namespace(&run), host.display().to_string());
}
