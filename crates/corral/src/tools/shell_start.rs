//! `shell_start`: a line in the background, as a handle.

use super::{Answers, Def, Group, ToolAnswer};
use crate::handle::StartRequest;

/// The `shell_start` tool.
pub(crate) static SHELL_START: Def<StartRequest> = Def {
    name: "shell_start",
    group: Group::Commands,
    answers: Answers::Result,
    streams: false,
    description: |_| "Start a line in the background; returns a handle to poll or kill.",
    call: |run, request, _| Ok(ToolAnswer::Started(Box::new(run.shell_start(&request)?))),
};
