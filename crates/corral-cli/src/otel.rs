//! `--otlp`: the trace's records as OpenTelemetry spans, for the commands that run things.
//! Built with the `otlp` feature (on by default); the library itself never links OTel.

use crate::exit::BadRequest;

/// What keeps exporting until the command is done; dropping it flushes.
#[cfg(feature = "otlp")]
pub type Guard = Option<corral_otel::Exporter>;
#[cfg(not(feature = "otlp"))]
pub type Guard = NoExport;

/// Built without the `otlp` feature: nothing to flush.
#[cfg(not(feature = "otlp"))]
#[derive(Debug)]
pub struct NoExport;

/// End what is open and flush (a few seconds at most).
#[cfg(feature = "otlp")]
pub fn finish(guard: Guard) {
    if let Some(exporter) = guard {
        exporter.finish();
    }
}

#[cfg(not(feature = "otlp"))]
pub fn finish(_guard: Guard) {}

/// Start exporting when `--otlp` or the `OTEL_EXPORTER_OTLP_*` variables ask for it.
#[cfg(feature = "otlp")]
pub fn start(endpoint: Option<String>, output: bool) -> anyhow::Result<Guard> {
    let settings = corral_otel::Settings { endpoint, output };
    corral_otel::Exporter::start(&settings).map_err(|e| match e {
        corral_otel::OtelError::Endpoint(_) | corral_otel::OtelError::Protocol { .. } => {
            BadRequest(e.to_string()).into()
        }
        e => anyhow::Error::new(e),
    })
}

#[cfg(not(feature = "otlp"))]
pub fn start(endpoint: Option<String>, _output: bool) -> anyhow::Result<Guard> {
    match endpoint {
        Some(_) => Err(BadRequest(
            "--otlp: this corral was built without OTLP export; rebuild with the `otlp` feature"
                .into(),
        )
        .into()),
        None => Ok(NoExport),
    }
}
