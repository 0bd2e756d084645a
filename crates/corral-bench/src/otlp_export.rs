//! `--otlp`'s cost to a call: `Run::exec(["true"])` with the trace on, without the exporter
//! (the baseline) and with every record turned into spans and posted to an OTLP/HTTP
//! receiver on 127.0.0.1 that decodes them. The observer is process-wide and stays once
//! installed, so each side runs in a child of the bench, in 6 alternating blocks of 200
//! calls (after 20 to warm up), and the samples are pooled here. Also: every span
//! arrived (goal: none dropped).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use corral::{ExecRequest, Run};
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use prost::Message;

use crate::stats::{micros, summarize};

const ROUNDS: usize = 200;
const WARM: usize = 20;
const BLOCKS: usize = 6;
/// Set in a child: which side of the comparison it runs.
const PHASE: &str = "CORRAL_BENCH_OTLP_SIDE";

/// A receiver that counts the spans it decodes.
fn receiver(spans: Arc<AtomicUsize>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(conn) = conn else { return };
            let spans = spans.clone();
            std::thread::spawn(move || {
                let mut reader = BufReader::new(conn.try_clone().unwrap());
                let mut conn = conn;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    let mut length = 0;
                    loop {
                        line.clear();
                        if reader.read_line(&mut line).unwrap_or(0) == 0 {
                            return;
                        }
                        if line.trim_end().is_empty() {
                            break;
                        }
                        if let Some((k, v)) = line.split_once(':')
                            && k.eq_ignore_ascii_case("content-length")
                        {
                            length = v.trim().parse().unwrap();
                        }
                    }
                    let mut body = vec![0; length];
                    reader.read_exact(&mut body).unwrap();
                    let n: usize = ExportTraceServiceRequest::decode(body.as_slice())
                        .unwrap()
                        .resource_spans
                        .iter()
                        .flat_map(|r| &r.scope_spans)
                        .map(|s| s.spans.len())
                        .sum();
                    spans.fetch_add(n, Ordering::Relaxed);
                    let reply = "HTTP/1.1 200 OK\r\ncontent-type: application/x-protobuf\r\ncontent-length: 0\r\n\r\n";
                    if conn.write_all(reply.as_bytes()).is_err() {
                        return;
                    }
                }
            });
        }
    });
    url
}

fn phase(dir: &std::path::Path) -> (Vec<Duration>, String) {
    let run = Run::builder(dir)
        .store(dir.join("trace.db"))
        .policy(corral::Policy::permissive())
        .open()
        .unwrap();
    let request = ExecRequest::new(["true"]);
    for _ in 0..WARM {
        run.exec(&request).unwrap();
    }
    let mut samples = Vec::with_capacity(ROUNDS);
    let mut containment = String::new();
    for _ in 0..ROUNDS {
        let t = Instant::now();
        let outcome = run.exec(&request).unwrap();
        samples.push(t.elapsed());
        assert!(outcome.status.success());
        containment = outcome.containment.to_string();
    }
    run.close().unwrap();
    (samples, containment)
}

/// One block, in this (child) process: `export` installs the exporter first.
fn child(kind: &str) {
    let dir = tempfile::tempdir().unwrap();
    let spans = Arc::new(AtomicUsize::new(0));
    let exporter = (kind == "export").then(|| {
        let url = receiver(spans.clone());
        corral_otel::Exporter::start(&corral_otel::Settings {
            endpoint: Some(url),
            output: false,
        })
        .unwrap()
        .expect("an endpoint was given")
    });
    let (samples, containment) = phase(dir.path());
    let flush = Instant::now();
    if let Some(exporter) = exporter {
        exporter.finish();
    }
    let flush = flush.elapsed();
    let us: Vec<String> = samples.iter().map(|d| d.as_nanos().to_string()).collect();
    println!("containment {containment}");
    println!("spans {}", spans.load(Ordering::Relaxed));
    println!("flush_ns {}", flush.as_nanos());
    println!("samples_ns {}", us.join(","));
}

pub fn run() {
    if let Ok(kind) = std::env::var(PHASE) {
        child(&kind);
        return;
    }
    let exe = std::env::current_exe().unwrap();
    let mut baseline = Vec::new();
    let mut exported = Vec::new();
    let (mut containment, mut spans, mut flush_max) = (String::new(), 0usize, 0u128);
    // Alternating blocks, so the machine's drift falls on both sides alike.
    for _ in 0..BLOCKS {
        for kind in ["baseline", "export"] {
            let out = std::process::Command::new(&exe)
                .arg("otlp-export")
                .env(PHASE, kind)
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            let text = String::from_utf8(out.stdout).unwrap();
            for line in text.lines() {
                let (key, value) = line.split_once(' ').unwrap_or((line, ""));
                match key {
                    "containment" => containment = value.to_string(),
                    "spans" => spans += value.parse::<usize>().unwrap(),
                    "flush_ns" if kind == "export" => {
                        flush_max = flush_max.max(value.parse().unwrap())
                    }
                    "samples_ns" => {
                        let into = if kind == "export" {
                            &mut exported
                        } else {
                            &mut baseline
                        };
                        into.extend(
                            value
                                .split(',')
                                .map(|n| Duration::from_nanos(n.parse().unwrap())),
                        );
                    }
                    _ => {}
                }
            }
        }
    }
    let b = summarize(&mut baseline);
    let x = summarize(&mut exported);
    println!(
        "{BLOCKS} alternating blocks of {ROUNDS} calls each way ({} per side); containment {containment}",
        BLOCKS * ROUNDS
    );
    println!(
        "{:<40} median {:8.1} µs          p95 {:8.1} µs",
        "Run::exec(true), trace only",
        micros(b.median),
        micros(b.p95)
    );
    println!(
        "{:<40} median {:8.1} µs ({:.2}x)   p95 {:8.1} µs ({:.2}x)",
        "Run::exec(true), trace + OTLP export",
        micros(x.median),
        micros(x.median) / micros(b.median),
        micros(x.p95),
        micros(x.p95) / micros(b.p95)
    );
    // Per block: a run span and a step span per call, warm-up included.
    let expected = BLOCKS * (1 + WARM + ROUNDS);
    println!(
        "spans received {spans} of {expected} (goal: all); slowest final flush {:.1} ms",
        flush_max as f64 / 1e6
    );
    println!("goal: export/trace-only <= 1.05x");
}
