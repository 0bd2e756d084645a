//! What every HTTP request passes before rmcp's Streamable HTTP service sees it, in order:
//!
//! 1. The path: MCP is served at `/mcp`; anything else is `404`.
//! 2. The bearer token, always: a token in the URL's query is `400` (it would land in
//!    logs and histories); a missing or wrong one in `Authorization` is `401` with
//!    `WWW-Authenticate: Bearer` whose `error_description` says what to send (clients
//!    show that, not the body), compared in constant time, before anything else is read.
//! 3. A `POST` body is read up to the message limit. One over it is `413` with a JSON-RPC
//!    error naming the limit (and the request's `id` when its start shows it); one that is
//!    not an MCP message gets the JSON-RPC answer [`crate::jsonrpc`] gives over stdio, as
//!    `400` (or `202` with no body for a notification, which gets no answer).
//! 4. A `DELETE` of a session that is not live (ended, expired, never opened) is `404`,
//!    as for any request naming it; rmcp would say `202`.
//! 5. A request without `Mcp-Session-Id` must be `initialize`: each session is one run,
//!    and the sessionless 2026-07-28 revision is not offered. At `--max-sessions` live
//!    sessions a new one is refused with `503`.
//!
//! rmcp's answer to a request is then sent as JSON when its stream would carry only that
//! answer ([`super::answer`]).
//!
//! `Host` and `Origin` are checked by rmcp against the lists [`super::serve`] gives it.

use std::sync::Arc;

use bytes::Bytes;
use http::{HeaderValue, Method, Request, Response, StatusCode, header};
use http_body_util::{BodyExt, Full, combinators::BoxBody};
use hyper::body::Incoming;
use rmcp::model::{ClientRequest, JsonRpcMessage};
use rmcp::transport::streamable_http_server::StreamableHttpService;
use rmcp::transport::streamable_http_server::session::SessionManager;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use serde_json::Value;
use subtle::ConstantTimeEq;
use tower_service::Service;

use super::sessions::Sessions;
use crate::jsonrpc::{self, INVALID_REQUEST, Verdict};
use crate::server::CorralServer;

pub(crate) type Body = BoxBody<Bytes, std::convert::Infallible>;

/// The path MCP is served at.
pub const MCP_PATH: &str = "/mcp";

/// JSON-RPC's implementation-defined server error, for a refused new session.
const SERVER_BUSY: i64 = -32000;

pub(crate) struct Front {
    pub rmcp: StreamableHttpService<CorralServer, LocalSessionManager>,
    /// rmcp's sessions, to tell a `DELETE` of one that is gone (`404`).
    pub manager: Arc<LocalSessionManager>,
    pub sessions: Arc<Sessions>,
    pub token: String,
    pub max_message: usize,
    pub max_sessions: usize,
}

