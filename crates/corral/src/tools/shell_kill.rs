//! `shell_kill`: a handle ended, with everything it started.

use super::{Answers, Def, Group, ToolAnswer};
use crate::handle::KillRequest;

/// The `shell_kill` tool.
pub(crate) static SHELL_KILL: Def<KillRequest> = Def {
    name: "shell_kill",
    group: Group::Commands,
    answers: Answers::Result,
    streams: false,
    description: |_| "End a handle and all it started; returns its last output.",
    call: |run, request, _| Ok(ToolAnswer::Poll(run.shell_kill(&request)?)),
};
