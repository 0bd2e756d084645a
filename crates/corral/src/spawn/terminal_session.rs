//! The layer for a terminal's one command: it leads a session whose controlling terminal
//! is the one its stdin is.

use std::io;

use corral_sys::Signal;

use super::containment::Containment;
use super::launch::Launch;

/// A containment layer whose one process leads a session on a terminal.
///
/// It tells the unit inside that the child starts a session itself, so that unit leaves
/// it out of any group (a group leader cannot call `setsid`); `setsid` then makes it the
/// leader of a new group with its own pid, which the unit takes as the pipeline's group.
/// Ending it sends SIGHUP before SIGTERM, as a terminal that closes does: an interactive
/// shell ignores SIGTERM but not a hang-up.
#[derive(Debug)]
pub(crate) struct TerminalSession {
    inner: Box<dyn Containment>,
}

impl TerminalSession {
    /// The layer around `inner`.
    pub(crate) fn around(inner: Box<dyn Containment>) -> Box<dyn Containment> {
        Box::new(TerminalSession { inner })
    }
}

impl Containment for TerminalSession {
    fn inner(&self) -> Option<&dyn Containment> {
        Some(&*self.inner)
    }
    fn inner_mut(&mut self) -> Option<&mut dyn Containment> {
        Some(&mut *self.inner)
    }
    fn pre_spawn(&mut self, launch: &mut Launch) {
        self.inner.next_leads_session();
        self.inner.pre_spawn(launch);
        launch.controlling_terminal();
    }
    fn signal(&self, signal: Signal) -> io::Result<bool> {
        if signal == Signal::TERM {
            self.inner.signal(Signal::HUP)?;
        }
        self.inner.signal(signal)
    }
}
