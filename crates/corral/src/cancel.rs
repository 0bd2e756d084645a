//! Cancelling a call from another thread or a signal handler: a flag, and a pipe the
//! watch loop polls. The same pipe carries a handle's signals (`shell_signal`) to the
//! watch that holds its processes.

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
    /// Ended at once, without the grace: whoever would read the result is gone.
    urgent: AtomicBool,
    /// Readable once the token fired: what a watch blocked in `poll` wakes on.
    wake_r: OwnedFd,
    wake_w: OwnedFd,
    /// Signals to send to everything the call started, in the order asked; the watch
    /// sends them when the pipe wakes it.
    signals: std::sync::Mutex<Vec<corral_sys::Signal>>,
}

impl Cancel {
    /// A token that has not fired.
    pub fn new() -> std::io::Result<Self> {
        let (wake_r, wake_w) = pipe_with(PipeFlags::CLOEXEC | PipeFlags::NONBLOCK)?;
        Ok(Self {
            inner: Arc::new(Inner {
                fired: Arc::new(AtomicBool::new(false)),
                urgent: AtomicBool::new(false),
                wake_r,
                wake_w,
                signals: std::sync::Mutex::new(Vec::new()),
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

    /// End the call at once: SIGKILL to everything it started, no grace (also when
    /// [`Cancel::cancel`] came first and its grace is running). For a caller that is
    /// gone (an MCP client that closed its stdin or its session): nothing will read what
    /// the command would say, and a command that traps SIGTERM must not outlive it.
    pub fn cancel_now(&self) {
        if !self.inner.urgent.swap(true, Ordering::AcqRel) {
            self.inner.fired.store(true, Ordering::Release);
            let _ = rustix::io::write(&self.inner.wake_w, &[1]);
        }
    }

    /// Have the watch of the call send `signal` to everything the call started (not an
    /// end: the call goes on until its processes exit).
    pub(crate) fn send(&self, signal: corral_sys::Signal) {
        self.inner
            .signals
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(signal);
        let _ = rustix::io::write(&self.inner.wake_w, &[1]);
    }

    /// The signals asked for since the last call, in order. The caller drains the pipe
    /// first, so that a signal asked for after the drain wakes it again.
    pub(crate) fn take_signals(&self) -> Vec<corral_sys::Signal> {
        std::mem::take(&mut *self.inner.signals.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// Whether [`Cancel::cancel_now`] was called.
    pub fn is_urgent(&self) -> bool {
        self.inner.urgent.load(Ordering::Acquire)
    }

    /// Read away the wake-ups written so far, so that a watch polling the token again
    /// wakes only for a later one (an urgent end after a graceful one).
    pub(crate) fn drain(&self) {
        let mut buf = [0u8; 64];
        while rustix::io::read(&self.inner.wake_r, &mut buf).is_ok_and(|n| n > 0) {}
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
