//! `write_file`: a workspace file created or replaced whole.

use super::{Answers, Def, Group, ToolAnswer};
use crate::files::WriteFileRequest;

/// The `write_file` tool.
pub(crate) static WRITE_FILE: Def<WriteFileRequest> = Def {
    name: "write_file",
    group: Group::Files,
    answers: Answers::Result,
    streams: false,
    description: |_| {
        "Create or replace a workspace file with the whole content; for a small change to a \
         file, apply_patch."
    },
    call: |run, request, _| Ok(ToolAnswer::File(run.write_file(&request)?)),
};
