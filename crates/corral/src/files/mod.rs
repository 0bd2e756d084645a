//! The file tools: `read_file`, `write_file`, `list_dir` and `apply_patch`.
//!
//! They run in corral's own process, so nothing contains them the way a command is
//! contained; instead every path is confined before it is touched (`Ctx::resolve_in`),
//! by the same sets the run's box is built from (`crate::sandbox::sets`): reads and
//! writes stay inside the workspace; what the box hides (the read denies, corral's own
//! files) is neither read, listed nor written; a write also honours the run's sandbox
//! (`read-only` writes nothing, `workspace-write` also writes its writable roots, and the
//! protected paths — `.git` (with `git_write`, its hooks and config), `corral.toml` — stay
//! read-only in every mode), and corral's own trace is never written. Then the policy's `read`/`write` rules decide, with the approver for an
//! *ask*, exactly as for a redirect. Every call is a step in the trace. The path checked
//! is then used only through a descriptor of its root (`crate::beneath`), so a command racing
//! the call cannot swap a symlink in between.

mod access;
mod list;
mod read;
mod write;

pub use access::FileOutcome;
pub use list::ListDirRequest;
pub use read::ReadFileRequest;
pub use write::WriteFileRequest;
