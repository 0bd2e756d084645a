//! `shell_write`: text typed into a handle's input.

use super::{Answers, Def, Group, ToolAnswer};
use crate::handle::WriteRequest;

/// The `shell_write` tool.
pub(crate) static SHELL_WRITE: Def<WriteRequest> = Def {
    name: "shell_write",
    group: Group::Commands,
    answers: Answers::Result,
    streams: false,
    description: |_| "Type into a handle; returns what it printed back.",
    call: |run, request, _| Ok(ToolAnswer::Poll(run.shell_write(&request)?)),
};
