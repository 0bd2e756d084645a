//! The handles of one run: the live ones, and those an earlier process left.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use corral_trace::HandleRow;

use super::live::Live;
use super::request::{HandleEvent, HandleState, Poll};
use crate::capture::Layout;

/// Called when a background handle ends by itself or is ended.
pub type ExitObserver = Arc<dyn Fn(HandleEvent) + Send + Sync>;

/// The handles of one run.
#[derive(Default)]
pub(crate) struct Handles {
    pub(crate) next: u32,
    pub(crate) live: BTreeMap<u32, Arc<Live>>,
    /// Handles that ended and whose last output a poll returned: their processes, threads
    /// and buffers are gone, and what a later poll, kill or read needs is kept.
    pub(crate) retired: BTreeMap<u32, Retired>,
    /// Handles an earlier process of this run left: answered from the record only.
    pub(crate) orphans: BTreeMap<u32, HandleRow>,
    pub(crate) observer: Option<ExitObserver>,
}

impl std::fmt::Debug for Handles {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Handles")
            .field("live", &self.live.len())
            .field("retired", &self.retired.len())
            .field("orphans", &self.orphans.len())
            .finish()
    }
}

impl Handles {
    /// Handles recorded for a run reopened in this process: all orphaned now.
    pub(crate) fn resumed(rows: Vec<HandleRow>) -> Self {
        let next = rows.iter().map(|r| r.handle).max().unwrap_or(0);
        Self {
            next,
            live: BTreeMap::new(),
            retired: BTreeMap::new(),
            orphans: rows.into_iter().map(|r| (r.handle, r)).collect(),
            observer: None,
        }
    }

    pub(crate) fn running(&self) -> usize {
        self.live
            .values()
            .filter(|h| h.progress().state == HandleState::Running)
            .count()
    }
}

/// What is kept of a handle that ended once a poll returned the last of its output.
#[derive(Debug, Clone)]
pub(crate) struct Retired {
    pub state: HandleState,
    /// Its capture, and where in it its bytes are.
    pub capture: PathBuf,
    pub layout: Layout,
}

/// A handle looked up in the table.
pub(crate) enum Found {
    Live(Arc<Live>),
    Retired(u32, Retired),
    Orphan(Box<HandleRow>),
}

/// The answer for a handle an earlier process of this run started.
pub(crate) fn orphan_poll(row: &HandleRow) -> Poll {
    let observation = format!(
        "handle {} ({}) was started by an earlier process of this run and is orphaned: it is not \
         re-attached, polled or signalled. Start again what you still need.\n",
        row.handle, row.line
    );
    Poll {
        handle: row.handle,
        state: HandleState::Orphaned,
        output: String::new(),
        bytes: 0,
        skipped_bytes: 0,
        dropped_bytes: 0,
        observation,
    }
}
