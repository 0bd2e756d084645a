//! `read_file`: a workspace file, lines numbered.

use super::{Answers, Def, Group, ToolAnswer};
use crate::files::ReadFileRequest;

/// The `read_file` tool.
pub(crate) static READ_FILE: Def<ReadFileRequest> = Def {
    name: "read_file",
    group: Group::Files,
    answers: Answers::Result,
    streams: false,
    description: |_| "Read a workspace file, lines numbered; offset and limit page it.",
    call: |run, request, _| Ok(ToolAnswer::File(run.read_file(&request)?)),
};
