//! `undo`: a call of this run put back (offered only with `corral mcp --undo-tool`).

use super::{Answers, Def, Group, ToolAnswer};
use crate::undo::UndoRequest;

/// The `undo` tool.
pub(crate) static UNDO: Def<UndoRequest> = Def {
    name: "undo",
    group: Group::Undo,
    answers: Answers::Result,
    streams: false,
    description: |_| {
        "Put back the files a call of yours changed (restore modified and deleted, remove \
         created); refused where they changed since."
    },
    call: |run, request, _| Ok(ToolAnswer::File(run.undo(&request)?)),
};
