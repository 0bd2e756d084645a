//! Export failures, said once: the first failure of a process is printed on stderr with
//! the endpoint, the rest are counted silently. The local trace holds every span's rows,
//! so nothing is lost but the copy.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::trace::{SpanData, SpanExporter};

/// Wraps the OTLP exporter: never fails louder than one line.
#[derive(Debug)]
pub(crate) struct ReportOnce<E> {
    inner: E,
    endpoint: String,
    reported: AtomicBool,
    failed_batches: AtomicU64,
}

impl<E> ReportOnce<E> {
    pub(crate) fn new(inner: E, endpoint: String) -> ReportOnce<E> {
        ReportOnce {
            inner,
            endpoint,
            reported: AtomicBool::new(false),
            failed_batches: AtomicU64::new(0),
        }
    }
}

impl<E: SpanExporter> SpanExporter for ReportOnce<E> {
    async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
        let n = batch.len();
        let result = self.inner.export(batch).await;
        if let Err(e) = &result {
            self.failed_batches.fetch_add(1, Ordering::Relaxed);
            if !self.reported.swap(true, Ordering::Relaxed) {
                eprintln!(
                    "corral: OTLP export to {} failed ({n} spans dropped): {e}; the local trace \
                     keeps every record, and later export failures are not reported",
                    self.endpoint
                );
            }
        }
        result
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.inner.shutdown_with_timeout(timeout)
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.inner.force_flush()
    }

    fn set_resource(&mut self, resource: &opentelemetry_sdk::Resource) {
        self.inner.set_resource(resource);
    }
}
