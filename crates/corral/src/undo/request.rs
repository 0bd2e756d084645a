//! What a model sends the `undo` tool (offered only with `corral mcp --undo-tool`).

use serde::{Deserialize, Serialize};

/// Put back the files a call of this run changed: restores what it modified or
/// deleted, removes what it created; refused, naming them, where files changed since.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UndoRequest {
    /// The step to undo (a result's `step`); default the last one that changed files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<i64>,
    /// List what would change back, and change nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dry_run: Option<bool>,
}
