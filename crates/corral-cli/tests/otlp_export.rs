//! `--otlp`: runs, steps, policy decisions, sandbox layers and handles reach a real
//! OTLP/HTTP receiver as spans with the right parents, and no command output leaves the
//! node unless asked; a collector that is down never fails a call.

mod common;
mod mcp_common;
mod otlp;

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
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
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