impl Front {
    pub(crate) async fn handle(&self, request: Request<Incoming>) -> Response<Body> {
        if request.uri().path() != MCP_PATH {
            return text(
                StatusCode::NOT_FOUND,
                format!("corral serves MCP at {MCP_PATH}; point the client there"),
            );
        }
        // One host, named once: a second `Host`, or an authority in the request line,
        // could name another than the one checked.
        if request.uri().authority().is_some()
            || request.headers().get_all(header::HOST).iter().count() > 1
        {
            return text(
                StatusCode::BAD_REQUEST,
                format!(
                    "send one Host header and the path alone in the request line (POST {MCP_PATH} HTTP/1.1)"
                ),
            );
        }
        if let Some(refused) = in_the_url(request.uri()) {
            return refused;
        }
        if let Some(refused) = refusal(request.headers(), &self.token) {
            return refused;
        }
        if request.method() != Method::POST {
            let delete = request.method() == Method::DELETE;
            let session = session_id(request.headers());
            // A request: the session is not idle now.
            if let Some(id) = session.as_ref().filter(|_| !delete) {
                drop(self.sessions.busy(id));
            }
            if delete
                && let Some(id) = &session
                && !self
                    .manager
                    .has_session(&id.as_str().into())
                    .await
                    .unwrap_or(false)
            {
                return text(
                    StatusCode::NOT_FOUND,
                    format!(
                        "no session {id} here: it ended (deleted, idle past --idle-timeout, or the server restarted) \
                         or never existed; there is nothing to delete, and a new session starts with initialize"
                    ),
                );
            }
            let mut response = self
                .rmcp
                .clone()
                .call(request)
                .await
                .unwrap_or_else(|e| match e {});
            // rmcp ends the session at once but says 202; clients read 200 or 204 as done.
            if delete && response.status() == StatusCode::ACCEPTED {
                *response.status_mut() = StatusCode::NO_CONTENT;
            }
            if delete
                && response.status().is_success()
                && let Some(id) = session
            {
                self.sessions.ended(&id);
            }
            return response;
        }
        let (parts, body) = request.into_parts();
        let declared = parts
            .headers
            .get(hyper::header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
        let bytes = match declared {
            // Refused once its start is read, for the id it shows.
            Some(n) if n > self.max_message as u64 => {
                let head = read_head(body, ID_WITHIN).await;
                return too_large(jsonrpc::leading_id(&head), self.max_message);
            }
            _ => match read_bounded(body, self.max_message).await {
                Ok(bytes) => bytes,
                Err(response) => return *response,
            },
        };
        if bytes.iter().all(u8::is_ascii_whitespace) {
            let answer = jsonrpc::error_line(
                None,
                jsonrpc::PARSE_ERROR,
                "the request body is empty: POST one JSON-RPC message",
                None,
                true,
            );
            return json_response(StatusCode::BAD_REQUEST, answer);
        }
        let message = match jsonrpc::classify(&bytes, true) {
            Verdict::Forward(message) => message,
            Verdict::Answer(answer) => return json_response(StatusCode::BAD_REQUEST, answer),
            Verdict::Drop(_) => return empty(StatusCode::ACCEPTED),
        };
        if !parts.headers.contains_key("mcp-session-id") {
            let id = match &*message {
                JsonRpcMessage::Request(request) => {
                    if !matches!(request.request, ClientRequest::InitializeRequest(_)) {
                        return error(
                            StatusCode::BAD_REQUEST,
                            Some(request.id.clone().into_json_value()),
                            INVALID_REQUEST,
                            "no Mcp-Session-Id header: send initialize first and then the session id it returns; \
                             each session is one run, and the sessionless 2026-07-28 revision is not offered over HTTP",
                        );
                    }
                    request.id.clone().into_json_value()
                }
                _ => {
                    return error(
                        StatusCode::BAD_REQUEST,
                        None,
                        INVALID_REQUEST,
                        "no Mcp-Session-Id header: send initialize first and then the session id it returns",
                    );
                }
            };
            if self.sessions.live() >= self.max_sessions {
                eprintln!(
                    "corral mcp: refused a new session: {} are live (--max-sessions)",
                    self.max_sessions
                );
                let mut busy = error(
                    StatusCode::SERVICE_UNAVAILABLE,
                    Some(id),
                    SERVER_BUSY,
                    &format!(
                        "this server already serves its limit of {} sessions; close one (DELETE /mcp with its Mcp-Session-Id), \
                         wait for an idle one to time out, or start it with a larger --max-sessions",
                        self.max_sessions
                    ),
                );
                busy.headers_mut()
                    .insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
                return busy;
            }
        }
        let opens = !parts.headers.contains_key("mcp-session-id");
        let session = session_id(&parts.headers);
        let id = match &*message {
            JsonRpcMessage::Request(request) => Some(request.id.clone().into_json_value()),
            _ => None,
        };
        let request = Request::from_parts(parts, Full::new(bytes));
        let answer = async {
            let response = self
                .rmcp
                .clone()
                .call(request)
                .await
                .unwrap_or_else(|e| match e {});
            match &id {
                Some(id) => super::answer::settle(response, id).await,
                None => response,
            }
        };
        if opens {
            self.sessions
                .opening(answer, |response| session_id(response.headers()))
                .await
        } else {
            // Busy until its answer has been sent, however long the call takes.
            let busy = match (&session, &id) {
                (Some(session), Some(request)) => {
                    match self.sessions.answering(session, &request.to_string()) {
                        Some(busy) => Some(busy),
                        None => {
                            return error(
                                StatusCode::BAD_REQUEST,
                                Some(request.clone()),
                                INVALID_REQUEST,
                                "a request with this id is still being answered in this session: \
                                 give each request an id of its own (this one was not run)",
                            );
                        }
                    }
                }
                (Some(session), None) => Some(self.sessions.busy(session)),
                _ => None,
            };
            let response = answer.await;
            response.map(|inner| Held { inner, _busy: busy }.boxed())
        }
    }
}

/// An answer's body holding its session busy until it has been sent (or dropped), its
/// size and end told as the body's own (a body of known size goes with `Content-Length`).
struct Held {
    inner: Body,
    _busy: Option<super::sessions::Busy>,
}

impl hyper::body::Body for Held {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<hyper::body::Frame<Bytes>, Self::Error>>> {
        std::pin::Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        self.inner.size_hint()
    }
}

/// The `Mcp-Session-Id` a request or an answer carries.
fn session_id(headers: &http::HeaderMap) -> Option<String> {
    headers
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
}

/// A query naming a token (`?access_token=`, `?token=`, RFC 6750's URI form) is refused,
/// right or wrong: the URL is written to logs, histories and `Referer`, so a token there is
/// never accepted.
fn in_the_url(uri: &http::Uri) -> Option<Response<Body>> {
    let query = uri.query()?;
    let names_a_token = query.split('&').any(|pair| {
        let name = pair.split_once('=').map_or(pair, |(name, _)| name);
        name.to_ascii_lowercase().contains("token")
    });
    names_a_token.then(|| {
        text(
            StatusCode::BAD_REQUEST,
            format!(
                "a token in the URL is never accepted (URLs are logged): request {MCP_PATH} with no query and send Authorization: Bearer TOKEN"
            ),
        )
    })
}

/// Check `Authorization: Bearer TOKEN`: the refusal when it is missing or wrong.
fn refusal(headers: &http::HeaderMap, token: &str) -> Option<Response<Body>> {
    let presented = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            let (scheme, rest) = v.split_once(' ')?;
            scheme.eq_ignore_ascii_case("bearer").then(|| rest.trim())
        });
    let (error, why) = match presented {
        None => (
            None,
            "this server needs a bearer token: send Authorization: Bearer TOKEN, with the token it was started with (--token-file or CORRAL_MCP_TOKEN)",
        ),
        Some(given) if bool::from(given.as_bytes().ct_eq(token.as_bytes())) => return None,
        Some(_) => (
            Some("invalid_token"),
            "the bearer token is not this server's: send the token it was started with (--token-file or CORRAL_MCP_TOKEN)",
        ),
    };
    // Clients show the challenge, not a 401's body: the explanation goes in both
    // (RFC 6750's error_description, which holds no quote or backslash).
    let challenge = match error {
        Some(error) => {
            format!(r#"Bearer realm="corral mcp", error="{error}", error_description="{why}""#)
        }
        None => format!(r#"Bearer realm="corral mcp", error_description="{why}""#),
    };
    let mut refused = text(StatusCode::UNAUTHORIZED, why.to_string());
    refused.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        HeaderValue::from_str(&challenge).expect("the challenge is visible ASCII"),
    );
    Some(refused)
}

