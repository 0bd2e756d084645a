//! A real OTLP/HTTP receiver on 127.0.0.1: it accepts `POST /v1/traces` as a collector
//! does (HTTP/1.1, keep-alive, protobuf or JSON bodies), decodes each protobuf request with
//! the protocol's own messages and hands it to the test.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::time::{Duration, Instant};

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue, any_value};
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message;

/// One request as received.
#[derive(Debug, Clone)]
pub struct Received {
    pub path: String,
    pub content_type: String,
    pub body: Vec<u8>,
}

#[derive(Debug)]
pub struct Collector {
    pub url: String,
    rx: Receiver<Received>,
    pub requests: Vec<Received>,
}

impl Collector {
    pub fn start() -> Collector {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(conn) = conn else { return };
                let tx = tx.clone();
                std::thread::spawn(move || serve(conn, tx));
            }
        });
        Collector {
            url,
            rx,
            requests: Vec::new(),
        }
    }

    /// Wait (up to `limit`) until the spans received so far satisfy `done`; returns them.
    pub fn spans_until(&mut self, limit: Duration, done: impl Fn(&[Span]) -> bool) -> Vec<Span> {
        let deadline = Instant::now() + limit;
        loop {
            let spans = self.spans();
            if done(&spans) {
                return spans;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            match self.rx.recv_timeout(left) {
                Ok(r) => self.requests.push(r),
                Err(_) => panic!(
                    "the collector did not get the expected spans; it got: {:#?}",
                    names(&spans)
                ),
            }
        }
    }

    /// Every span of every protobuf request received so far.
    pub fn spans(&self) -> Vec<Span> {
        self.requests
            .iter()
            .filter(|r| r.content_type == "application/x-protobuf")
            .flat_map(|r| {
                ExportTraceServiceRequest::decode(r.body.as_slice())
                    .expect("a protobuf ExportTraceServiceRequest")
                    .resource_spans
            })
            .flat_map(|rs| rs.scope_spans)
            .flat_map(|ss| ss.spans)
            .collect()
    }

    /// The resource attributes of the first request.
    pub fn resource(&self) -> Vec<KeyValue> {
        let r = &self.requests[0];
        ExportTraceServiceRequest::decode(r.body.as_slice())
            .unwrap()
            .resource_spans[0]
            .resource
            .clone()
            .unwrap()
            .attributes
    }
}

pub fn names(spans: &[Span]) -> Vec<(String, Vec<String>)> {
    spans
        .iter()
        .map(|s| {
            (
                s.name.clone(),
                s.attributes.iter().map(|a| a.key.clone()).collect(),
            )
        })
        .collect()
}

/// A string, integer or boolean attribute's value as text.
pub fn attr(attrs: &[KeyValue], key: &str) -> Option<String> {
    let v = attrs.iter().find(|a| a.key == key)?.value.as_ref()?;
    Some(show(v))
}

fn show(v: &AnyValue) -> String {
    match v.value.as_ref() {
        Some(any_value::Value::StringValue(s)) => s.clone(),
        Some(any_value::Value::IntValue(i)) => i.to_string(),
        Some(any_value::Value::BoolValue(b)) => b.to_string(),
        Some(any_value::Value::DoubleValue(d)) => d.to_string(),
        Some(any_value::Value::ArrayValue(a)) => {
            a.values.iter().map(show).collect::<Vec<_>>().join(",")
        }
        other => format!("{other:?}"),
    }
}

fn serve(conn: TcpStream, tx: Sender<Received>) {
    let mut reader = BufReader::new(conn.try_clone().unwrap());
    let mut conn = conn;
    loop {
        let mut request_line = String::new();
        if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
            return;
        }
        let path = request_line
            .split_whitespace()
            .nth(1)
            .unwrap_or("")
            .to_string();
        let mut length = 0usize;
        let mut content_type = String::new();
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            let (name, value) = line.split_once(':').unwrap_or((line, ""));
            match name.to_ascii_lowercase().as_str() {
                "content-length" => length = value.trim().parse().unwrap(),
                "content-type" => content_type = value.trim().to_string(),
                _ => {}
            }
        }
        let mut body = vec![0; length];
        reader.read_exact(&mut body).unwrap();
        let reply = ExportTraceServiceResponse::default_bytes();
        let head = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/x-protobuf\r\ncontent-length: {}\r\n\r\n",
            reply.len()
        );
        if conn.write_all(head.as_bytes()).is_err() || conn.write_all(&reply).is_err() {
            return;
        }
        let _ = tx.send(Received {
            path,
            content_type,
            body,
        });
    }
}

struct ExportTraceServiceResponse;

impl ExportTraceServiceResponse {
    fn default_bytes() -> Vec<u8> {
        opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceResponse::default()
            .encode_to_vec()
    }
}
