//! A run's handles as data: the table of live and ended handles, each one's input, its
//! emulated terminal (screen, keys, the answers to a program's queries), and the
//! requests and answers of the handle tools. What starts, watches and drives a handle is
//! `background`'s; nothing here names a run.

pub(crate) mod input;
pub(crate) mod keys;
pub(crate) mod live;
pub(crate) mod queries;
pub(crate) mod request;
pub(crate) mod screen;
pub(crate) mod table;

pub use request::{
    HandleEvent, HandleState, KeysRequest, KillRequest, Poll, PollRequest, ResizeRequest,
    ScreenRequest, SignalRequest, StartRequest, Started, WriteRequest,
};
pub use screen::Screen;
pub use table::ExitObserver;

use crate::outcome::Observed;

/// A step's outcome for an interaction with a handle (`shell_write`, `shell_keys`,
/// `shell_signal`, `shell_screen`): the handle's state after it; while the handle runs,
/// `answered` (the interaction itself is over: a step is `running` only while its call
/// is, which `corral trace` and the next opener of the store rely on).
fn interaction_outcome(state: &HandleState) -> &'static str {
    match state {
        HandleState::Running => "answered",
        ended => ended.word(),
    }
}

impl Observed for Poll {
    fn outcome(&self) -> &'static str {
        interaction_outcome(&self.state)
    }
    fn observation(&self) -> &str {
        &self.observation
    }
}

impl Observed for Screen {
    fn outcome(&self) -> &'static str {
        interaction_outcome(&self.state)
    }
    fn observation(&self) -> &str {
        &self.observation
    }
}
