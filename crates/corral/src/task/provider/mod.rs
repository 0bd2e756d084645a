//! Model providers over HTTP, and the `PROVIDER:MODEL` spelling that chooses one.

mod anthropic;
mod http;
mod openai;

pub use anthropic::Anthropic;
pub use http::HttpSettings;
pub use openai::OpenAiCompatible;

use super::model::{Model, ModelError, ModelErrorKind};
use super::script::ScriptedModel;

/// The model a spec names, its key and base URL from the environment:
/// `openai:NAME` (`OPENAI_BASE_URL`, `OPENAI_API_KEY`), `openrouter:NAME`
/// (`OPENROUTER_API_KEY`), `anthropic:NAME` (`ANTHROPIC_BASE_URL`, `ANTHROPIC_API_KEY`),
/// `script:FILE.jsonl` (a scripted model replaying the file).
pub fn model_from_spec(spec: &str, settings: HttpSettings) -> Result<Box<dyn Model>, ModelError> {
    let Some((provider, name)) = spec.split_once(':').filter(|(_, n)| !n.is_empty()) else {
        return Err(ModelError::new(
            ModelErrorKind::BadRequest,
            "corral",
            format!(
                "model {spec:?} names no provider: write PROVIDER:MODEL, e.g. openrouter:anthropic/claude-sonnet-4.5, \
                 openai:gpt-4.1, anthropic:claude-sonnet-4-5 or script:run.jsonl"
            ),
        ));
    };
    Ok(match provider {
        "openai" => Box::new(OpenAiCompatible::openai_from_env(name)?.with_settings(settings)),
        "openrouter" => {
            Box::new(OpenAiCompatible::openrouter_from_env(name)?.with_settings(settings))
        }
        "anthropic" => Box::new(Anthropic::from_env(name)?.with_settings(settings)),
        "script" => Box::new(ScriptedModel::from_file(std::path::Path::new(name))?),
        other => {
            return Err(ModelError::new(
                ModelErrorKind::BadRequest,
                "corral",
                format!(
                    "unknown model provider {other:?} in {spec:?}: use openai, openrouter, anthropic or script \
                     (any OpenAI-compatible server is openai: with OPENAI_BASE_URL)"
                ),
            ));
        }
    })
}

/// The base URL the environment variable `var` names (`OPENAI_BASE_URL`), else `default`;
/// one that is no `http://` or `https://` address is a bad request at once, not five
/// failed connections.
fn base_url(var: &str, provider: &str, default: &str) -> Result<String, ModelError> {
    checked_base_url(var, std::env::var(var).ok(), provider, default)
}

/// [`base_url`], given the variable's value.
fn checked_base_url(
    var: &str,
    value: Option<String>,
    provider: &str,
    default: &str,
) -> Result<String, ModelError> {
    let Some(url) = value.filter(|v| !v.trim().is_empty()) else {
        return Ok(default.to_string());
    };
    let url = url.trim().to_string();
    let scheme = url.split_once("://").map(|(s, _)| s.to_ascii_lowercase());
    let host = url.split_once("://").map_or("", |(_, rest)| rest);
    if !matches!(scheme.as_deref(), Some("http" | "https")) || host.is_empty() {
        return Err(ModelError::new(
            crate::task::ModelErrorKind::BadRequest,
            provider,
            format!(
                "{var} is {url:?}, which is no http:// or https:// address: give the server's \
                 base URL, e.g. http://127.0.0.1:8080/v1, or unset it for {default}"
            ),
        ));
    }
    Ok(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_base_url_is_an_http_address_or_a_bad_request() {
        let check = |v: Option<&str>| {
            checked_base_url(
                "X_BASE_URL",
                v.map(str::to_string),
                "x",
                "https://x.example/v1",
            )
        };
        assert_eq!(check(None).unwrap(), "https://x.example/v1");
        assert_eq!(check(Some("  ")).unwrap(), "https://x.example/v1");
        assert_eq!(
            check(Some(" http://127.0.0.1:8080/v1 ")).unwrap(),
            "http://127.0.0.1:8080/v1"
        );
        assert!(check(Some("HTTPS://api.example")).is_ok());
        for bad in ["notaurl", "ftp://x", "http://", "127.0.0.1:8080/v1"] {
            let err = check(Some(bad)).unwrap_err();
            assert_eq!(err.kind, crate::task::ModelErrorKind::BadRequest, "{bad}");
            assert!(err.message.contains("X_BASE_URL"), "{}", err.message);
        }
    }
}
