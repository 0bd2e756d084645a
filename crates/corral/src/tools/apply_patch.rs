//! `apply_patch`: files changed by a patch in Codex's format, all of it or none.

use super::{Answers, Def, Group, ToolAnswer};
use crate::patch::PatchRequest;

/// The `apply_patch` tool.
pub(crate) static APPLY_PATCH: Def<PatchRequest> = Def {
    name: "apply_patch",
    group: Group::Files,
    answers: Answers::Result,
    streams: false,
    description: |_| {
        "Change files with a patch, all of it or none: *** Begin Patch, then *** Add File: P / \
         *** Update File: P (hunks: @@ line to find, then ' ' context, '-' remove, '+' add \
         lines) / *** Delete File: P, then *** End Patch. Add File and Move to refuse an \
         existing file. Says which hunk did not apply and why."
    },
    call: |run, request, _| Ok(ToolAnswer::File(run.apply_patch(&request)?)),
};
