//! No call runs unrecorded: before a call starts, corral checks that the trace can take
//! its rows, and the call starts only once its begin row is committed.
//!
//! The sequence, for every call (`Ctx::begin_recorded`):
//!
//! 1. The state filesystem (where the trace lies) has at least [`RESERVE`] bytes free
//!    for an unprivileged writer, plus twice the call's arguments (its begin row, and the
//!    log's copy of it until a checkpoint); otherwise the call is refused and nothing runs.
//! 2. The begin row is inserted and its transaction committed (`corral_trace`
//!    `begin_step` runs its statement to the end, so a commit the disk refuses is an
//!    error); a failed commit refuses the call, saying what to do.
//!
//! Why a reserve: what a call writes after it starts — its end row (an observation of at
//! most the output budget, 64 KiB), its policy and sandbox rows, the log frames of those
//! commits — must find room too, or a call that ran would end unrecorded. 1 MiB holds
//! those many times over. Captures have their own bound and stop taking bytes on a full
//! disk (said in the result); the undo store has its own budget per run (`[undo]
//! store_max_mb`).

use std::path::Path;

use corral_trace::{NewStep, StepIds, TraceError};

use crate::ctx::Ctx;
use crate::error::{Error, ErrorKind, Result};

/// The bytes kept free on the state filesystem for the rows a call writes once it runs.
pub(crate) const RESERVE: u64 = 1 << 20;

/// What a refusal tells the person to do.
const WHAT_TO_DO: &str = "free space or prune with corral trace prune";

impl Ctx {
    /// Insert `step`'s begin row, once there is room for its rows, and only as a committed
    /// row: a call starts only after this returns.
    pub(crate) fn begin_recorded(&self, step: &NewStep) -> Result<StepIds> {
        let store = self.store();
        let dir = store
            .path()
            .parent()
            .unwrap_or(Path::new("/"))
            .to_path_buf();
        let needed = RESERVE.saturating_add(2 * step.call_json.len() as u64);
        // Where it cannot be told, the commit is the check.
        if let Some(free) = crate::undo::store::free_bytes(&dir)
            && free < needed
        {
            return Err(Error::new(
                ErrorKind::Store,
                format!(
                    "corral cannot record this call: {} has {free} bytes free; {WHAT_TO_DO}",
                    dir.display()
                ),
            ));
        }
        store.begin_step(step).map_err(cannot_begin)
    }
}

/// A begin row that could not be committed: the call is refused, and the person told why
/// and what to do.
fn cannot_begin(e: TraceError) -> Error {
    let message = format!("corral cannot record this call: {e}; {WHAT_TO_DO}");
    Error::store_saying(message, e)
}
