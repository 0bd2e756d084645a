//! `--otlp`: runs, steps, policy decisions, sandbox layers and handles reach a real
//! OTLP/HTTP receiver as spans with the right parents, and no command output leaves the
//! node unless asked; a collector that is down never fails a call.

use crate::common;
use crate::mcp_common;
use crate::mcp_raw;
use crate::otlp;
use crate::task_common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::Duration;

use common::{Scratch, text};
use opentelemetry_proto::tonic::trace::v1::Span;
use otlp::{Collector, attr};
use serde_json::json;

const WAIT: Duration = Duration::from_secs(60);

fn named<'a>(spans: &'a [Span], name: &str) -> Vec<&'a Span> {
    spans.iter().filter(|s| s.name == name).collect()
}

fn has(spans: &[Span], name: &str) -> bool {
    spans.iter().any(|s| s.name == name)
}

/// Output that appears in no argv: the shell assembles it.
const PRINT: &str = "printf '%s-%s\\n' hidden payload; exit 3";
const PRINTED: &[u8] = b"hidden-payload";

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

#[test]
fn a_step_is_a_child_of_its_run_with_its_facts_and_without_its_output() {
    let s = Scratch::new();
    let mut collector = Collector::start();
    let out = s.output(&[
        "exec",
        "--otlp",
        &collector.url,
        "--yes",
        "--sandbox",
        "workspace-write",
        "--",
        "sh",
        "-c",
        PRINT,
    ]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    assert_eq!(out.stdout, b"hidden-payload\n");

    let spans = collector.spans_until(WAIT, |s| has(s, "corral run") && has(s, "corral exec"));
    assert!(collector.requests.iter().all(|r| r.path == "/v1/traces"));
    let run = named(&spans, "corral run")[0];
    let step = named(&spans, "corral exec")[0];
    assert!(run.parent_span_id.is_empty(), "the run is the trace's root");
    assert_eq!(step.trace_id, run.trace_id);
    assert_eq!(step.parent_span_id, run.span_id);
    assert!(step.start_time_unix_nano >= run.start_time_unix_nano);
    assert!(step.end_time_unix_nano <= run.end_time_unix_nano);

    let a = &step.attributes;
    assert_eq!(attr(a, "corral.tool").as_deref(), Some("exec"));
    assert_eq!(attr(a, "process.exit.code").as_deref(), Some("3"));
    assert_eq!(attr(a, "corral.outcome").as_deref(), Some("exited"));
    assert_eq!(attr(a, "corral.stdout_bytes").as_deref(), Some("15"));
    assert_eq!(attr(a, "corral.step.seq").as_deref(), Some("1"));
    assert!(attr(a, "corral.argv").unwrap().contains("printf"));
    assert!(attr(a, "corral.wall_ms").is_some());
    assert!(attr(a, "corral.containment").is_some());
    assert_eq!(attr(a, "corral.output"), None);
    // The sandbox: its mode, each layer with its level, and an event per layer.
    assert_eq!(
        attr(a, "corral.sandbox.mode").as_deref(),
        Some("workspace-write")
    );
    let layers = attr(a, "corral.sandbox.layers").expect("corral.sandbox.layers");
    assert!(layers.contains("landlock:"), "{layers}");
    let events = step
        .events
        .iter()
        .filter(|e| e.name == "corral.sandbox")
        .count();
    assert_eq!(events, layers.split(',').count(), "{layers}");
    assert_eq!(
        attr(a, "corral.run.id"),
        attr(&run.attributes, "corral.run.id")
    );
    assert_eq!(
        attr(&collector.resource(), "service.name").as_deref(),
        Some("corral")
    );
    // Not in any span, event or attribute: not in any byte sent.
    for r in &collector.requests {
        assert!(!contains(&r.body, PRINTED), "output left the node");
    }

    // The local trace has the same step.
    let local = s.output(&["trace", "steps", "--json"]);
    let rows: serde_json::Value = serde_json::from_slice(&local.stdout).unwrap();
    let id = rows.as_array().unwrap()[0]["id"].to_string();
    assert_eq!(attr(a, "corral.step.id"), Some(id));
}

#[test]
fn output_is_exported_when_asked_and_the_variables_choose_the_collector() {
    let s = Scratch::new();
    let mut collector = Collector::start();
    let out = s
        .corral(&["exec", "--otlp-output", "--yes", "--", "sh", "-c", PRINT])
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", &collector.url)
        .env("OTEL_SERVICE_NAME", "node-7")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    let spans = collector.spans_until(WAIT, |s| has(s, "corral exec"));
    let step = named(&spans, "corral exec")[0];
    // The text the model was shown, output included.
    let shown = attr(&step.attributes, "corral.output").expect("corral.output");
    assert!(shown.contains("[stdout]\nhidden-payload\n"), "{shown}");
    assert_eq!(
        attr(&collector.resource(), "service.name").as_deref(),
        Some("node-7")
    );
}

#[test]
fn a_refusal_is_an_event_on_its_step() {
    let s = Scratch::new();
    let mut collector = Collector::start();
    let out = s.output(&[
        "exec",
        "--otlp",
        &collector.url,
        "--deny",
        "rm*",
        "--",
        "rm",
        "-f",
        "nothing",
    ]);
    assert_eq!(out.status.code(), Some(123), "{}", text(&out.stderr));
    let spans = collector.spans_until(WAIT, |s| has(s, "corral exec"));
    let step = named(&spans, "corral exec")[0];
    assert_eq!(
        attr(&step.attributes, "corral.outcome").as_deref(),
        Some("refused")
    );
    let policy = step
        .events
        .iter()
        .find(|e| e.name == "corral.policy")
        .expect("a policy event on the step");
    assert_eq!(
        attr(&policy.attributes, "corral.policy.decision").as_deref(),
        Some("refused")
    );
    assert_eq!(
        attr(&policy.attributes, "corral.policy.rule").as_deref(),
        Some("rm*")
    );
    assert!(
        attr(&policy.attributes, "corral.policy.target")
            .unwrap()
            .starts_with("rm -f")
    );
}

#[test]
fn a_collector_that_is_down_costs_one_line_and_no_call() {
    let s = Scratch::new();
    // A port nobody listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}");
    let out = s.output(&[
        "exec",
        "--otlp",
        &url,
        "--yes",
        "--",
        "sh",
        "-c",
        "echo ran; exit 4",
    ]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{err}");
    assert_eq!(out.stdout, b"ran\n");
    assert_eq!(
        err.matches("OTLP export").count(),
        1,
        "one line says the export failed:\n{err}"
    );
    assert!(
        err.contains(&format!("127.0.0.1:{port}/v1/traces")),
        "{err}"
    );
    // The local record is whole.
    let local = s.output(&["trace", "steps", "--json"]);
    let rows: serde_json::Value = serde_json::from_slice(&local.stdout).unwrap();
    assert_eq!(rows[0]["exit_code"], 4);
}

#[test]
fn a_bad_endpoint_or_protocol_is_refused_with_what_to_give() {
    let s = Scratch::new();
    let out = s.output(&["exec", "--otlp", "localhost:4318", "--", "true"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("http://localhost:4318"));
    let out = s
        .corral(&["exec", "--otlp", "http://127.0.0.1:9", "--", "true"])
        .env("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("http/protobuf"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_handle_is_a_child_of_the_step_that_started_it() {
    let mut collector = Collector::start();
    let url = collector.url.clone();
    let session =
        mcp_common::Session::start_with(Some(mcp_common::PERMISSIVE), None, &["--otlp", &url])
            .await;
    let started = session
        .call("shell_start", json!({"line": "sleep 30"}))
        .await;
    assert_eq!(
        started.is_error,
        Some(false),
        "{}",
        mcp_common::text(&started)
    );
    let handle = mcp_common::field(&started, "handle").as_u64().unwrap();
    let killed = session.call("shell_kill", json!({"handle": handle})).await;
    assert_eq!(
        killed.is_error,
        Some(false),
        "{}",
        mcp_common::text(&killed)
    );
    session.client.cancel().await.unwrap();

    let spans = tokio::task::spawn_blocking(move || {
        collector.spans_until(WAIT, |s| {
            has(s, "corral handle") && has(s, "corral shell_start") && has(s, "corral run")
        })
    })
    .await
    .unwrap();
    let run = named(&spans, "corral run")[0];
    let start = named(&spans, "corral shell_start")[0];
    let h = named(&spans, "corral handle")[0];
    assert_eq!(start.parent_span_id, run.span_id);
    assert_eq!(h.parent_span_id, start.span_id);
    assert_eq!(h.trace_id, run.trace_id);
    assert_eq!(
        attr(&h.attributes, "corral.line").as_deref(),
        Some("sleep 30")
    );
    assert_eq!(
        attr(&h.attributes, "corral.handle.id"),
        Some(handle.to_string())
    );
    assert_eq!(
        attr(&h.attributes, "corral.handle.how").as_deref(),
        Some("killed")
    );
    // The kill is a step of the same run.
    assert!(
        named(&spans, "corral shell_kill")
            .iter()
            .all(|k| k.parent_span_id == run.span_id)
    );
}

/// The bearer token the server below is started with.
const TOKEN: &str = "otlp-export-test-token-0123456789abcdef";

/// One HTTP/1.1 request to `/mcp` with the test's token, the connection closed after it:
/// the status, the lowercased head and the body.
fn post(addr: &str, session: Option<&str>, body: &str) -> (u16, String, String) {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(WAIT)).unwrap();
    let session = session
        .map(|s| format!("Mcp-Session-Id: {s}\r\n"))
        .unwrap_or_default();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nAuthorization: Bearer {TOKEN}\r\n\
         Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
         {session}Content-Length: {}\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(head.as_bytes()).unwrap();
    let mut response = String::new();
    let _ = stream.read_to_string(&mut response);
    let (head, body) = response.split_once("\r\n\r\n").unwrap_or((&response, ""));
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    (status, head.to_ascii_lowercase(), body.to_string())
}

/// Over Streamable HTTP each MCP session is a run, so each is a trace of its own.
#[test]
fn each_http_session_is_a_trace_of_its_own() {
    let mut collector = Collector::start();
    let dir = mcp_common::scratch(Some(mcp_common::PERMISSIVE));
    let mut server = Command::new(mcp_common::corral_bin())
        .args(["mcp", "--workspace"])
        .arg(dir.path().join("ws"))
        .args(["--listen", "127.0.0.1:0", "--otlp", &collector.url])
        .env("CORRAL_STORE", mcp_common::store(dir.path()))
        .env("CORRAL_TRUST_STORE", mcp_common::trust_store(dir.path()))
        .env_remove("CORRAL_POLICY")
        .env("CORRAL_MCP_TOKEN", TOKEN)
        .env("XDG_CONFIG_HOME", dir.path().join("config"))
        .env("XDG_CACHE_HOME", dir.path().join("cache"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut log = String::new();
    let mut lines = BufReader::new(server.stderr.take().unwrap()).lines();
    // The address comes first, where spans go among the lines after it.
    let mut addr = None;
    while addr.is_none() || !log.contains("corral mcp: spans to") {
        let line = lines
            .next()
            .expect("corral mcp said where it listens and where spans go")
            .unwrap();
        log.push_str(&line);
        log.push('\n');
        if let Some(url) = line.strip_prefix("corral mcp: listening on http://") {
            addr = Some(url.strip_suffix("/mcp").unwrap().to_string());
        }
    }
    let addr = addr.unwrap();
    assert!(
        log.contains(&format!("corral mcp: spans to {}/v1/traces", collector.url)),
        "{log}"
    );
    for word in ["first", "second"] {
        let (status, head, body) = post(&addr, None, &mcp_raw::initialize(1));
        assert_eq!(status, 200, "{head}{body}");
        let id = head
            .lines()
            .find_map(|l| l.strip_prefix("mcp-session-id: "))
            .unwrap()
            .trim()
            .to_string();
        let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        assert_eq!(post(&addr, Some(&id), initialized).0, 202);
        let (status, _, body) = post(&addr, Some(&id), &mcp_raw::echo(2, word));
        assert_eq!(status, 200, "{body}");
        assert!(body.contains(word), "{body}");
    }
    // SIGTERM ends both sessions, closes their runs and flushes the spans.
    let status = Command::new("kill")
        .args(["-TERM", &server.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    for line in lines.map_while(Result::ok) {
        log.push_str(&line);
        log.push('\n');
    }
    assert!(server.wait().unwrap().success(), "{log}");

    let spans = collector.spans_until(WAIT, |s| {
        named(s, "corral run").len() == 2 && named(s, "corral exec").len() == 2
    });
    let runs = named(&spans, "corral run");
    assert_ne!(runs[0].trace_id, runs[1].trace_id);
    for run in runs {
        let steps: Vec<_> = named(&spans, "corral exec")
            .into_iter()
            .filter(|s| s.trace_id == run.trace_id)
            .collect();
        assert_eq!(steps.len(), 1, "one step in each session's trace");
        assert_eq!(steps[0].parent_span_id, run.span_id);
        // Ended by its run's own end, as the local trace records it, not by the flush.
        assert_eq!(
            attr(&run.attributes, "corral.run.ended_how").as_deref(),
            Some("closed"),
            "{:?}",
            run.attributes
        );
        assert_eq!(attr(&run.attributes, "corral.unfinished"), None);
    }
}

/// A task run: its model turns are spans under the run beside its steps, with their
/// provider and model, and without the request or the response.
#[test]
fn a_task_runs_model_turns_are_spans_of_its_trace() {
    let s = Scratch::new();
    task_common::failing_repo(&s.workspace());
    let path = s.dir.path().join("script.jsonl");
    let lines: Vec<String> = task_common::fixing_script()
        .iter()
        .map(|calls| {
            let calls: Vec<_> = calls
                .iter()
                .map(|(name, args)| json!({"name": name, "arguments": args}))
                .collect();
            json!({"tool_calls": calls}).to_string()
        })
        .collect();
    std::fs::write(&path, lines.join("\n")).unwrap();
    let model = format!("script:{}", path.display());
    let mut collector = Collector::start();
    let out = s.output(&[
        "run",
        "fix the failing test",
        "--verify",
        "sh test.sh",
        "--model",
        &model,
        "--yes",
        "--otlp",
        &collector.url,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let turns = lines.len();
    let spans = collector.spans_until(WAIT, |s| {
        has(s, "corral run") && s.iter().filter(|s| s.name.starts_with("chat ")).count() == turns
    });
    let run = named(&spans, "corral run")[0];
    for turn in spans.iter().filter(|s| s.name.starts_with("chat ")) {
        assert_eq!(turn.parent_span_id, run.span_id);
        assert_eq!(
            attr(&turn.attributes, "gen_ai.provider.name").as_deref(),
            Some("script")
        );
    }
    assert!(has(&spans, "corral read_file"), "{:?}", otlp::names(&spans));
    assert!(
        has(&spans, "corral apply_patch"),
        "{:?}",
        otlp::names(&spans)
    );
    // What the failing test printed (its sum, computed, is in no call) reached the model
    // and the local trace, not the collector: neither a step's output nor a model request.
    for r in &collector.requests {
        assert!(!contains(&r.body, b"= -1,"), "command output left the node");
    }
}
