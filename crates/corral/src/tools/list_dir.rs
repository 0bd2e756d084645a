//! `list_dir`: a workspace directory listed.

use super::{Answers, Def, Group, ToolAnswer};
use crate::files::ListDirRequest;

/// The `list_dir` tool.
pub(crate) static LIST_DIR: Def<ListDirRequest> = Def {
    name: "list_dir",
    group: Group::Files,
    answers: Answers::Result,
    streams: false,
    description: |_| "List a workspace directory: dirs end in /, files show their size.",
    call: |run, request, _| Ok(ToolAnswer::File(run.list_dir(&request)?)),
};
