use std::collections::VecDeque;

use serde_json::json;

use super::*;

/// A body that yields `frames` one at a time, as rmcp's stream does.
struct Frames(VecDeque<Bytes>);

impl HttpBody for Frames {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        Poll::Ready(self.0.pop_front().map(|b| Ok(Frame::data(b))))
    }
}

fn sse(frames: &[&str]) -> Response<Body> {
    Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, "text/event-stream")
        .header(header::CACHE_CONTROL, "no-cache")
        .header("mcp-session-id", "s1")
        .body(Frames(frames.iter().map(|f| Bytes::from(f.to_string())).collect()).boxed())
        .unwrap()
}

async fn settled(frames: &[&str], id: Value) -> (http::response::Parts, String) {
    let (parts, body) = settle(sse(frames), &id).await.into_parts();
    let bytes = body.collect().await.unwrap().to_bytes();
    (parts, String::from_utf8(bytes.to_vec()).unwrap())
}

const PRIMING: &str = "data: \nid: 0/9\nretry: 3000\n\n";
const ANSWER: &str = r#"{"jsonrpc":"2.0","id":7,"result":{"content":[]}}"#;

fn content_type(parts: &http::response::Parts) -> &str {
    parts.headers[header::CONTENT_TYPE].to_str().unwrap()
}

#[tokio::test]
async fn an_answer_that_comes_first_is_sent_as_json() {
    let answer = format!("data: {ANSWER}\nid: 0/10\n\n");
    let (parts, body) = settled(&[PRIMING, &answer], json!(7)).await;
    assert_eq!(content_type(&parts), "application/json");
    assert_eq!(parts.headers["mcp-session-id"], "s1");
    assert!(parts.headers.get(header::CACHE_CONTROL).is_none());
    assert_eq!(body, ANSWER);
}

#[tokio::test]
async fn an_answer_split_across_reads_with_crlf_lines_is_found() {
    let (parts, body) = settled(
        &[
            "data:\r\nid: 0/1\r",
            "\n\r\ndata: {\"jsonrpc\":\"2.0\",",
            "\"id\":\"a\",\"error\":{\"code\":1,\"message\":\"no\"}}\r\n\r\n",
        ],
        json!("a"),
    )
    .await;
    assert_eq!(content_type(&parts), "application/json");
    assert_eq!(
        body,
        r#"{"jsonrpc":"2.0","id":"a","error":{"code":1,"message":"no"}}"#
    );
}

#[tokio::test]
async fn anything_before_the_answer_keeps_the_stream_byte_for_byte() {
    let progress = "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":0.5}}\nid: 0/10\n\n";
    let elicit =
        "data: {\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"elicitation/create\",\"params\":{}}\n\n";
    let keep_alive = ":ping\n\n";
    let answer = format!("data: {ANSWER}\nid: 0/11\n\n");
    for first in [progress, elicit, keep_alive] {
        let frames = [PRIMING, first, &answer];
        let (parts, body) = settled(&frames, json!(7)).await;
        assert_eq!(content_type(&parts), "text/event-stream", "{first}");
        assert_eq!(parts.headers[header::CACHE_CONTROL], "no-cache");
        assert_eq!(body, frames.concat());
    }
}

#[tokio::test]
async fn another_requests_answer_or_a_stream_that_ends_early_is_left_as_it_was() {
    let other = r#"data: {"jsonrpc":"2.0","id":8,"result":{}}"#.to_string() + "\n\n";
    let (parts, body) = settled(&[PRIMING, &other], json!(7)).await;
    assert_eq!(content_type(&parts), "text/event-stream");
    assert_eq!(body, format!("{PRIMING}{other}"));

    let (parts, body) = settled(&[PRIMING], json!(7)).await;
    assert_eq!(content_type(&parts), "text/event-stream");
    assert_eq!(body, PRIMING);
}

#[tokio::test]
async fn an_answer_that_is_not_a_stream_passes_untouched() {
    let plain = Response::builder()
        .status(StatusCode::ACCEPTED)
        .body(Full::new(Bytes::new()).boxed())
        .unwrap();
    let settled = settle(plain, &json!(1)).await;
    assert_eq!(settled.status(), StatusCode::ACCEPTED);
}

#[test]
fn multi_line_data_is_joined_with_newlines() {
    let mut events = Events::default();
    let read = b"data: {\"id\":1,\ndata: \"result\":{}}\n\n";
    let event = events.next(read).unwrap();
    assert_eq!(
        event.data.as_deref(),
        Some(&b"{\"id\":1,\n\"result\":{}}"[..])
    );
    assert!(matches!(event.kind(&json!(1)), Kind::Answer(_)));
    assert!(events.next(read).is_none());
}
