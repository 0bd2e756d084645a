//! The exporter's HTTP client: ureq over rustls (ring), blocking, on the batch
//! processor's own thread, so a slow or absent collector delays only that thread.

use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response};
use opentelemetry_http::{HttpClient, HttpError};

/// A collector's reply larger than this is cut (OTLP replies are a few bytes).
const MAX_REPLY: u64 = 1 << 20;

/// A blocking OTLP/HTTP client with a whole-request timeout.
#[derive(Debug)]
pub(crate) struct UreqClient {
    agent: ureq::Agent,
}

impl UreqClient {
    pub(crate) fn new(timeout: Duration) -> UreqClient {
        let agent = ureq::Agent::config_builder()
            .timeout_global(Some(timeout))
            // A 4xx or 5xx is the exporter's to read (it retries some), not a transport error.
            .http_status_as_error(false)
            .build()
            .into();
        UreqClient { agent }
    }
}

#[async_trait::async_trait]
impl HttpClient for UreqClient {
    async fn send_bytes(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
        let (parts, body) = request.into_parts();
        let request = Request::from_parts(parts, body.to_vec());
        let response = self.agent.run(request)?;
        let (parts, mut body) = response.into_parts();
        let bytes = body.with_config().limit(MAX_REPLY).read_to_vec()?;
        Ok(Response::from_parts(parts, Bytes::from(bytes)))
    }
}
