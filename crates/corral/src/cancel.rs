//! Cancelling a call from another thread or a signal handler: a flag, and a pipe the
//! watch loop polls.

use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use rustix::pipe::{PipeFlags, pipe_with};

/// A token that ends a running call: its command and everything it started are ended
/// (SIGTERM, grace, SIGKILL) and the outcome is [`Status::Cancelled`](crate::Status::Cancelled).
///
/// Clones share one token. Triggering is idempotent and may happen before the call starts.
#[derive(Debug, Clone)]
pub struct Cancel {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    fired: Arc<AtomicBool>,
    /// Readable once the token fired: what a watch blocked in `poll` wakes on.
    wake_r: OwnedFd,
    wake_w: OwnedFd,
}

impl Cancel {
    /// A token that has not fired.
    pub fn new() -> std::io::Result<Self> {
        let (wake_r, wake_w) = pipe_with(PipeFlags::CLOEXEC | PipeFlags::NONBLOCK)?;
        Ok(Self {
            inner: Arc::new(Inner {
                fired: Arc::new(AtomicBool::new(false)),
                wake_r,
                wake_w,
            }),
        })
    }

    /// End the call this token was given to.
    pub fn cancel(&self) {
        if !self.inner.fired.swap(true, Ordering::AcqRel) {
            // Wakes a watch blocked in poll; one byte cannot fill the pipe.
            let _ = rustix::io::write(&self.inner.wake_w, &[1]);
        }
    }

    /// Whether [`Cancel::cancel`] was called (or the token was fired from a signal
    /// handler, see [`Cancel::from_signal_handler`]).
    pub fn is_cancelled(&self) -> bool {
        self.inner.fired.load(Ordering::Acquire)
    }

    /// The token's two halves, for a signal handler to fire it with no thread waiting for
    /// the signal: set the flag (never clear it), then write any byte to the descriptor,
    /// in that order. With `signal-hook`'s safe handlers that is
    /// `signal_hook::flag::register(sig, flag)` registered before
    /// `signal_hook::low_level::pipe::register(sig, waker)`.
    pub fn from_signal_handler(&self) -> std::io::Result<(Arc<AtomicBool>, OwnedFd)> {
        Ok((self.inner.fired.clone(), self.inner.wake_w.try_clone()?))
    }

    pub(crate) fn fd(&self) -> BorrowedFd<'_> {
        self.inner.wake_r.as_fd()
    }
}
