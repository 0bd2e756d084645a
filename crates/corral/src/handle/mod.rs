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

impl Observed for Poll {
    fn outcome(&self) -> &'static str {
        self.state.word()
    }
    fn observation(&self) -> &str {
        &self.observation
    }
}

impl Observed for Screen {
    fn outcome(&self) -> &'static str {
        self.state.word()
    }
    fn observation(&self) -> &str {
        &self.observation
    }
}
