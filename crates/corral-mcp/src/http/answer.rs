//! A request's answer as one JSON body when the answer is all there is to send.
//!
//! rmcp answers every request of a session with an SSE stream: a priming event (the id a
//! client resumes from), then the request's messages, then the stream's end as a chunk of
//! its own. For most calls the answer is the only message, and the client pays for the
//! stream: an event parser, and a connection it cannot reuse until the end arrives (the
//! official TypeScript client opens a new one for the next call meanwhile). Streamable
//! HTTP lets a server answer a request with `application/json` instead, so the front
//! reads rmcp's stream up to its first message:
//!
//! - the answer to the request (a result or an error with its id): it leaves as
//!   `application/json`, head and body in one write;
//! - anything else first (a progress notification, an elicitation, a log message, the
//!   keep-alive a long call gets every 15 s so proxies keep the connection): the stream
//!   goes on as SSE from its first byte, exactly as rmcp wrote it.
//!
//! A call that finishes quickly costs the client one JSON parse; a long or chatty one
//! streams as before.

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::{Bytes, BytesMut};
use http::{HeaderValue, Response, StatusCode, header};
use http_body_util::{BodyExt, Full};
use hyper::body::{Body as HttpBody, Frame, SizeHint};
use serde_json::Value;

use super::front::Body;

/// `response`, rmcp's answer to the request whose id is `id`, as JSON when its stream's
/// first message is that request's answer; otherwise the stream as rmcp wrote it.
pub(crate) async fn settle(response: Response<Body>, id: &Value) -> Response<Body> {
    if response.status() != StatusCode::OK || !is_event_stream(response.headers()) {
        return response;
    }
    let (mut parts, mut body) = response.into_parts();
    let mut read = BytesMut::new();
    let mut events = Events::default();
    while let Some(frame) = body.frame().await {
        let Ok(data) = frame.unwrap_or_else(|never| match never {}).into_data() else {
            continue;
        };
        read.extend_from_slice(&data);
        while let Some(event) = events.next(&read) {
            match event.kind(id) {
                Kind::Empty => {}
                Kind::Answer(message) => {
                    parts.headers.insert(
                        header::CONTENT_TYPE,
                        HeaderValue::from_static("application/json"),
                    );
                    parts.headers.remove(header::CACHE_CONTROL);
                    parts.headers.remove("x-accel-buffering");
                    return Response::from_parts(parts, Full::new(message).boxed());
                }
                Kind::Other => return replayed(parts, read.freeze(), body),
            }
        }
    }
    // The stream ended without an answer: the client gets what there was.
    replayed(parts, read.freeze(), body)
}

fn is_event_stream(headers: &http::HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.split(';')
                .next()
                .is_some_and(|essence| essence.trim().eq_ignore_ascii_case("text/event-stream"))
        })
}

fn replayed(parts: http::response::Parts, read: Bytes, rest: Body) -> Response<Body> {
    Response::from_parts(
        parts,
        Replay {
            head: (!read.is_empty()).then_some(read),
            rest,
        }
        .boxed(),
    )
}

/// What was read of a stream, then the rest of it.
struct Replay {
    head: Option<Bytes>,
    rest: Body,
}

impl HttpBody for Replay {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        if let Some(head) = self.head.take() {
            return Poll::Ready(Some(Ok(Frame::data(head))));
        }
        Pin::new(&mut self.rest).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.head.is_none() && self.rest.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        let mut hint = self.rest.size_hint();
        if let Some(head) = &self.head {
            let len = head.len() as u64;
            hint.set_lower(hint.lower() + len);
            if let Some(upper) = hint.upper() {
                hint.set_upper(upper + len);
            }
        }
        hint
    }
}

/// The events of an SSE stream read so far, one at a time (the WHATWG format: lines
/// ending in `\n`, `\r\n` or `\r`; an empty line ends an event).
#[derive(Debug, Default)]
struct Events {
    /// Where the next line starts.
    at: usize,
    data: Option<Vec<u8>>,
    /// Whether the event so far has a field.
    fields: bool,
    /// Whether the event so far has a comment.
    comments: bool,
}

/// One whole event.
#[derive(Debug, PartialEq)]
struct Event {
    /// Its `data` lines joined with `\n`; `None` when it had none.
    data: Option<Vec<u8>>,
    /// Comments and no field: the keep-alive.
    keep_alive: bool,
}

#[derive(Debug, PartialEq)]
enum Kind {
    /// No data: the priming event (an id and a retry time), or a stray blank line.
    Empty,
    /// The request's answer: the JSON-RPC message.
    Answer(Bytes),
    /// Anything else: a notification, a request of the server's, a keep-alive.
    Other,
}

impl Events {
    /// The next whole event in `read` (all that was read so far), if one has ended.
    fn next(&mut self, read: &[u8]) -> Option<Event> {
        loop {
            let rest = &read[self.at..];
            let end = rest.iter().position(|&b| b == b'\n' || b == b'\r')?;
            let mut next = end + 1;
            if rest[end] == b'\r' {
                match rest.get(end + 1) {
                    Some(b'\n') => next += 1,
                    Some(_) => {}
                    // A `\r` last: its `\n` may be in the next read.
                    None => return None,
                }
            }
            let line = &rest[..end];
            self.at += next;
            if line.is_empty() {
                let event = Event {
                    data: self.data.take(),
                    keep_alive: self.comments && !self.fields,
                };
                self.fields = false;
                self.comments = false;
                return Some(event);
            }
            if line[0] == b':' {
                self.comments = true;
                continue;
            }
            self.fields = true;
            let (name, value) = match line.iter().position(|&b| b == b':') {
                Some(colon) => {
                    let value = &line[colon + 1..];
                    (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
                }
                None => (line, &[][..]),
            };
            if name == b"data" {
                match &mut self.data {
                    Some(data) => {
                        data.push(b'\n');
                        data.extend_from_slice(value);
                    }
                    None => self.data = Some(value.to_vec()),
                }
            }
        }
    }
}

impl Event {
    fn kind(self, id: &Value) -> Kind {
        if self.keep_alive {
            return Kind::Other;
        }
        let data = match self.data {
            Some(data) if !data.is_empty() => data,
            _ => return Kind::Empty,
        };
        let answers = serde_json::from_slice::<Value>(&data).is_ok_and(|message| {
            message.get("id") == Some(id)
                && message.get("method").is_none()
                && (message.get("result").is_some() || message.get("error").is_some())
        });
        if answers {
            Kind::Answer(Bytes::from(data))
        } else {
            Kind::Other
        }
    }
}

#[cfg(test)]
mod tests;
