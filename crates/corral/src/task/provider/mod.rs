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
