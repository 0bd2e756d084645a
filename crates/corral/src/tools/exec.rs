//! `exec`: one argv, started without a shell.

use super::{Answers, Def, Group, ToolAnswer};
use crate::ExecRequest;

/// The `exec` tool.
pub static EXEC: Def<ExecRequest> = Def {
    name: "exec",
    group: Group::Commands,
    answers: Answers::Result,
    streams: true,
    description: |_| "Run one argv, no shell; returns status, time, the output's head and tail.",
    call: |run, request, options| {
        Ok(ToolAnswer::Outcome(Box::new(
            run.exec_with(&request, options)?,
        )))
    },
};
