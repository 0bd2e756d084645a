//! The network by domain, judged from outside the box: servers on the host's 127.0.0.1
//! under names this test maps for the proxy (`SandboxConfig::test_resolve`); an allowed
//! name reached over plain HTTP, `CONNECT` and SOCKS5; a refused one answered with the
//! domain to ask for; an IP literal refused; no resolver reachable; a process that
//! ignores the proxy variables reaching nothing.

use crate::common;

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use common::Fixture;
use corral::{
    ApprovalMode, Config, ExecRequest, Outcome, Run, sandbox::SandboxConfig, sandbox::SandboxMode,
};

/// An HTTP server on the host's loopback that answers every request with its request
/// line and Host header, and counts the connections it accepted.
struct Server {
    addr: SocketAddr,
    hits: Arc<AtomicUsize>,
}

fn serve() -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let hits = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&hits);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            counted.fetch_add(1, Ordering::SeqCst);
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut request = String::new();
            let _ = reader.read_line(&mut request);
            let mut host = String::new();
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                if let Some(h) = line.to_ascii_lowercase().strip_prefix("host:") {
                    host = h.trim().to_string();
                }
            }
            let body = format!("served {} host={host}\n", request.trim());
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    Server { addr, hits }
}

fn namespaces() -> bool {
    corral_sys::sandbox::host_support().namespaces
}

/// A run whose approval mode asks nobody: refusals stay refusals.
fn open(fx: &Fixture, server: &Server, allow: &[&str]) -> Run {
    open_with(
        fx,
        server,
        allow,
        ApprovalMode::Never,
        corral::approve::ApproveAll,
    )
}

fn open_with(
    fx: &Fixture,
    server: &Server,
    allow: &[&str],
    mode: ApprovalMode,
    approver: impl corral::approve::Approver + 'static,
) -> Run {
    let mut sandbox = SandboxConfig::mode(SandboxMode::WorkspaceWrite);
    sandbox.network_allow = allow.iter().map(|s| s.to_string()).collect();
    for name in ["allowed.test", "api.allowed.test", "denied.test"] {
        sandbox.test_resolve.insert(name.into(), server.addr);
    }
    Run::builder(fx.workspace())
        .store(fx.store())
        .config(Config {
            sandbox,
            ..Config::default()
        })
        .policy(
            corral::Policy::permissive()
                .interpreter_one_liner(corral::policy::Effect::Allow)
                .unparsable_inner_line(corral::policy::Effect::Allow),
        )
        .approval(mode)
        .approver(approver)
        .open()
        .unwrap()
}

fn sh(run: &Run, script: &str) -> Outcome {
    run.exec(&ExecRequest::new(["sh", "-c", script]).timeout(Duration::from_secs(60)))
        .unwrap()
}

fn stdout(o: &Outcome) -> String {
    format!("{}{}", o.stdout.window.head, o.stdout.window.tail)
}

#[test]
fn an_allowed_name_is_reached_over_http_connect_and_socks() {
    if !namespaces() {
        return;
    }
    let fx = Fixture::new();
    let server = serve();
    let run = open(&fx, &server, &["allowed.test", "*.allowed.test"]);
    let o = sh(&run, "curl -sS --max-time 20 http://allowed.test/plain");
    assert!(o.status.success(), "{}", o.observation);
    assert!(
        o.observation
            .contains("sandbox: workspace-write, network by domain"),
        "{}",
        o.observation
    );
    assert_eq!(stdout(&o), "served GET /plain HTTP/1.1 host=allowed.test\n");
    // CONNECT: curl tunnels through the proxy (as for https), then speaks HTTP inside.
    let o = sh(
        &run,
        "curl -sS --max-time 20 --proxytunnel http://api.allowed.test:8080/tunnel",
    );
    assert!(o.status.success(), "{}", o.observation);
    assert_eq!(
        stdout(&o),
        "served GET /tunnel HTTP/1.1 host=api.allowed.test:8080\n"
    );
    let o = sh(
        &run,
        "curl -sS --max-time 20 --proxy \"$ALL_PROXY\" http://allowed.test/socks",
    );
    assert!(o.status.success(), "{}", o.observation);
    assert!(
        stdout(&o).starts_with("served GET /socks"),
        "{}",
        o.observation
    );
    // The run's status line said it once, on the first result; this one is the third.
    assert!(
        o.sandbox.as_ref().is_some_and(|r| r.proxy.is_some()),
        "{}",
        o.observation
    );
    assert_eq!(server.hits.load(Ordering::SeqCst), 3);

    let store = corral_trace::Store::open(&fx.store()).unwrap();
    let events = store.network_events(run.id()).unwrap();
    assert_eq!(events.len(), 3, "{events:?}");
    for (e, how) in events.iter().zip(["http", "connect", "socks5"]) {
        assert!(e.allowed && e.bytes > 0 && e.detail == how, "{e:?}");
    }
    assert_eq!(events[1].host, "api.allowed.test");
    assert_eq!(events[1].port, 8080);
}

