//! `shell_poll`: what a handle printed since the last poll; a wait ends early when the call is cancelled.

use super::{Answers, Def, Group, ToolAnswer};
use crate::handle::PollRequest;

/// The `shell_poll` tool.
pub(crate) static SHELL_POLL: Def<PollRequest> = Def {
    name: "shell_poll",
    group: Group::Commands,
    answers: Answers::Result,
    streams: false,
    description: |_| "A handle's new output and whether it runs.",
    call: |run, request, options| {
        Ok(ToolAnswer::Poll(
            run.shell_poll_until(&request, options.cancel.as_ref())?,
        ))
    },
};
