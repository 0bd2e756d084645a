//! `shell_keys`: named keys pressed on a handle's input.

use super::{Answers, Def, Group, ToolAnswer};
use crate::handle::KeysRequest;

/// The `shell_keys` tool.
pub(crate) static SHELL_KEYS: Def<KeysRequest> = Def {
    name: "shell_keys",
    group: Group::Commands,
    answers: Answers::Result,
    streams: false,
    description: |_| "Press keys; returns output as shell_write.",
    call: |run, request, _| Ok(ToolAnswer::Poll(run.shell_keys(&request)?)),
};
