//! Which field of a known method's params does not fit it.
//!
//! rmcp reads a request whose params do not fit its method as a custom request and answers
//! it `-32601 Method not found`, which sends a client looking for a method that is there.
//! For the methods MCP defines, the params are read here as that method's own type, and
//! what does not fit is named by its path (`params.clientInfo.version`), so the answer can
//! be `-32602 Invalid params` saying exactly what to fix.
#![expect(
    deprecated,
    reason = "logging/setLevel (deprecated by SEP-2577) is answered on every revision"
)]

use rmcp::model::{
    CallToolRequestParams, CompleteRequestParams, GetPromptRequestParams, InitializeRequestParams,
    PaginatedRequestParams, ReadResourceRequestParams, SetLevelRequestParams,
    SubscribeRequestParams, UnsubscribeRequestParams,
};
use serde::de::DeserializeOwned;
use serde_json::Value;

/// What is wrong with `params` for `method`, one of MCP's own; `None` when `method` is
/// not one this server knows the params of, or they fit.
pub(crate) fn params_problem(method: &str, params: Option<&Value>) -> Option<String> {
    match method {
        "initialize" => fits::<InitializeRequestParams>(params, true),
        "logging/setLevel" => fits::<SetLevelRequestParams>(params, true),
        "tools/call" => fits::<CallToolRequestParams>(params, true),
        "tools/list" | "prompts/list" | "resources/list" | "resources/templates/list" => {
            fits::<PaginatedRequestParams>(params, false)
        }
        "resources/read" => fits::<ReadResourceRequestParams>(params, true),
        "resources/subscribe" => fits::<SubscribeRequestParams>(params, true),
        "resources/unsubscribe" => fits::<UnsubscribeRequestParams>(params, true),
        "prompts/get" => fits::<GetPromptRequestParams>(params, true),
        "completion/complete" => fits::<CompleteRequestParams>(params, true),
        _ => None,
    }
}

/// Whether `params` read as a `P`; what does not fit, by path, when they do not.
fn fits<P: DeserializeOwned>(params: Option<&Value>, required: bool) -> Option<String> {
    let Some(params) = params else {
        return required.then(|| "\"params\" is missing".to_string());
    };
    let error = serde_path_to_error::deserialize::<_, P>(params.clone()).err()?;
    let at = match error.path().to_string().as_str() {
        "." => "params".to_string(),
        path => format!("params.{path}"),
    };
    let inner = error.inner().to_string();
    // serde names a missing field from the object that lacks it.
    Some(match missing_field(&inner) {
        Some(field) => format!("\"{at}.{field}\" is missing"),
        None => format!("\"{at}\": {inner}"),
    })
}

fn missing_field(message: &str) -> Option<&str> {
    message.strip_prefix("missing field `")?.strip_suffix('`')
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_field_that_does_not_fit_is_named_by_its_path() {
        let problem = |method, params: Value| params_problem(method, Some(&params)).unwrap();
        assert!(
            problem("logging/setLevel", json!({"level": "loud"}))
                .starts_with("\"params.level\": unknown variant `loud`"),
        );
        assert_eq!(
            problem("tools/call", json!({"arguments": {}})),
            "\"params.name\" is missing"
        );
        assert_eq!(
            problem(
                "initialize",
                json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "x"}})
            ),
            "\"params.clientInfo.version\" is missing"
        );
        assert_eq!(
            problem(
                "initialize",
                json!({"protocolVersion": "2025-06-18", "clientInfo": {"name": "x", "version": "1"}})
            ),
            "\"params.capabilities\" is missing"
        );
        assert_eq!(
            params_problem("tools/call", None).unwrap(),
            "\"params\" is missing"
        );
    }

    #[test]
    fn fitting_params_and_other_methods_have_no_problem() {
        assert_eq!(
            params_problem("logging/setLevel", Some(&json!({"level": "warning"}))),
            None
        );
        assert_eq!(params_problem("tools/list", None), None);
        assert_eq!(params_problem("vendor/thing", Some(&json!(5))), None);
    }
}
