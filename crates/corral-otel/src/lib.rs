//! corral's traces off the node: the trace's records exported as OpenTelemetry spans over
//! OTLP/HTTP, so one collector (Jaeger, Tempo, Langfuse, Phoenix, an OpenTelemetry
//! Collector) gathers the runs of many machines. SQLite stays the local, always-on record;
//! this is a copy.
//!
//! # Theory of operation
//!
//! [`Exporter::start`] installs an observer in `corral-trace` (see
//! `corral_trace::Observer`): every record the process's trace stores write is, after the
//! write, turned into span operations in memory. A run is a root span (one trace per
//! run), each step a child span of its run, a background handle a child of the step that
//! started it, a task run's model turns children of the run; policy decisions and sandbox
//! layers are span events on their step. An ended span goes to the SDK's batch processor:
//! a bounded queue (4096 spans by default, `OTEL_BSP_MAX_QUEUE_SIZE`) drained by its own
//! thread, which posts batches to the collector. A call never waits on the network: a full
//! queue drops spans, a failing collector costs one line on stderr (the first failure),
//! and the local trace is untouched either way. [`Exporter::finish`] ends what is still
//! open (marked `corral.unfinished`) and flushes for at most a few seconds.
//!
//! # What a span holds
//!
//! Steps: `corral.tool`, `corral.call` (the request as the model made it), `corral.argv`,
//! `corral.cwd`, `corral.outcome`, `process.exit.code`, `corral.signal`,
//! `corral.timed_out`, `corral.wall_ms`, `corral.stdout_bytes`, `corral.stderr_bytes`,
//! `corral.containment`, `corral.sandbox.mode`, `corral.sandbox.network`,
//! `corral.sandbox.layers` (`layer:level`), `corral.error`; events `corral.policy` (act,
//! target, effect, rule, layer, origin, decision, answered_by, reason) and
//! `corral.sandbox`. Handles: `corral.handle.id`, `corral.line`, `corral.argv`,
//! `corral.containment`, `corral.handle.how`, `process.exit.code`. Model turns:
//! `gen_ai.provider.name`, `gen_ai.request.model`, `gen_ai.usage.*`. Strings are cut at
//! 4 KiB.
//!
//! No command output leaves the node unless asked ([`Settings::output`], `--otlp-output`):
//! output can hold secrets and is the bulk of a trace. Asked, a step carries
//! `corral.output`, the text the model was shown (cut at 4 KiB).
//!
//! # Configuration
//!
//! An endpoint given in [`Settings::endpoint`] is the collector's OTLP/HTTP base URL
//! (`http://collector:4318`, spans going to `/v1/traces`; a URL already ending in
//! `/v1/traces` is used as is). Without one the standard variables decide:
//! `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` or `OTEL_EXPORTER_OTLP_ENDPOINT` turn export on;
//! `OTEL_EXPORTER_OTLP_[TRACES_]PROTOCOL` picks `http/protobuf` (default) or `http/json`
//! (`grpc` is refused: use the collector's HTTP port); `OTEL_EXPORTER_OTLP_[TRACES_]HEADERS`
//! adds headers (an API key); `OTEL_SERVICE_NAME` and `OTEL_RESOURCE_ATTRIBUTES` name the
//! node; `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none` turn it off. The HTTP
//! client is ureq over rustls: `https://` endpoints need no OpenSSL.

#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod client;
mod report;
mod spans;

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use opentelemetry::KeyValue;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{Protocol, WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::{BatchConfigBuilder, BatchSpanProcessor, SdkTracerProvider};

/// How long one export may take, and the flush at the end.
const EXPORT_TIMEOUT: Duration = Duration::from_secs(5);

/// What to export where.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Settings {
    /// The collector's OTLP/HTTP URL; `None`: the `OTEL_EXPORTER_OTLP_*` variables decide.
    pub endpoint: Option<String>,
    /// Put the text the model was shown in step spans.
    pub output: bool,
}

/// Why export could not start.
#[derive(Debug, thiserror::Error)]
pub enum OtelError {
    /// The endpoint is not an `http://` or `https://` URL.
    #[error(
        "{0:?} is not an OTLP/HTTP URL; give the collector's HTTP endpoint, e.g. http://localhost:4318"
    )]
    Endpoint(String),
    /// A protocol other than OTLP over HTTP was asked for.
    #[error(
        "{var}={value:?}: corral exports OTLP over HTTP only; set it to http/protobuf or http/json and use the collector's HTTP port (4318)"
    )]
    Protocol {
        /// The variable that named it.
        var: &'static str,
        /// What it said.
        value: String,
    },
    /// The SDK would not build the exporter.
    #[error("the OTLP exporter could not be built: {0}")]
    Build(String),
    /// This process already exports.
    #[error("an OTLP exporter is already installed in this process")]
    AlreadyInstalled,
}

