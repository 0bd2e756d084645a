//! The command's output passed through to corral's own stdout and stderr, as a pipeline
//! would: when whatever reads them stops reading (`corral exec -- yes | head -2`), the
//! command is ended at once, the way SIGPIPE would end it, and corral exits 141.

use std::io::{self, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use corral::Cancel;

/// One of corral's own output streams; a write to a reader that is gone cancels the call.
pub struct Passthrough<W> {
    out: W,
    cancel: Cancel,
    closed: Arc<AtomicBool>,
}

impl<W: Write> Passthrough<W> {
    /// Pass through to `out`; a closed reader sets `closed` and fires `cancel`.
    pub fn new(out: W, cancel: Cancel, closed: Arc<AtomicBool>) -> Self {
        Self {
            out,
            cancel,
            closed,
        }
    }

    fn check<T>(&self, result: io::Result<T>) -> io::Result<T> {
        if let Err(e) = &result
            && e.kind() == io::ErrorKind::BrokenPipe
        {
            self.closed.store(true, Ordering::Release);
            self.cancel.cancel();
        }
        result
    }
}

impl<W: Write> Write for Passthrough<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let written = self.out.write(buf);
        self.check(written)
    }

    fn flush(&mut self) -> io::Result<()> {
        let flushed = self.out.flush();
        self.check(flushed)
    }
}