#[test]
fn a_refused_name_is_answered_with_the_domain_to_ask_for() {
    if !namespaces() {
        return;
    }
    let fx = Fixture::new();
    let server = serve();
    let run = open(&fx, &server, &["allowed.test"]);
    let o = sh(&run, "curl -s --max-time 20 http://denied.test/x");
    assert!(
        stdout(&o).contains("`denied.test` is not one. Ask the person to allow `denied.test`"),
        "{}",
        o.observation
    );
    for script in [
        "curl -sSf --max-time 20 http://denied.test/x",
        "curl -sSf --max-time 20 --proxytunnel http://denied.test/x",
        "curl -sSf --max-time 20 --proxy \"$ALL_PROXY\" http://denied.test/x",
    ] {
        let o = sh(&run, script);
        assert!(!o.status.success(), "{script}: {}", o.observation);
        let report = o.sandbox.as_ref().unwrap();
        assert_eq!(report.refused_hosts, ["denied.test"], "{}", o.observation);
        assert!(
            o.observation
                .contains("the network proxy refused `denied.test`"),
            "{}",
            o.observation
        );
    }
    assert_eq!(
        server.hits.load(Ordering::SeqCst),
        0,
        "the server was reached"
    );
    // The status line of a refused CONNECT names the domain too: what pip and git show.
    let raw = r#"
import os, socket
port = int(os.environ['HTTPS_PROXY'].rsplit(':', 1)[1])
s = socket.create_connection(('127.0.0.1', port))
s.sendall(b'CONNECT denied.test:443 HTTP/1.1\r\nHost: denied.test:443\r\n\r\n')
print(s.makefile('rb').readline().decode().strip())
s = socket.create_connection(('127.0.0.1', port))
s.sendall(b'GET /not-absolute HTTP/1.1\r\n\r\n')
print(s.makefile('rb').readline().decode().strip())
"#;
    let o = run
        .exec(&ExecRequest::new(["python3", "-c", raw]).timeout(Duration::from_secs(60)))
        .unwrap();
    assert_eq!(
        stdout(&o),
        "HTTP/1.1 403 Forbidden by corral's sandbox: ask to allow denied.test\n\
         HTTP/1.1 400 Bad Request\n",
        "{}",
        o.observation
    );
    assert_eq!(server.hits.load(Ordering::SeqCst), 0);
    let store = corral_trace::Store::open(&fx.store()).unwrap();
    let events = store.network_events(run.id()).unwrap();
    assert_eq!(events.len(), 5, "{events:?}");
    assert!(
        events
            .iter()
            .all(|e| !e.allowed && e.host == "denied.test" && e.bytes == 0)
    );
}

#[test]
fn an_ip_literal_is_refused_unless_listed() {
    if !namespaces() {
        return;
    }
    let fx = Fixture::new();
    let server = serve();
    let run = open(&fx, &server, &["allowed.test", "*.allowed.test"]);
    let url = format!("http://{}/x", server.addr);
    let o = sh(
        &run,
        &format!("curl -sSf --max-time 20 --noproxy '' --proxy \"$HTTP_PROXY\" {url}"),
    );
    assert!(!o.status.success(), "{}", o.observation);
    assert_eq!(o.sandbox.as_ref().unwrap().refused_hosts, ["127.0.0.1"]);
    assert_eq!(server.hits.load(Ordering::SeqCst), 0);
    let fx = Fixture::new();
    let run = open(&fx, &server, &["127.0.0.1"]);
    let o = sh(
        &run,
        &format!("curl -sSf --max-time 20 --noproxy '' --proxy \"$HTTP_PROXY\" {url}"),
    );
    assert!(o.status.success(), "{}", o.observation);
    assert_eq!(server.hits.load(Ordering::SeqCst), 1);
}

