//! `shell_signal`: a signal to everything a handle started (Ctrl-C's INT, a reload's HUP), without ending it.

use super::{Answers, Def, Group, ToolAnswer};
use crate::handle::SignalRequest;

/// The `shell_signal` tool.
pub(crate) static SHELL_SIGNAL: Def<SignalRequest> = Def {
    name: "shell_signal",
    group: Group::Commands,
    answers: Answers::Result,
    streams: false,
    description: |_| "Signal a handle's processes (INT as Ctrl-C, HUP, TERM, …), not ending it.",
    call: |run, request, _| Ok(ToolAnswer::Poll(run.shell_signal(&request)?)),
};
