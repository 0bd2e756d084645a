//! Providers over HTTP: errors name the provider, the status and the body; 429 and 5xx
//! are retried with backoff; a slow answer ends at its timeout; a body that is not the
//! provider's shape is an error that shows it.

use crate::task_common;

use std::time::Duration;

use corral::task::{
    Anthropic, HttpSettings, Message, Model, ModelErrorKind, ModelRequest, OpenAiCompatible,
};
use task_common::*;

fn settings(timeout: Duration) -> HttpSettings {
    HttpSettings {
        timeout,
        retries: 2,
        backoff: Duration::from_millis(10),
        stream: false,
    }
}

fn request() -> ModelRequest {
    ModelRequest {
        system: "be brief".into(),
        messages: vec![Message::User {
            content: "hi".into(),
        }],
        tools: vec![],
        max_tokens: 100,
    }
}

/// Both providers, pointed at `server`.
fn models(server: &Server, timeout: Duration) -> Vec<Box<dyn Model>> {
    vec![
        Box::new(
            OpenAiCompatible::new(
                "openai",
                format!("{}/v1", server.base),
                Some("k".into()),
                "m",
            )
            .with_settings(settings(timeout)),
        ),
        Box::new(Anthropic::new(&server.base, "k", "m").with_settings(settings(timeout))),
    ]
}

/// `check` each provider against a server answering `replies(provider)`.
fn each_provider(replies: impl Fn(&str) -> Vec<Reply>, check: impl Fn(&str, &Server, &dyn Model)) {
    for (i, provider) in ["openai", "anthropic"].into_iter().enumerate() {
        let server = Server::start(replies(provider));
        let model = models(&server, Duration::from_secs(30)).remove(i);
        check(model.provider(), &server, model.as_ref());
    }
}

#[test]
fn unauthorized_names_the_provider_status_and_body() {
    each_provider(
        |_| vec![Reply::raw(401, r#"{"error":"invalid x-api-key"}"#)],
        |provider, server, model| {
            let err = model.complete(&request()).unwrap_err();
            assert_eq!(err.kind, ModelErrorKind::Auth);
            assert_eq!(err.status, Some(401));
            assert!(
                err.message
                    .starts_with(&format!("{provider} answered HTTP 401")),
                "{err}"
            );
            assert!(err.message.contains("check the API key"), "{err}");
            assert!(err.message.contains("invalid x-api-key"), "{err}");
            assert_eq!(server.received().len(), 1, "a 401 is not retried");
        },
    );
}

#[test]
fn rate_limited_then_answered() {
    each_provider(
        |provider| {
            let answer = match provider {
                "openai" => openai(Some("hello"), &[]),
                _ => anthropic(Some("hello"), &[]),
            };
            vec![
                Reply::raw(429, r#"{"error":"slow down"}"#).header("retry-after", "0"),
                Reply::json(answer),
            ]
        },
        |_, server, model| {
            let answer = model.complete(&request()).unwrap();
            assert_eq!(answer.text.as_deref(), Some("hello"));
            assert_eq!(answer.usage.input_tokens, 120);
            assert_eq!(server.received().len(), 2);
        },
    );
}

#[test]
fn server_errors_are_retried_then_reported() {
    each_provider(
        |_| {
            (0..3)
                .map(|_| Reply::raw(500, "upstream exploded"))
                .collect()
        },
        |provider, server, model| {
            let err = model.complete(&request()).unwrap_err();
            assert_eq!(err.kind, ModelErrorKind::Unavailable);
            assert_eq!(err.status, Some(500));
            assert!(
                err.message
                    .contains(&format!("{provider} answered HTTP 500")),
                "{err}"
            );
            assert!(err.message.contains("upstream exploded"), "{err}");
            assert!(err.message.ends_with("(after 3 attempts)"), "{err}");
            assert_eq!(server.received().len(), 3);
        },
    );
}

#[test]
fn malformed_json_is_an_error_that_shows_it() {
    each_provider(
        |_| vec![Reply::raw(200, "<html>gateway</html>")],
        |provider, _, model| {
            let err = model.complete(&request()).unwrap_err();
            assert_eq!(err.kind, ModelErrorKind::Malformed);
            assert!(
                err.message.starts_with(&format!(
                    "{provider} answered HTTP 200 with a body of 20 bytes"
                )),
                "{err}"
            );
            assert!(
                err.message.contains("begins: \"<html>gateway</html>\""),
                "{err}"
            );
            assert!(err.message.contains("base URL"), "{err}");
        },
    );
}

#[test]
fn a_long_page_in_place_of_an_answer_shows_its_first_bytes_on_one_line() {
    let page = format!(
        "<!DOCTYPE html>\n<title>Sign in</title>\n{}",
        "x".repeat(5000)
    );
    each_provider(
        |_| vec![Reply::raw(200, &page)],
        |provider, _, model| {
            let err = model.complete(&request()).unwrap_err();
            assert_eq!(err.kind, ModelErrorKind::Malformed);
            assert_eq!(err.status, Some(200));
            assert!(
                err.message
                    .starts_with(&format!("{provider} answered HTTP 200")),
                "{err}"
            );
            assert!(
                err.message.contains(&format!("{} bytes", page.len())),
                "{err}"
            );
            assert!(
                err.message.contains("<!DOCTYPE html>\\n<title>Sign in"),
                "{err}"
            );
            assert!(!err.message.contains('\n'), "one line: {err}");
            assert!(
                err.message.len() < 700,
                "{} bytes: {err}",
                err.message.len()
            );
        },
    );
}

#[test]
fn a_slow_answer_ends_at_its_timeout_without_a_retry() {
    for i in 0..2 {
        let server = Server::start(vec![
            Reply::json(openai(Some("late"), &[])).after(Duration::from_secs(3)),
        ]);
        let model = models(&server, Duration::from_millis(300)).remove(i);
        let err = model.complete(&request()).unwrap_err();
        assert_eq!(err.kind, ModelErrorKind::Timeout, "{err}");
        assert!(err.message.contains("did not answer"), "{err}");
        assert_eq!(server.received().len(), 1);
    }
}

#[test]
fn model_specs_choose_the_provider_and_say_what_is_missing() {
    let err = corral::task::model_from_spec("gpt-4", HttpSettings::default()).unwrap_err();
    assert!(err.message.contains("PROVIDER:MODEL"), "{err}");
    let err = corral::task::model_from_spec("bard:x", HttpSettings::default()).unwrap_err();
    assert!(err.message.contains("unknown model provider"), "{err}");
    let err = corral::task::model_from_spec("script:/nonexistent.jsonl", HttpSettings::default())
        .unwrap_err();
    assert!(err.message.contains("/nonexistent.jsonl"), "{err}");
}