#[test]
fn no_resolver_is_reachable_and_ignoring_the_proxy_gets_nothing() {
    if !namespaces() {
        return;
    }
    let fx = Fixture::new();
    let server = serve();
    let run = open(&fx, &server, &["allowed.test"]);
    // Every nameserver the host uses, and a public one: a query goes nowhere.
    let dns = r#"
import socket, sys
servers = [l.split()[1] for l in open('/etc/resolv.conf') if l.startswith('nameserver')]
query = b'\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x07example\x03com\x00\x00\x01\x00\x01'
answered = []
for ns in servers + ['8.8.8.8', '1.1.1.1']:
    try:
        s = socket.socket(socket.AF_INET6 if ':' in ns else socket.AF_INET, socket.SOCK_DGRAM)
        s.settimeout(2)
        s.sendto(query, (ns, 53))
        s.recv(512)
        answered.append(ns)
    except OSError as e:
        print(ns, type(e).__name__)
try:
    socket.getaddrinfo('example.com', 80)
    answered.append('getaddrinfo')
except OSError as e:
    print('getaddrinfo', type(e).__name__)
print('ANSWERED', answered)
"#;
    let o = run
        .exec(&ExecRequest::new(["python3", "-c", dns]).timeout(Duration::from_secs(60)))
        .unwrap();
    assert!(stdout(&o).contains("ANSWERED []"), "{}", o.observation);
    // Without the proxy: the names do not resolve, the host's loopback server and a
    // public address are out of reach.
    let direct = format!(
        r#"
import socket
for target in [('allowed.test', 80), ('127.0.0.1', {port}), ('1.1.1.1', 80)]:
    try:
        socket.create_connection(target, timeout=5).close()
        print('REACHED', target)
    except OSError as e:
        print('no', target, type(e).__name__)
"#,
        port = server.addr.port()
    );
    let o = run
        .exec(&ExecRequest::new(["python3", "-c", &direct]).timeout(Duration::from_secs(60)))
        .unwrap();
    assert!(o.status.success(), "{}", o.observation);
    assert!(!stdout(&o).contains("REACHED"), "{}", o.observation);
    assert_eq!(stdout(&o).lines().count(), 3, "{}", o.observation);
    let o = sh(
        &run,
        "env -u http_proxy -u HTTP_PROXY -u ALL_PROXY -u all_proxy curl -sS --max-time 10 http://allowed.test/",
    );
    assert!(!o.status.success(), "{}", o.observation);
    assert_eq!(server.hits.load(Ordering::SeqCst), 0);
}

#[test]
fn a_bad_entry_is_refused_before_the_run_opens() {
    let fx = Fixture::new();
    let mut sandbox = SandboxConfig::mode(SandboxMode::WorkspaceWrite);
    sandbox.network_allow = vec!["*.com".into()];
    let err = Run::builder(fx.workspace())
        .store(fx.store())
        .config(Config {
            sandbox,
            ..Config::default()
        })
        .open()
        .unwrap_err();
    assert!(err.to_string().contains("name the domain"), "{err}");
}

/// An approver that gives one answer and keeps every question.
#[derive(Debug, Clone)]
struct Person {
    yes: bool,
    asked: Arc<std::sync::Mutex<Vec<String>>>,
}

impl corral::approve::Approver for Person {
    fn name(&self) -> &str {
        "test-person"
    }
    fn approve(
        &self,
        request: &corral::approve::ApprovalRequest,
        workspace: &std::path::Path,
    ) -> corral::approve::Approval {
        let mut asked = self.asked.lock().unwrap();
        asked.push(request.question(workspace));
        if self.yes {
            corral::approve::Approval::Approve
        } else {
            corral::approve::Approval::Deny(None)
        }
    }
}

