//! `output`: what a result left out, read back.

use super::{Answers, Def, Group, ToolAnswer};
use crate::output::OutputRequest;

/// The `output` tool.
pub(crate) static OUTPUT: Def<OutputRequest> = Def {
    name: "output",
    group: Group::Commands,
    answers: Answers::Result,
    streams: false,
    description: |_| "Read what a result left out: lines, bytes, head, tail or grep (numbered as grep -n).",
    call: |run, request, _| Ok(ToolAnswer::Output(run.output(&request)?)),
};