/// How long a request body may go without a byte before the request is dropped.
const BODY_STALL: std::time::Duration = std::time::Duration::from_secs(30);

/// How much of a body declared too large is read, for the `id` at its start.
const ID_WITHIN: usize = 4096;

/// Up to `n` bytes of `body`'s start: what came before it ended, stalled or failed.
async fn read_head(mut body: Incoming, n: usize) -> Vec<u8> {
    let mut head = Vec::new();
    while head.len() < n {
        let Ok(Some(Ok(frame))) = tokio::time::timeout(BODY_STALL, body.frame()).await else {
            break;
        };
        if let Ok(data) = frame.into_data() {
            head.extend_from_slice(&data[..data.len().min(n - head.len())]);
        }
    }
    head
}

/// The answer to a message over `limit` bytes, with its `id` where its start shows it.
fn too_large(id: Option<Value>, limit: usize) -> Response<Body> {
    eprintln!(
        "corral mcp: refused a message of more than {limit} bytes (id {})",
        id.as_ref().map_or("unreadable".into(), Value::to_string)
    );
    let mut answer = jsonrpc::too_large_line(id, limit, true);
    answer.shrink_to_fit();
    json_response(StatusCode::PAYLOAD_TOO_LARGE, answer)
}

/// The body, or the answer to one over `limit` bytes, or to one that stalls.
async fn read_bounded(mut body: Incoming, limit: usize) -> Result<Bytes, Box<Response<Body>>> {
    let mut collected = Vec::new();
    loop {
        let Ok(frame) = tokio::time::timeout(BODY_STALL, body.frame()).await else {
            return Err(Box::new(text(
                StatusCode::REQUEST_TIMEOUT,
                format!(
                    "the request body stalled: no byte came for {} s; send the whole body at once",
                    BODY_STALL.as_secs()
                ),
            )));
        };
        let Some(frame) = frame else { break };
        let frame = frame.map_err(|e| {
            Box::new(text(
                StatusCode::BAD_REQUEST,
                format!("the request body could not be read: {e}"),
            ))
        })?;
        let Ok(data) = frame.into_data() else {
            continue;
        };
        if collected.len() + data.len() > limit {
            collected.extend_from_slice(&data[..limit - collected.len()]);
            let id = jsonrpc::leading_id(&collected);
            return Err(Box::new(too_large(id, limit)));
        }
        collected.extend_from_slice(&data);
    }
    Ok(Bytes::from(collected))
}

fn error(status: StatusCode, id: Option<Value>, code: i64, message: &str) -> Response<Body> {
    json_response(status, jsonrpc::error_line(id, code, message, None, true))
}

fn json_response(status: StatusCode, body: Vec<u8>) -> Response<Body> {
    Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, "application/json")
        .body(Full::new(Bytes::from(body)).boxed())
        .expect("a valid response")
}

fn text(status: StatusCode, body: String) -> Response<Body> {
    Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, "text/plain; charset=utf-8")
        .body(Full::new(Bytes::from(body)).boxed())
        .expect("a valid response")
}

fn empty(status: StatusCode) -> Response<Body> {
    Response::builder()
        .status(status)
        .body(Full::new(Bytes::new()).boxed())
        .expect("a valid response")
}