#[test]
fn a_refused_domain_is_offered_for_the_run_and_the_answer_kept() {
    if !namespaces() {
        return;
    }
    for mode in [ApprovalMode::OnRequest, ApprovalMode::OnFailure] {
        // Yes: the call reruns in the sandbox with the domain allowed, for the run.
        let fx = Fixture::new();
        let server = serve();
        let person = Person {
            yes: true,
            asked: Arc::default(),
        };
        let run = open_with(&fx, &server, &["allowed.test"], mode, person.clone());
        let o = sh(&run, "curl -sSf --max-time 20 http://denied.test/x");
        assert!(o.status.success(), "{}", o.observation);
        assert_eq!(stdout(&o), "served GET /x HTTP/1.1 host=denied.test\n");
        assert!(
            o.observation
                .contains("rerun allowing denied.test, approved"),
            "{}",
            o.observation
        );
        let asked = person.asked.lock().unwrap().clone();
        assert_eq!(asked.len(), 1, "{asked:?}");
        assert!(
            asked[0].starts_with("Allow `denied.test` for this run?"),
            "{asked:?}"
        );
        let o = sh(&run, "curl -sSf --max-time 20 http://denied.test/again");
        assert!(o.status.success(), "{}", o.observation);
        assert_eq!(person.asked.lock().unwrap().len(), 1, "asked twice");
        assert_eq!(server.hits.load(Ordering::SeqCst), 2);

        // No: the failure stays, says so, and the domain is not asked about again.
        let fx = Fixture::new();
        let server = serve();
        let person = Person {
            yes: false,
            asked: Arc::default(),
        };
        let run = open_with(&fx, &server, &["allowed.test"], mode, person.clone());
        for _ in 0..2 {
            let o = sh(&run, "curl -sSf --max-time 20 http://denied.test/x");
            assert!(!o.status.success(), "{}", o.observation);
            assert!(o.observation.contains("declined"), "{}", o.observation);
        }
        assert_eq!(person.asked.lock().unwrap().len(), 1);
        assert_eq!(server.hits.load(Ordering::SeqCst), 0);
    }
}

#[test]
fn a_trusted_policy_file_opens_its_domains_and_adds_read_denies() {
    if !namespaces() {
        return;
    }
    let fx = Fixture::new();
    let server = serve();
    let secret = fx.dir.path().join("keys");
    std::fs::create_dir_all(&secret).unwrap();
    std::fs::write(secret.join("k"), "SECRET\n").unwrap();
    let text = format!(
        "[sandbox]\nnetwork_allow = [\"allowed.test\"]\ndeny_read = [\"{}\"]\n",
        secret.display()
    );
    let file = corral::policy::config::parse(&text, "user.toml", "user").unwrap();
    let mut sandbox = SandboxConfig::mode(SandboxMode::WorkspaceWrite);
    sandbox
        .test_resolve
        .insert("allowed.test".into(), server.addr);
    let run = Run::builder(fx.workspace())
        .store(fx.store())
        .config(Config {
            sandbox,
            ..Config::default()
        })
        .policy(
            corral::Policy::permissive()
                .unparsable_inner_line(corral::policy::Effect::Allow)
                .with_file(file),
        )
        .approval(ApprovalMode::Never)
        .open()
        .unwrap();
    let o = sh(
        &run,
        "curl -sSf --max-time 20 http://allowed.test/from-policy",
    );
    assert!(o.status.success(), "{}", o.observation);
    assert!(
        stdout(&o).starts_with("served GET /from-policy"),
        "{}",
        o.observation
    );
    let o = sh(&run, &format!("cat '{}/k'", secret.display()));
    assert!(!o.status.success(), "{}", o.observation);
    assert!(!stdout(&o).contains("SECRET"), "{}", o.observation);
}

/// corral's own endpoint is out of every box's reach: the proxy does not carry a
/// connection to a port corral listens on at a host-local address, even under a name
/// the person allowed.
#[test]
fn the_proxy_does_not_reach_corral_s_own_port() {
    if !namespaces() {
        return;
    }
    let fx = Fixture::new();
    let endpoint = serve();
    corral::sandbox::listeners::keep_out(endpoint.addr.port());
    let run = open(&fx, &endpoint, &["allowed.test"]);
    let o = sh(&run, "curl -sS --max-time 20 http://allowed.test/plain");
    assert!(
        stdout(&o).contains("is corral's own endpoint, which no box reaches"),
        "{}",
        o.observation
    );
    assert_eq!(endpoint.hits.load(Ordering::SeqCst), 0, "{}", o.observation);
    // Another server on the same loopback, under the same allowed name, is reached.
    let other = serve();
    let run = open(&fx, &other, &["allowed.test"]);
    let o = sh(&run, "curl -sS --max-time 20 http://allowed.test/plain");
    assert!(o.status.success(), "{}", o.observation);
    assert_eq!(other.hits.load(Ordering::SeqCst), 1);
}
