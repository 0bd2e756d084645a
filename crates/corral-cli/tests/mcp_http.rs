//! `corral mcp --listen 127.0.0.1:0` over Streamable HTTP: the official Python MCP client
//! (tools, a handle, cancellation, tokens, two sessions, a client that vanishes), and raw
//! HTTP for what a stock client never sends.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

use crate::mcp_common;
use crate::mcp_raw;
use mcp_common::*;
use mcp_raw::*;
use serde_json::{Value, json};

/// Longer than anything here takes; reached only when something never happens.
const PATIENCE: Duration = Duration::from_secs(60);

/// A `corral mcp --listen 127.0.0.1:0` child and what it logged.
struct Listening {
    child: Child,
    addr: SocketAddr,
    url: String,
    log: Arc<Mutex<String>>,
    /// The bearer token it requires: the one given, else the one it made.
    token: String,
    dir: tempfile::TempDir,
}

/// Each server's token by its address: [`request`] sends it unless told otherwise.
static TOKENS: Mutex<Vec<(SocketAddr, String)>> = Mutex::new(Vec::new());

/// The header that makes [`request`] send no `Authorization` at all.
const NO_TOKEN: (&str, &str) = ("Authorization", "");

impl Listening {
    /// Started with `token` in `CORRAL_MCP_TOKEN`, else with none given (corral makes one
    /// in the scratch state directory).
    fn start(flags: &[&str], token: Option<&str>) -> Self {
        Self::start_in(scratch(Some(PERMISSIVE)), flags, token)
    }

