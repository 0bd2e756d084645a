//! One POST with retries: backoff on 429 and 5xx (honouring `Retry-After`), a timeout per
//! request, and errors that name the provider, the status and the body.

use std::io::Read;
use std::time::Duration;

use crate::task::model::{ModelError, ModelErrorKind};

/// How a provider talks HTTP.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpSettings {
    /// The most one request may take, connection to last byte (default 10 minutes).
    pub timeout: Duration,
    /// Retries after a 429, a 5xx or a failed connection (default 4).
    pub retries: u32,
    /// The first backoff; it doubles each retry, up to 30 s (default 1 s).
    pub backoff: Duration,
    /// Ask for a streamed answer (server-sent events) and read it as it comes.
    pub stream: bool,
}

impl Default for HttpSettings {
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(600),
            retries: 4,
            backoff: Duration::from_secs(1),
            stream: false,
        }
    }
}

/// The body of a successful response.
pub(crate) enum Body {
    /// The whole body, read.
    Whole(String),
    /// A reader over a streamed body.
    Stream(Box<dyn Read + Send>),
}

/// The bytes of a response body kept for an error message.
const ERROR_BODY: usize = 2000;

pub(crate) fn post(
    provider: &str,
    settings: &HttpSettings,
    url: &str,
    headers: &[(&str, String)],
    body: &str,
) -> Result<Body, ModelError> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(settings.timeout))
        .http_status_as_error(false)
        .build()
        .into();
    let mut attempt = 0u32;
    loop {
        let mut request = agent.post(url).header("content-type", "application/json");
        for (name, value) in headers {
            request = request.header(*name, value);
        }
        let failure = match request.send(body) {
            Ok(mut response) => {
                let status = response.status().as_u16();
                if (200..300).contains(&status) {
                    if settings.stream {
                        let reader = response.into_body().into_reader();
                        return Ok(Body::Stream(Box::new(reader)));
                    }
                    return response
                        .body_mut()
                        .with_config()
                        .limit(64 << 20)
                        .read_to_string()
                        .map(Body::Whole)
                        .map_err(|e| transport(provider, url, e));
                }
                let retry_after = response
                    .headers()
                    .get("retry-after")
                    .and_then(|v| v.to_str().ok())
                    .and_then(|v| v.trim().parse::<u64>().ok())
                    .map(Duration::from_secs);
                let text = response
                    .body_mut()
                    .with_config()
                    .limit(1 << 20)
                    .read_to_string()
                    .unwrap_or_default();
                let error = status_error(provider, url, status, &text);
                if status == 429 || status >= 500 {
                    (error, retry_after)
                } else {
                    return Err(error);
                }
            }
            Err(e) => (transport(provider, url, e), None),
        };
        let (error, retry_after) = failure;
        if attempt >= settings.retries || error.kind == ModelErrorKind::Timeout {
            let mut error = error;
            if attempt > 0 {
                error.message.push_str(&format!(
                    " (after {} attempt{})",
                    attempt + 1,
                    if attempt == 0 { "" } else { "s" }
                ));
            }
            return Err(error);
        }
        let backoff = settings
            .backoff
            .saturating_mul(1 << attempt.min(16))
            .min(Duration::from_secs(30));
        std::thread::sleep(retry_after.unwrap_or(backoff).min(Duration::from_secs(60)));
        attempt += 1;
    }
}

fn status_error(provider: &str, url: &str, status: u16, body: &str) -> ModelError {
    let kind = match status {
        401 | 403 => ModelErrorKind::Auth,
        429 | 500..=599 => ModelErrorKind::Unavailable,
        _ => ModelErrorKind::BadRequest,
    };
    let hint = match kind {
        ModelErrorKind::Auth => ": check the API key in the environment",
        ModelErrorKind::BadRequest => ": check the model name and the base URL",
        _ => "",
    };
    let mut body = body.trim().to_string();
    if body.len() > ERROR_BODY {
        let cut = body.floor_char_boundary(ERROR_BODY);
        body.truncate(cut);
        body.push('…');
    }
    ModelError {
        kind,
        provider: provider.into(),
        status: Some(status),
        message: if body.is_empty() {
            format!("{provider} answered HTTP {status} from {url}, with no body{hint}")
        } else {
            format!("{provider} answered HTTP {status} from {url}{hint}: {body}")
        },
    }
}

fn transport(provider: &str, url: &str, e: ureq::Error) -> ModelError {
    let kind = match &e {
        ureq::Error::Timeout(_) => ModelErrorKind::Timeout,
        ureq::Error::Io(io) if io.kind() == std::io::ErrorKind::TimedOut => ModelErrorKind::Timeout,
        _ => ModelErrorKind::Transport,
    };
    let message = match kind {
        ModelErrorKind::Timeout => format!(
            "{provider} did not answer {url} within the request timeout ({e}): try again, or raise the timeout"
        ),
        _ => format!("{provider} could not be reached at {url}: {e}"),
    };
    ModelError {
        kind,
        provider: provider.into(),
        status: None,
        message,
    }
}

/// How much of a body that cannot be read its error shows: enough to tell an HTML error
/// page, a proxy's banner or a truncated JSON document apart.
const MALFORMED_PREFIX: usize = 300;

/// A 200 whose body is not what the provider should send: the error names the provider,
/// the status and what the body begins with (control characters escaped, so a binary or
/// HTML body stays one readable line).
pub(crate) fn malformed(provider: &str, what: impl std::fmt::Display, body: &str) -> ModelError {
    let trimmed = body.trim_start();
    let cut = trimmed.floor_char_boundary(MALFORMED_PREFIX);
    let mut begins: String = trimmed[..cut].escape_debug().collect();
    if cut < trimmed.len() {
        begins.push('…');
    }
    let (size, begins) = if trimmed.is_empty() {
        ("an empty body".to_string(), String::new())
    } else {
        (
            format!("a body of {} bytes", body.len()),
            format!(" It begins: \"{begins}\""),
        )
    };
    ModelError {
        kind: ModelErrorKind::Malformed,
        provider: provider.into(),
        status: Some(200),
        message: format!(
            "{provider} answered HTTP 200 with {size} corral cannot read ({what}).{begins} \
             Check that the base URL points at the provider's API, not at a web page or a proxy."
        ),
    }
}

/// The `data:` payloads of a server-sent event stream, in order, up to `[DONE]`.
pub(crate) fn sse_events(
    provider: &str,
    reader: Box<dyn Read + Send>,
) -> Result<Vec<String>, ModelError> {
    use std::io::BufRead;
    let mut events = Vec::new();
    let mut data = String::new();
    for line in std::io::BufReader::new(reader).lines() {
        let line = line.map_err(|e| ModelError {
            kind: if e.kind() == std::io::ErrorKind::TimedOut {
                ModelErrorKind::Timeout
            } else {
                ModelErrorKind::Transport
            },
            provider: provider.into(),
            status: Some(200),
            message: format!("{provider}'s stream broke off: {e}"),
        })?;
        if line.is_empty() {
            if !data.is_empty() {
                if data.trim() == "[DONE]" {
                    return Ok(events);
                }
                events.push(std::mem::take(&mut data));
            }
            continue;
        }
        if let Some(rest) = line.strip_prefix("data:") {
            if !data.is_empty() {
                data.push('\n');
            }
            data.push_str(rest.strip_prefix(' ').unwrap_or(rest));
        }
    }
    if !data.is_empty() && data.trim() != "[DONE]" {
        events.push(data);
    }
    Ok(events)
}
