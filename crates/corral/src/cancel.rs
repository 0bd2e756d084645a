//! Cancelling a call from another thread: a flag and an eventfd the watch loop polls.

use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use rustix::event::{EventfdFlags, eventfd};

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
    fired: AtomicBool,
    fd: OwnedFd,
}

impl Cancel {
    /// A token that has not fired.
    pub fn new() -> std::io::Result<Self> {
        let fd = eventfd(0, EventfdFlags::CLOEXEC | EventfdFlags::NONBLOCK)?;
        Ok(Self {
            inner: Arc::new(Inner {
                fired: AtomicBool::new(false),
                fd,
            }),
        })
    }

    /// End the call this token was given to.
    pub fn cancel(&self) {
        if !self.inner.fired.swap(true, Ordering::AcqRel) {
            // Wakes a watch blocked in poll; a full counter cannot happen with one write.
            let _ = rustix::io::write(&self.inner.fd, &1u64.to_ne_bytes());
        }
    }

    /// Whether [`Cancel::cancel`] was called.
    pub fn is_cancelled(&self) -> bool {
        self.inner.fired.load(Ordering::Acquire)
    }

    pub(crate) fn fd(&self) -> BorrowedFd<'_> {
        self.inner.fd.as_fd()
    }
}