/// A running exporter; [`Exporter::finish`] (or dropping it) flushes.
#[derive(Debug)]
pub struct Exporter {
    provider: SdkTracerProvider,
    spans: Arc<spans::Spans>,
    endpoint: String,
    protocol: &'static str,
    output: bool,
    finished: bool,
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// `base` as a traces URL: `/v1/traces` appended unless it is there.
fn traces_url(base: &str) -> String {
    let base = base.trim();
    if base.trim_end_matches('/').ends_with("/v1/traces") {
        base.to_string()
    } else {
        format!("{}/v1/traces", base.trim_end_matches('/'))
    }
}

fn protocol() -> Result<Protocol, OtelError> {
    for var in [
        "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
        "OTEL_EXPORTER_OTLP_PROTOCOL",
    ] {
        if let Some(value) = env(var) {
            return match value.trim() {
                "http/protobuf" => Ok(Protocol::HttpBinary),
                "http/json" => Ok(Protocol::HttpJson),
                _ => Err(OtelError::Protocol { var, value }),
            };
        }
    }
    Ok(Protocol::HttpBinary)
}

fn resource() -> Resource {
    let mut b = Resource::builder();
    if env("OTEL_SERVICE_NAME").is_none() {
        b = b.with_service_name("corral");
    }
    b = b.with_attribute(KeyValue::new("service.version", env!("CARGO_PKG_VERSION")));
    if let Ok(host) = std::fs::read_to_string("/proc/sys/kernel/hostname") {
        b = b.with_attribute(KeyValue::new("host.name", host.trim().to_string()));
    }
    b.build()
}

impl Exporter {
    /// Start exporting, when `settings` or the environment ask for it (`Ok(None)` when
    /// neither does). At most once per process.
    pub fn start(settings: &Settings) -> Result<Option<Exporter>, OtelError> {
        let endpoint = match &settings.endpoint {
            Some(url) => {
                let u = url.trim();
                if !(u.starts_with("http://") || u.starts_with("https://"))
                    || u.parse::<http::Uri>().is_err()
                {
                    return Err(OtelError::Endpoint(url.clone()));
                }
                Some(traces_url(u))
            }
            None => {
                let disabled = env("OTEL_SDK_DISABLED")
                    .is_some_and(|v| v.eq_ignore_ascii_case("true"))
                    || env("OTEL_TRACES_EXPORTER").is_some_and(|v| v.eq_ignore_ascii_case("none"));
                if disabled {
                    return Ok(None);
                }
                if env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT").is_none()
                    && env("OTEL_EXPORTER_OTLP_ENDPOINT").is_none()
                {
                    return Ok(None);
                }
                None
            }
        };
        let shown = match (&endpoint, env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")) {
            (Some(e), _) => e.clone(),
            (None, Some(e)) => e,
            (None, None) => traces_url(&env("OTEL_EXPORTER_OTLP_ENDPOINT").unwrap_or_default()),
        };
        let protocol = protocol()?;
        let mut builder = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_http_client(client::UreqClient::new(EXPORT_TIMEOUT))
            .with_protocol(protocol)
            .with_timeout(EXPORT_TIMEOUT);
        if let Some(e) = &endpoint {
            builder = builder.with_endpoint(e.clone());
        }
        let otlp = builder
            .build()
            .map_err(|e| OtelError::Build(e.to_string()))?;
        let exporter = report::ReportOnce::new(otlp, shown.clone());
        let mut batch = BatchConfigBuilder::default();
        if env("OTEL_BSP_MAX_QUEUE_SIZE").is_none() {
            batch = batch.with_max_queue_size(4096);
        }
        let batch = batch.build();
        let processor = BatchSpanProcessor::builder(exporter)
            .with_batch_config(batch)
            .build();
        let provider = SdkTracerProvider::builder()
            .with_span_processor(processor)
            .with_resource(resource())
            .build();
        let tracer = provider.tracer("corral");
        let spans = Arc::new(spans::Spans::new(tracer, settings.output));
        if corral_trace::set_observer(spans.clone()).is_err() {
            let _ = provider.shutdown_with_timeout(Duration::ZERO);
            return Err(OtelError::AlreadyInstalled);
        }
        Ok(Some(Exporter {
            provider,
            spans,
            endpoint: shown,
            protocol: match protocol {
                Protocol::HttpJson => "http/json",
                _ => "http/protobuf",
            },
            output: settings.output,
            finished: false,
        }))
    }

    /// Where spans go (the traces URL, as configured).
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// Where and how spans go, for a startup log.
    pub fn describe(&self) -> String {
        format!(
            "spans to {} over OTLP {}, {}",
            self.endpoint,
            self.protocol,
            if self.output {
                "with the output each step showed (--otlp-output)"
            } else {
                "without command output"
            }
        )
    }

    /// End every span still open and flush, waiting a few seconds at most.
    pub fn finish(mut self) {
        self.finish_inner();
    }

    fn finish_inner(&mut self) {
        if std::mem::replace(&mut self.finished, true) {
            return;
        }
        self.spans.end_all(SystemTime::now());
        // Failures were reported by the exporter; a timeout here only loses the copy.
        let _ = self.provider.shutdown_with_timeout(EXPORT_TIMEOUT);
    }
}

impl Drop for Exporter {
    fn drop(&mut self) {
        self.finish_inner();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_urls_get_the_traces_path_once() {
        assert_eq!(traces_url("http://c:4318"), "http://c:4318/v1/traces");
        assert_eq!(traces_url("http://c:4318/"), "http://c:4318/v1/traces");
        assert_eq!(
            traces_url("https://c/otlp/v1/traces"),
            "https://c/otlp/v1/traces"
        );
    }

    #[test]
    fn long_strings_are_cut_on_a_character_boundary() {
        let s = "é".repeat(spans::MAX_ATTRIBUTE);
        let c = spans::cut(&s);
        assert!(c.len() <= spans::MAX_ATTRIBUTE);
        assert!(c.ends_with('…'));
        assert_eq!(spans::cut("short"), "short");
    }
}