    fn start_in(dir: tempfile::TempDir, flags: &[&str], token: Option<&str>) -> Self {
        let mut command = Command::new(corral_bin());
        command
            .args(["mcp", "--workspace"])
            .arg(dir.path().join("ws"))
            .args(["--listen", "127.0.0.1:0"])
            .args(flags)
            .env("CORRAL_STORE", store(dir.path()))
            .env("XDG_CACHE_HOME", dir.path().join("cache"))
            .env("CORRAL_TRUST_STORE", trust_store(dir.path()))
            .env_remove("CORRAL_POLICY")
            .env_remove("CORRAL_MCP_TOKEN")
            .env("CORRAL_STATE_DIR", dir.path().join("state"))
            .env("XDG_CONFIG_HOME", dir.path().join("config"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        if let Some(token) = token {
            command.env("CORRAL_MCP_TOKEN", token);
        }
        let mut child = command.spawn().unwrap();
        let stderr = BufReader::new(child.stderr.take().unwrap());
        let log = Arc::new(Mutex::new(String::new()));
        let (tx, bound) = mpsc::channel();
        std::thread::spawn({
            let log = log.clone();
            move || {
                for line in stderr.lines().map_while(Result::ok) {
                    if let Some(url) = line.strip_prefix("corral mcp: listening on ") {
                        let _ = tx.send(url.to_string());
                    }
                    let mut log = log.lock().unwrap();
                    log.push_str(&line);
                    log.push('\n');
                }
            }
        });
        let url = bound
            .recv_timeout(PATIENCE)
            .expect("corral mcp never said where it listens");
        let addr = url
            .split_once("://")
            .and_then(|(_, rest)| rest.strip_suffix("/mcp"))
            .unwrap()
            .parse()
            .unwrap();
        let token = match token {
            Some(token) => token.to_string(),
            None => std::fs::read_to_string(dir.path().join("state/mcp-token")).unwrap(),
        };
        TOKENS.lock().unwrap().push((addr, token.clone()));
        Self {
            child,
            addr,
            url,
            log,
            token,
            dir,
        }
    }

    fn log(&self) -> String {
        self.log.lock().unwrap().clone()
    }

    /// Wait until the log holds `text`.
    fn wait_for_log(&self, text: &str) {
        let until = std::time::Instant::now() + PATIENCE;
        while !self.log().contains(text) {
            assert!(
                std::time::Instant::now() < until,
                "never logged {text:?}:\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// `corral trace ARGS --json` against this server's store.
    fn trace(&self, args: &[&str]) -> Value {
        let out = Command::new(corral_bin())
            .arg("trace")
            .args(args)
            .arg("--json")
            .env("CORRAL_STORE", store(self.dir.path()))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    }

    /// Stop it at once, keeping its directory (its state, its store) for another.
    fn into_dir(mut self) -> tempfile::TempDir {
        let _ = self.child.kill();
        let _ = self.child.wait();
        std::mem::replace(&mut self.dir, tempfile::tempdir().unwrap())
    }

    /// SIGTERM, and a clean exit.
    fn stop(mut self) -> String {
        Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap();
        let status = self.child.wait().unwrap();
        assert!(status.success(), "{status}: {}", self.log());
        self.log()
    }
}

impl Drop for Listening {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The official `mcp` package's Python: the clients' venv the other client tests share.
fn python() -> &'static Path {
    crate::python_clients::python()
}

/// Run a scenario of tests/python/mcp_http_client.py; what it printed last, as JSON.
fn scenario(python: &Path, name: &str, url: &str, args: &[&str], token: Option<&str>) -> Value {
    scenario_env(python, name, url, args, token, &[])
}

fn scenario_env(
    python: &Path,
    name: &str,
    url: &str,
    args: &[&str],
    token: Option<&str>,
    env: &[(&str, &std::path::Path)],
) -> Value {
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/python/mcp_http_client.py"
    );
    let mut command = Command::new(python);
    command.arg(script).arg(name).arg(url).args(args);
    command
        .env_remove("CORRAL_TEST_CA")
        .envs(env.iter().copied());
    match token {
        Some(token) => command.env("CORRAL_TEST_TOKEN", token),
        None => command.env_remove("CORRAL_TEST_TOKEN"),
    };
    let out = command.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{name}: {}\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let last = stdout.lines().last().unwrap_or_default();
    serde_json::from_str(last).unwrap_or_else(|e| panic!("{name}: {e}: {stdout}"))
}

/// One HTTP/1.1 request, with the server's token unless `headers` hold an
/// `Authorization` ([`NO_TOKEN`]: none); the status, the headers (lowercased) and the body.
fn request(
    addr: SocketAddr,
    method: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> (u16, String, String) {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(PATIENCE)).unwrap();
    let mut head = format!(
        "{method} /mcp HTTP/1.1\r\nConnection: close\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n",
        body.len()
    );
    if !headers
        .iter()
        .any(|(name, _)| name.eq_ignore_ascii_case("host"))
    {
        head.push_str(&format!("Host: {addr}\r\n"));
    }
    let authorized = headers
        .iter()
        .any(|(name, _)| name.eq_ignore_ascii_case("authorization"));
    if !authorized && let Some((_, token)) = TOKENS.lock().unwrap().iter().find(|(a, _)| *a == addr)
    {
        head.push_str(&format!("Authorization: Bearer {token}\r\n"));
    }
    for (name, value) in headers.iter().filter(|(_, value)| !value.is_empty()) {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).unwrap();
    // The server may answer (413) before reading all of a large body.
    let _ = stream.write_all(body);
    let mut response = Vec::new();
    let _ = stream.read_to_end(&mut response);
    let response = String::from_utf8_lossy(&response).into_owned();
    let (head, body) = response.split_once("\r\n\r\n").unwrap_or((&response, ""));
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    (status, head.to_ascii_lowercase(), body.to_string())
}

fn post(addr: SocketAddr, headers: &[(&str, &str)], body: &str) -> (u16, String, String) {
    request(addr, "POST", headers, body.as_bytes())
}

/// The JSON-RPC message in a response body, plain JSON or the `data:` of an SSE event.
fn message(body: &str) -> Value {
    let json = body
        .lines()
        .find_map(|l| l.strip_prefix("data: ").filter(|d| d.starts_with('{')))
        .unwrap_or(body.trim());
    serde_json::from_str(json).unwrap_or_else(|e| panic!("{e}: {body}"))
}

/// A new session by raw `initialize`; its id.
fn raw_session(addr: SocketAddr, headers: &[(&str, &str)]) -> String {
    let (status, head, body) = post(addr, headers, &initialize(1));
    assert_eq!(status, 200, "{head}{body}");
    assert_eq!(
        message(&body)["result"]["protocolVersion"],
        "2025-06-18",
        "{body}"
    );
    let id = head
        .lines()
        .find_map(|l| l.strip_prefix("mcp-session-id: "))
        .unwrap()
        .trim()
        .to_string();
    let mut with = headers.to_vec();
    with.push(("Mcp-Session-Id", &id));
    let (status, _, _) = post(
        addr,
        &with,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    );
    assert_eq!(status, 202);
    id
}

#[test]
fn the_python_client_calls_tools_polls_a_handle_and_cancels() {
    let python = python();
    let server = Listening::start(&[], None);
    let seen = scenario(python, "tools", &server.url, &[], Some(&server.token));
    assert_eq!(seen["protocol"], "2025-11-25", "{seen}");
    assert!(
        seen["tools"]
            .as_array()
            .unwrap()
            .contains(&json!("shell_start")),
        "{seen}"
    );
    assert!(
        seen["echo"].as_str().unwrap().contains("hello over http"),
        "{seen}"
    );
    assert_eq!(seen["echo_exit"], 0, "{seen}");
    assert_eq!(seen["handle_state"], "exited", "{seen}");
    let output = seen["handle_output"].as_str().unwrap();
    assert!(
        output.contains("handled") && output.contains("done"),
        "{seen}"
    );

    let marker = marker(61);
    let seen = scenario(
        python,
        "cancel",
        &server.url,
        &[&marker],
        Some(&server.token),
    );
    assert_eq!(seen["cancelled"], true, "{seen}");
    assert!(seen["after"].as_str().unwrap().contains("after"), "{seen}");
    assert_eq!(survivors_after(&marker, PATIENCE), Vec::<u32>::new());
    let log = server.stop();
    assert!(log.contains("the bearer token is in"), "{log}");
    assert!(
        log.contains("a bearer token is required on every request, loopback included"),
        "{log}"
    );
}

#[test]
fn a_missing_or_wrong_token_is_refused_before_anything_runs() {
    let token = "t0ken-for-this-test-0123456789abcdef";
    let server = Listening::start(&[], Some(token));
    let call = echo(5, "should not run");
    let (status, head, body) = post(server.addr, &[NO_TOKEN], &call);
    assert_eq!(status, 401, "{head}{body}");
    assert!(
        head.contains("www-authenticate: bearer realm=\"corral mcp\""),
        "{head}"
    );
    assert!(body.contains("Authorization: Bearer"), "{body}");
    // Clients show the challenge rather than the body: it says what to send too.
    assert!(
        head.contains(
            "error_description=\"this server needs a bearer token: send authorization: bearer token"
        ),
        "{head}"
    );
    let (status, head, _) = post(server.addr, &[("Authorization", "Bearer wrong")], &call);
    assert_eq!(status, 401);
    assert!(head.contains("error=\"invalid_token\""), "{head}");
    assert!(
        head.contains("error_description=\"the bearer token is not this server's"),
        "{head}"
    );
    // Not even a session is opened for an unauthenticated initialize.
    let (status, _, _) = post(
        server.addr,
        &[("Authorization", "Bearer x")],
        &initialize(1),
    );
    assert_eq!(status, 401);

    let python = python();
    let seen = scenario(python, "refused", &server.url, &[], Some("wrong"));
    assert_eq!(seen["refused"], true, "{seen}");
    let seen = scenario(python, "refused", &server.url, &[], None);
    assert_eq!(seen["refused"], true, "{seen}");
    let seen = scenario(python, "tools", &server.url, &[], Some(token));
    assert_eq!(seen["echo_exit"], 0, "{seen}");
    let bearer = format!("Bearer {token}");
    raw_session(server.addr, &[("Authorization", &bearer)]);
    let steps = server.trace(&["steps"]).to_string();
    assert!(!steps.contains("should not run"), "{steps}");
    let log = server.stop();
    assert!(
        log.contains("a bearer token is required on every request"),
        "{log}"
    );
}

#[test]
fn two_sessions_cannot_reach_each_others_handles() {
    let python = python();
    let server = Listening::start(&[], None);
    let marker = marker(62);
    let seen = scenario(
        python,
        "isolation",
        &server.url,
        &[&marker],
        Some(&server.token),
    );
    assert_eq!(seen["other_poll_error"], true, "{seen}");
    assert_eq!(seen["other_kill_error"], true, "{seen}");
    assert_eq!(seen["owner_state_after"], "running", "{seen}");
    assert_eq!(seen["owner_kill_state"], "killed", "{seen}");
    assert_eq!(survivors_after(&marker, PATIENCE), Vec::<u32>::new());
    // Each session was a run of its own.
    server.wait_for_log("session ended");
    let runs = server.trace(&["runs"]);
    assert_eq!(runs.as_array().unwrap().len(), 2, "{runs}");
}

#[test]
fn a_client_that_vanishes_leaves_no_process() {
    let python = python();
    let server = Listening::start(&["--idle-timeout", "2s"], None);
    let marker = marker(63);
    let seen = scenario(
        python,
        "vanish",
        &server.url,
        &[&marker],
        Some(&server.token),
    );
    assert_eq!(seen["handle"], 1, "{seen}");
    server.wait_for_log("session ended");
    assert_eq!(survivors_after(&marker, PATIENCE), Vec::<u32>::new());
    let handles = server.trace(&["handles"]).to_string();
    assert!(handles.contains("run_ended"), "{handles}");
}

#[test]
fn malformed_messages_over_http_get_json_rpc_answers() {
    let server = Listening::start(&["--max-message", "64KiB"], None);
    let session = raw_session(server.addr, &[]);
    let with = [("Mcp-Session-Id", session.as_str())];
    for case in cases() {
        let (status, head, body) = post(server.addr, &with, &case.message);
        match case.expect {
            Expect::Nothing => {
                assert_eq!((status, body.as_str()), (202, ""), "{}: {head}", case.name)
            }
            _ => {
                assert_eq!(status, 400, "{}: {head}{body}", case.name);
                check(&case, &serde_json::from_str(&body).unwrap());
            }
        }
    }
    // Over the limit: 413, with the id read from the start.
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":77,"method":"tools/call","params":{{"name":"exec","arguments":{{"argv":["echo","{}"]}}}}}}"#,
        "x".repeat(100 << 10)
    );
    let (status, _, body) = post(server.addr, &with, &big);
    assert_eq!(status, 413, "{body}");
    let answer: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(answer["id"], 77, "{answer}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("65536 bytes"),
        "{answer}"
    );
    // A request without a session that is not initialize.
    let (status, _, body) = post(server.addr, &[], &ping(8));
    assert_eq!(status, 400, "{body}");
    assert_eq!(message(&body)["id"], 8, "{body}");
    // And the session still serves.
    let (status, _, body) = post(server.addr, &with, &echo(9, "still here"));
    assert_eq!(status, 200, "{body}");
    let answer = message(&body);
    assert_eq!(answer["id"], 9, "{answer}");
    assert_eq!(
        answer["result"]["structuredContent"]["exit_code"], 0,
        "{answer}"
    );
    // DELETE ends it; a session that is gone, or never was, is not found.
    let (status, _, _) = request(server.addr, "DELETE", &with, b"");
    assert_eq!(status, 204);
    server.wait_for_log("session ended");
    let (status, _, body) = request(server.addr, "DELETE", &with, b"");
    assert_eq!(status, 404, "{body}");
    assert!(body.contains("initialize"), "{body}");
    let (status, _, _) = request(
        server.addr,
        "DELETE",
        &[("Mcp-Session-Id", "never-was")],
        b"",
    );
    assert_eq!(status, 404);
    // An initialize missing a field of its revision is told which, and opens nothing.
    let (status, _, body) = post(
        server.addr,
        &[],
        r#"{"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":"2025-06-18","clientInfo":{"name":"raw","version":"1"}}}"#,
    );
    assert_eq!(status, 400, "{body}");
    let answer = message(&body);
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("\"params.capabilities\" is missing"),
        "{answer}"
    );
    // The address was the first line the server printed.
    let log = server.log();
    assert!(
        log.starts_with("corral mcp: listening on http://127.0.0.1:"),
        "{log}"
    );
}

#[test]
fn sessions_beyond_the_limit_are_refused_until_one_ends() {
    let server = Listening::start(&["--max-sessions", "1"], None);
    let first = raw_session(server.addr, &[]);
    let (status, head, body) = post(server.addr, &[], &initialize(2));
    assert_eq!(status, 503, "{head}{body}");
    assert!(head.contains("retry-after"), "{head}");
    assert_eq!(message(&body)["id"], 2, "{body}");
    assert!(body.contains("--max-sessions"), "{body}");
    let (status, _, _) = request(server.addr, "DELETE", &[("Mcp-Session-Id", &first)], b"");
    assert_eq!(status, 204);
    server.wait_for_log("session ended");
    raw_session(server.addr, &[]);
}

/// Issue 60: a box with the network on reaches corral's loopback port like any local
/// process. Without the token it cannot open a session there (so it cannot declare
/// elicitation and answer its own question), and the token it would need is hidden from
/// it: `curl` from inside a `--network on` box gets `401`, and the token file cannot be read.
/// A box with the host's network (`--network on`) cannot open a session on corral's own
/// endpoint: without the token it is refused (401) on every kernel, and where Landlock
/// has TCP rules (ABI 4+) it cannot connect to the port at all, even with the token, while
/// another port on the same loopback stays reachable.
#[test]
fn a_box_cannot_open_a_session_on_the_endpoint() {
    let server = Listening::start(&["--network", "on"], None);
    let session = raw_session(server.addr, &[]);
    let token_file = server.dir.path().join("state/mcp-token");
    let other = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let other_port = other.local_addr().unwrap().port();
    let accepting = std::thread::spawn(move || {
        // Answer one connection, the box's, with a minimal HTTP reply.
        if let Ok((mut s, _)) = other.accept() {
            let mut buf = [0u8; 1024];
            let _ = s.read(&mut buf);
            let _ = s.write_all(b"HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n");
        }
    });
    let script = format!(
        "cat {file} >/dev/null 2>&1 && echo token-read || echo token-hidden; \
         curl -s -o /dev/null -w 'initialize %{{http_code}}\\n' -X POST \
         -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
         --data '{init}' {url}; \
         curl -s -o /dev/null -w 'with the token %{{http_code}}\\n' -X POST \
         -H 'Authorization: Bearer {token}' \
         -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
         --data '{init}' {url}; \
         curl -s -o /dev/null -w 'another port %{{http_code}}\\n' http://127.0.0.1:{other_port}/",
        file = token_file.display(),
        init = initialize(1),
        url = server.url,
        token = server.token,
    );
    let call = json!({
        "jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "exec", "arguments": {"argv": ["sh", "-c", script]}}
    })
    .to_string();
    let (status, _, body) = post(server.addr, &[("Mcp-Session-Id", &session)], &call);
    assert_eq!(status, 200, "{body}");
    let answer = message(&body).to_string();
    accepting.join().unwrap();
    assert!(answer.contains("token-hidden"), "{answer}");
    assert!(answer.contains("another port 204"), "{answer}");
    if corral_sys::sandbox::host_support().landlock_abi >= 4 {
        // The port is closed to the box: no connection, with or without the token.
        assert!(answer.contains("initialize 000"), "{answer}");
        assert!(answer.contains("with the token 000"), "{answer}");
    } else {
        assert!(answer.contains("initialize 401"), "{answer}");
    }
    // The box's request opened no session: only the test's own is a run.
    let runs = server.trace(&["runs"]);
    assert_eq!(runs.as_array().unwrap().len(), 1, "{runs}");
}

/// The token corral makes is made once per state directory: a restart serves the same
/// bytes from the same `0600` file, so a client's configuration stays valid.
#[test]
fn a_restart_reuses_the_token() {
    use std::os::unix::fs::PermissionsExt;
    let server = Listening::start(&[], None);
    let first = server.token.clone();
    assert_eq!(first.len(), 64, "{first}");
    server.wait_for_log("made now");
    let dir = server.into_dir();
    let file = dir.path().join("state/mcp-token");
    let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let again = Listening::start_in(dir, &[], None);
    assert_eq!(again.token, first);
    again.wait_for_log("made earlier");
    let (status, _, body) = post(
        again.addr,
        &[("Authorization", &format!("Bearer {first}"))],
        &initialize(1),
    );
    assert_eq!(status, 200, "{body}");
}

/// `corral mcp --listen` with `args` and `token` in `CORRAL_MCP_TOKEN`, expected to refuse
/// to start: its stderr.
fn refused_at_start(dir: &Path, args: &[&std::ffi::OsStr], token: Option<&str>) -> String {
    let mut command = Command::new(corral_bin());
    command
        .args(["mcp", "--listen", "127.0.0.1:0", "--workspace"])
        .arg(dir.join("ws"))
        .args(args)
        .env("CORRAL_STATE_DIR", dir.join("state"))
        .env("CORRAL_STORE", store(dir))
        .env("XDG_CONFIG_HOME", dir.join("config"))
        .env_remove("CORRAL_MCP_TOKEN")
        .stdin(Stdio::null());
    if let Some(token) = token {
        command.env("CORRAL_MCP_TOKEN", token);
    }
    let out = command.output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(!err.contains("listening on"), "{err}");
    err
}

/// A token file a box could read is refused, naming where it lies and where to put it
/// instead; so are an empty token and a short one, with the length needed.
#[test]
fn a_token_the_box_could_read_or_guess_stops_corral_from_starting() {
    let dir = scratch(Some(PERMISSIVE));
    let long = "k".repeat(48);
    let in_ws = dir.path().join("ws/token");
    std::fs::write(&in_ws, &long).unwrap();
    let err = refused_at_start(
        dir.path(),
        &["--token-file".as_ref(), in_ws.as_os_str()],
        None,
    );
    assert!(err.contains("lies in the workspace"), "{err}");
    assert!(err.contains("mcp-token"), "{err}");
    let extra = dir.path().join("extra");
    std::fs::create_dir(&extra).unwrap();
    std::fs::write(extra.join("token"), &long).unwrap();
    let err = refused_at_start(
        dir.path(),
        &[
            "--writable".as_ref(),
            extra.as_os_str(),
            "--token-file".as_ref(),
            extra.join("token").as_os_str(),
        ],
        None,
    );
    assert!(err.contains("a root the box writes"), "{err}");
    let err = refused_at_start(dir.path(), &[], Some("short"));
    assert!(
        err.contains("5 characters") && err.contains("at least 32"),
        "{err}"
    );
    let err = refused_at_start(dir.path(), &[], Some(""));
    assert!(err.contains("CORRAL_MCP_TOKEN is empty"), "{err}");
    assert!(!dir.path().join("state/mcp-token").exists());
}

/// Off loopback a token made in the state directory would reach no remote client: one
/// must be given on purpose.
#[test]
fn listening_off_loopback_needs_a_token_given() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(corral_bin())
        .args(["mcp", "--listen", "0.0.0.0:0"])
        .env_remove("CORRAL_MCP_TOKEN")
        .env("CORRAL_STATE_DIR", dir.path().join("state"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("give --token-file FILE or set CORRAL_MCP_TOKEN"),
        "{err}"
    );
    assert!(!dir.path().join("state/mcp-token").exists());
}

/// A token in the URL is never accepted, even the right one: URLs are logged.
#[test]
fn a_token_in_the_url_is_refused() {
    let server = Listening::start(&[], None);
    for query in ["access_token", "token"] {
        let mut stream = TcpStream::connect(server.addr).unwrap();
        stream.set_read_timeout(Some(PATIENCE)).unwrap();
        let init = initialize(1);
        write!(
            stream,
            "POST /mcp?{query}={} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\
             Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
             Content-Length: {}\r\n\r\n{init}",
            server.token,
            server.addr,
            init.len()
        )
        .unwrap();
        let mut answer = String::new();
        let _ = stream.read_to_string(&mut answer);
        assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
        assert!(answer.contains("never accepted"), "{answer}");
    }
}

#[test]
fn a_foreign_origin_is_refused() {
    let server = Listening::start(&[], None);
    let (status, _, body) = post(
        server.addr,
        &[("Origin", "http://attacker.example")],
        &initialize(1),
    );
    assert_eq!(status, 403, "{body}");
    let (status, _, body) = post(
        server.addr,
        &[("Origin", "http://localhost:3000")],
        &initialize(1),
    );
    assert_eq!(status, 200, "{body}");
    let (status, _, body) = post(server.addr, &[("Host", "attacker.example")], &initialize(1));
    assert!(status == 403 || status == 400, "{status} {body}");
}

const TLS_TOKEN: &str = "tls-token-0123456789abcdef-0123456789";

#[test]
fn https_with_a_certificate_and_key() {
    let python = python();
    let dir = tempfile::tempdir().unwrap();
    let (cert, key) = (dir.path().join("cert.pem"), dir.path().join("key.pem"));
    let made = Command::new("openssl")
        .args([
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "1",
            "-subj",
            "/CN=127.0.0.1",
        ])
        .args(["-addext", "subjectAltName=IP:127.0.0.1"])
        .arg("-keyout")
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .stderr(Stdio::null())
        .status();
    if !made.is_ok_and(|s| s.success()) {
        eprintln!("NOTE: skipping the HTTPS test: openssl could not make a certificate");
        return;
    }
    let server = Listening::start(
        &[
            "--tls-cert",
            cert.to_str().unwrap(),
            "--tls-key",
            key.to_str().unwrap(),
        ],
        Some(TLS_TOKEN),
    );
    assert!(server.url.starts_with("https://"), "{}", server.url);
    let seen = scenario_env(
        python,
        "tools",
        &server.url,
        &[],
        Some(TLS_TOKEN),
        &[("CORRAL_TEST_CA", &cert)],
    );
    assert_eq!(seen["echo_exit"], 0, "{seen}");
    // Plain HTTP to the TLS port gets nowhere.
    let mut stream = TcpStream::connect(server.addr).unwrap();
    stream.set_read_timeout(Some(PATIENCE)).unwrap();
    let _ = stream.write_all(initialize(1).as_bytes());
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    assert!(!String::from_utf8_lossy(&answer).contains("protocolVersion"));
    let log = server.stop();
    assert!(log.contains("TLS served directly (rustls)"), "{log}");
}

#[test]
fn a_bad_certificate_file_is_refused_with_what_to_give() {
    let dir = tempfile::tempdir().unwrap();
    let bogus = dir.path().join("bogus.pem");
    std::fs::write(&bogus, "not a certificate").unwrap();
    let out = Command::new(corral_bin())
        .args(["mcp", "--listen", "127.0.0.1:0", "--tls-cert"])
        .arg(&bogus)
        .arg("--tls-key")
        .arg(&bogus)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("give a PEM file"), "{err}");
}

/// A session deleted in the middle of a 400 s foreground call: the call's tree is gone
/// within 200 ms, not after rmcp's drain of the session's answers, and its step is recorded
/// as cancelled. (`sleep` is known to be safe, so this raw client, which answers no
/// question, needs no approval even as an ordinary user; a command that ignores SIGTERM is
/// the stdio test's.)
#[test]
fn a_deleted_session_takes_its_running_call_with_it() {
    let server = Listening::start(&[], None);
    let addr = server.addr;
    let id = raw_session(addr, &[]);
    let marker = marker(400);
    let call = serde_json::json!({
        "jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "exec", "arguments": {"argv": ["sleep", marker]}}
    })
    .to_string();
    let calling = {
        let id = id.clone();
        std::thread::spawn(move || post(addr, &[("Mcp-Session-Id", &id)], &call))
    };
    assert_eq!(
        corral_test_support::wait_for(&marker, 1, PATIENCE),
        1,
        "{}",
        server.log()
    );
    let deleted = std::time::Instant::now();
    let (status, head, _) = request(addr, "DELETE", &[("Mcp-Session-Id", &id)], b"");
    assert!((200..300).contains(&status), "{head}");
    let left = survivors_after(&marker, Duration::from_secs(3));
    let took = deleted.elapsed();
    assert!(left.is_empty(), "still running: {left:?}");
    assert!(
        took < Duration::from_millis(200),
        "the call outlived its session by {took:?}"
    );
    let _ = calling.join();
    let deadline = std::time::Instant::now() + PATIENCE;
    loop {
        let steps = server.trace(&["steps"]);
        if steps[0]["outcome"] == "cancelled" {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "{steps:#}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A quick call's answer is the stream's only message, so it leaves as plain JSON: head
/// and body in one write, nothing for a client to parse but the message, and the
/// connection free for the next request at once. Twenty pings on one kept-alive
/// connection each come back so, well within a client's delayed-ACK time (40 ms) that an
/// answer written in pieces could wait for.
#[test]
fn a_quick_answer_is_one_json_body_on_a_kept_alive_connection() {
    let server = Listening::start(&[], None);
    let addr = server.addr;
    let id = raw_session(addr, &[]);
    let mut stream = TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(PATIENCE)).unwrap();
    let mut quickest = Duration::MAX;
    for n in 0..20 {
        let body = ping(100 + n);
        let head = format!(
            "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nMcp-Session-Id: {id}\r\n\
             Authorization: Bearer {}\r\n\
             Content-Length: {}\r\n\r\n{body}",
            server.token,
            body.len()
        );
        let sent = std::time::Instant::now();
        stream.write_all(head.as_bytes()).unwrap();
        let (head, answer) = read_answer(&mut stream);
        if n >= 3 {
            quickest = quickest.min(sent.elapsed());
        }
        assert!(head.contains("content-type: application/json"), "{head}");
        let answer: Value =
            serde_json::from_str(&answer).unwrap_or_else(|e| panic!("{e}: {answer}"));
        assert_eq!(answer["id"], 100 + n, "{answer}");
    }
    assert!(
        quickest < Duration::from_millis(30),
        "every answer waited: the quickest took {quickest:?}\n{}",
        server.log()
    );
}

/// A call that reports progress before its answer keeps the SSE stream: the progress
/// notification first, then the answer, on one response.
#[test]
fn a_call_that_reports_progress_streams_its_answer() {
    let server = Listening::start(&[], None);
    let addr = server.addr;
    let id = raw_session(addr, &[]);
    let call = r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"exec","arguments":{"argv":["sleep","0.8"]},"_meta":{"progressToken":"p5"}}}"#;
    let (status, head, body) = post(addr, &[("Mcp-Session-Id", &id)], call);
    assert_eq!(status, 200, "{head}{body}");
    assert!(head.contains("content-type: text/event-stream"), "{head}");
    let messages: Vec<Value> = body
        .lines()
        .filter_map(|l| l.strip_prefix("data: ").filter(|d| d.starts_with('{')))
        .map(|d| serde_json::from_str(d).unwrap())
        .collect();
    assert_eq!(messages[0]["method"], "notifications/progress", "{body}");
    assert_eq!(messages[0]["params"]["progressToken"], "p5", "{body}");
    let answer = messages.last().unwrap();
    assert_eq!(answer["id"], 5, "{body}");
    assert_eq!(
        answer["result"]["structuredContent"]["exit_code"], 0,
        "{body}"
    );
}

/// Read one answer off a kept-alive connection: its head (lowercased) and its body, sized
/// by `Content-Length` or chunked.
fn read_answer(stream: &mut TcpStream) -> (String, String) {
    let mut read = Vec::new();
    let mut byte = [0u8; 4096];
    let done = |read: &[u8]| -> Option<(String, String)> {
        let text = String::from_utf8_lossy(read);
        let (head, rest) = text.split_once("\r\n\r\n")?;
        let head = head.to_ascii_lowercase();
        if let Some(len) = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length: "))
        {
            let len: usize = len.trim().parse().unwrap();
            return (rest.len() >= len).then(|| (head.clone(), rest[..len].to_string()));
        }
        read.ends_with(b"\r\n0\r\n\r\n")
            .then(|| (head.clone(), dechunk(rest)))
    };
    loop {
        if let Some(answer) = done(&read) {
            return answer;
        }
        let n = stream.read(&mut byte).unwrap();
        assert!(
            n > 0,
            "the server closed the connection: {:?}",
            String::from_utf8_lossy(&read)
        );
        read.extend_from_slice(&byte[..n]);
    }
}

fn dechunk(mut chunks: &str) -> String {
    let mut body = String::new();
    while let Some((size, rest)) = chunks.split_once("\r\n") {
        let size = usize::from_str_radix(size.trim(), 16).unwrap();
        body.push_str(&rest[..size]);
        chunks = &rest[size + 2..];
        if size == 0 {
            break;
        }
    }
    body
}

/// A connection that sends no request, or half a header, holds its descriptor only for
/// the header timeout (20 s), with or without a token; one that declares a body over the
/// limit is answered `413` at once, with the id its start shows, and an empty body is a
/// JSON-RPC parse error, not an accepted notification. The server serves others all along.
const S3CRET: &str = "s3cret-0123456789abcdef-0123456789abcdef";

#[test]
fn idle_trickling_and_oversized_connections_do_not_hold_the_server() {
    let server = Listening::start(&["--max-message", "64KiB"], Some(S3CRET));
    let silent = TcpStream::connect(server.addr).unwrap();
    let mut partial = TcpStream::connect(server.addr).unwrap();
    partial
        .write_all(format!("POST /mcp HTTP/1.1\r\nHost: {}\r\n", server.addr).as_bytes())
        .unwrap();
    let bearer = format!("Bearer {S3CRET}");
    let auth = [("Authorization", bearer.as_str())];
    let mut declared = TcpStream::connect(server.addr).unwrap();
    declared.set_read_timeout(Some(PATIENCE)).unwrap();
    declared
        .write_all(
            format!(
                "POST /mcp HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {S3CRET}\r\n\
                 Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
                 Content-Length: 10000000000\r\n\r\n{{\"jsonrpc\":\"2.0\",\"id\":41,",
                server.addr
            )
            .as_bytes(),
        )
        .unwrap();
    let mut answer = String::new();
    let mut buf = [0u8; 4096];
    while !answer.contains("\"jsonrpc\"") {
        // Another test in this process may take a signal: a read it interrupts is retried.
        let n = match declared.read(&mut buf) {
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            read => read.unwrap(),
        };
        assert!(n > 0, "closed without an answer: {answer}");
        answer.push_str(&String::from_utf8_lossy(&buf[..n]));
    }
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    assert!(answer.contains("\"id\":41"), "{answer}");
    let (status, _, body) = post(server.addr, &auth, "");
    assert_eq!(status, 400, "{body}");
    assert_eq!(message(&body)["error"]["code"], -32700, "{body}");
    // Others are served meanwhile.
    let session = raw_session(server.addr, &auth);
    assert!(!session.is_empty());
    for mut idle in [silent, partial] {
        idle.set_read_timeout(Some(PATIENCE)).unwrap();
        let started = std::time::Instant::now();
        let mut rest = Vec::new();
        let _ = idle.read_to_end(&mut rest);
        assert!(
            started.elapsed() < Duration::from_secs(25),
            "held for {:?}",
            started.elapsed()
        );
    }
}

/// A session is idle only while none of its requests is being answered: a call that
/// runs past `--idle-timeout` without a word keeps its session and gets its answer; once
/// nothing is asked of it for the timeout, the session ends and is `404`.
#[test]
fn a_call_longer_than_the_idle_timeout_keeps_its_session() {
    let server = Listening::start(&["--idle-timeout", "1s"], None);
    let session = raw_session(server.addr, &[]);
    let with = [("Mcp-Session-Id", session.as_str())];
    let call = r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"exec","arguments":{"argv":["sleep","3"]}}}"#;
    let (status, head, body) = post(server.addr, &with, call);
    assert_eq!(status, 200, "{head}{body}");
    let answer = message(&body);
    assert_eq!(answer["id"], 5, "{body}");
    assert_eq!(
        answer["result"]["structuredContent"]["exit_code"], 0,
        "{body}"
    );
    server.wait_for_log("idle for");
    let ping = r#"{"jsonrpc":"2.0","id":6,"method":"ping"}"#;
    let (status, _, body) = post(server.addr, &with, ping);
    assert_eq!(status, 404, "{body}");
}

/// One host, named once: a second `Host` header, or an authority in the request line, is
/// `400`. And in a session, a request whose id is still being answered is refused with
/// that id, not run.
#[test]
fn one_host_and_one_request_per_id_in_flight() {
    let server = Listening::start(&[], None);
    for extra in [
        vec![("Host", "evil.example")],
        vec![("Host", "127.0.0.1"), ("Host", "evil.example")],
    ] {
        let (status, _, body) = post(server.addr, &extra, &initialize(1));
        assert!(status == 400 || status == 403, "{status}: {body}");
    }
    let mut absolute = TcpStream::connect(server.addr).unwrap();
    absolute.set_read_timeout(Some(PATIENCE)).unwrap();
    let init = initialize(1);
    write!(
        absolute,
        "POST http://evil.example/mcp HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\
         Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
         Content-Length: {}\r\n\r\n{init}",
        server.addr,
        init.len()
    )
    .unwrap();
    let mut answer = String::new();
    let _ = absolute.read_to_string(&mut answer);
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");

    let session = raw_session(server.addr, &[]);
    let ws = server.dir.path().join("ws");
    let addr = server.addr;
    let first = std::thread::spawn({
        let session = session.clone();
        move || {
            let call = r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"shell","arguments":{"line":"touch started && sleep 2"}}}"#;
            post(addr, &[("Mcp-Session-Id", session.as_str())], call)
        }
    });
    let until = std::time::Instant::now() + PATIENCE;
    while !ws.join("started").exists() {
        assert!(
            std::time::Instant::now() < until,
            "the first call never started"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let again = r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"exec","arguments":{"argv":["touch","second"]}}}"#;
    let (status, _, body) = post(addr, &[("Mcp-Session-Id", session.as_str())], again);
    assert_eq!(status, 400, "{body}");
    assert_eq!(message(&body)["id"], 9, "{body}");
    assert_eq!(message(&body)["error"]["code"], -32600, "{body}");
    let (status, _, body) = first.join().unwrap();
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        message(&body)["result"]["structuredContent"]["exit_code"],
        0,
        "{body}"
    );
    assert!(!ws.join("second").exists(), "the duplicate ran");
}
