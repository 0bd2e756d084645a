//! The scan behind the capture.
//!
//! A stream's first [`INLINE_UP_TO`] bytes are scanned on the capture's own thread, as
//! they are written: most commands print less, and for them a thread would cost more than
//! the scan. Past that the scan moves, with everything it has kept, to a thread of its
//! own, fed copies of the chunks in batches of [`BATCH`] bytes, so that a command printing
//! gigabytes is read at the pace of the capture, not of the capture and the scan in turn,
//! wherever the host has a core to spare. At most [`IN_FLIGHT`] batches wait for the scan;
//! past them the capture waits too, so memory stays bounded (a few MiB a stream) and every
//! byte is scanned: what the scan finds does not depend on how fast it ran.
//!
//! Where a thread cannot be started, the scan stays on the capture's thread. A scan thread
//! that dies takes its findings with it: the window is then cut without a failure block,
//! as for a run that turned the scan off.

use std::sync::mpsc::{Receiver, SyncSender, channel, sync_channel};
use std::thread::JoinHandle;

use super::{Found, Scan};

/// Bytes scanned on the capture's thread before the scan moves to one of its own.
pub(crate) const INLINE_UP_TO: u64 = 1 << 20;
/// Bytes gathered before a batch is handed over: a command that prints in small writes
/// costs one hand-over per batch, not one per write.
const BATCH: usize = 256 * 1024;
/// Batches handed over and not yet scanned, at most.
const IN_FLIGHT: usize = 4;

/// One stream's failure-line scan, on the capture's thread or behind it.
#[derive(Debug)]
pub(crate) struct Scanner {
    state: State,
}

#[derive(Debug)]
enum State {
    /// Scanned as written; `bytes` counts what was scanned so far.
    Inline { scan: Scan, bytes: u64, stay: bool },
    /// Handed to the scan thread in batches.
    Behind(Behind),
    /// The scan thread is gone (it panicked): nothing more is scanned.
    Lost,
}

#[derive(Debug)]
struct Behind {
    /// Bytes gathered for the next hand-over, and their newlines.
    batch: Vec<u8>,
    newlines: u64,
    to_scan: SyncSender<(Vec<u8>, u64)>,
    /// Batches the thread has scanned, back to be filled again.
    spent: Receiver<Vec<u8>>,
    thread: JoinHandle<Found>,
}

impl Default for Scanner {
    fn default() -> Self {
        Self::new()
    }
}

impl Scanner {
    /// A scan of a stream that has not started.
    pub(crate) fn new() -> Self {
        Self {
            state: State::Inline {
                scan: Scan::new(),
                bytes: 0,
                stay: false,
            },
        }
    }

    /// A scan that never leaves the caller's thread (a capture of a known small size, a
    /// host with one core).
    #[cfg(test)]
    pub(crate) fn on_this_thread() -> Self {
        Self {
            state: State::Inline {
                scan: Scan::new(),
                bytes: 0,
                stay: true,
            },
        }
    }

    /// Whether the scan runs on a thread of its own by now.
    #[cfg(test)]
    pub(crate) fn is_behind(&self) -> bool {
        matches!(self.state, State::Behind(_))
    }

    /// Scan the next chunk of the stream, whose `newlines` the capture counted.
    pub(crate) fn feed(&mut self, chunk: &[u8], newlines: u64) {
        match &mut self.state {
            State::Inline { scan, bytes, stay } => {
                scan.feed_counted(chunk, newlines);
                *bytes += chunk.len() as u64;
                if *bytes >= INLINE_UP_TO && !*stay {
                    self.move_behind();
                }
            }
            State::Behind(behind) => {
                behind.batch.extend_from_slice(chunk);
                behind.newlines += newlines;
                if behind.batch.len() >= BATCH && !behind.hand_over() {
                    self.state = State::Lost;
                }
            }
            State::Lost => {}
        }
    }

    /// Start the scan thread with the scan as it stands; where no thread can be started,
    /// stay on this one.
    fn move_behind(&mut self) {
        let State::Inline { scan, bytes, .. } = std::mem::replace(&mut self.state, State::Lost)
        else {
            unreachable!("only an inline scan moves")
        };
        let (to_scan, batches) = sync_channel::<(Vec<u8>, u64)>(IN_FLIGHT);
        let (give_back, spent) = channel();
        let slot = std::sync::Arc::new(std::sync::Mutex::new(Some(scan)));
        let theirs = std::sync::Arc::clone(&slot);
        let started = std::thread::Builder::new()
            .name("corral-scan".into())
            .spawn(move || {
                let mut scan = theirs
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .take()
                    .expect("the scan is handed over once");
                for (batch, newlines) in batches {
                    scan.feed_counted(&batch, newlines);
                    // The capture may have finished and gone: then the buffer is freed.
                    let _ = give_back.send(batch);
                }
                scan.finish()
            });
        self.state = match started {
            Ok(thread) => State::Behind(Behind {
                batch: Vec::with_capacity(BATCH),
                newlines: 0,
                to_scan,
                spent,
                thread,
            }),
            Err(_) => State::Inline {
                scan: slot
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .take()
                    .expect("a thread that did not start took nothing"),
                bytes,
                stay: true,
            },
        };
    }

    /// End the scan: everything handed over is scanned first.
    pub(crate) fn finish(self) -> Found {
        match self.state {
            State::Inline { scan, .. } => scan.finish(),
            State::Behind(mut behind) => {
                if !behind.batch.is_empty() && !behind.hand_over() {
                    return Found::default();
                }
                drop(behind.to_scan);
                behind.thread.join().unwrap_or_default()
            }
            State::Lost => Found::default(),
        }
    }
}

impl Behind {
    /// Hand the gathered batch to the thread and take an empty one back (a spent one
    /// where there is one). False when the thread is gone.
    fn hand_over(&mut self) -> bool {
        let next = match self.spent.try_recv() {
            Ok(mut spent) => {
                spent.clear();
                spent
            }
            Err(_) => Vec::with_capacity(BATCH),
        };
        let full = std::mem::replace(&mut self.batch, next);
        let newlines = std::mem::take(&mut self.newlines);
        self.to_scan.send((full, newlines)).is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A log of `lines` lines with a failure line every 997th.
    fn log(lines: usize) -> Vec<u8> {
        let mut out = Vec::new();
        for i in 0..lines {
            if i % 997 == 996 {
                out.extend_from_slice(format!("error[E0308]: mismatched types {i}\n").as_bytes());
            } else {
                out.extend_from_slice(
                    format!("INFO processed batch {i} of the ledger\n").as_bytes(),
                );
            }
        }
        out
    }

    fn scan_with(mut scanner: Scanner, bytes: &[u8], chunk: usize) -> (Found, bool) {
        let mut behind = false;
        for piece in bytes.chunks(chunk) {
            let newlines = memchr::memchr_iter(b'\n', piece).count() as u64;
            scanner.feed(piece, newlines);
            behind |= scanner.is_behind();
        }
        (scanner.finish(), behind)
    }

    #[test]
    fn behind_the_capture_the_scan_finds_what_it_finds_on_the_capture_thread() {
        // Past the inline megabyte, in writes of every size a pipe gives.
        let bytes = log(200_000);
        assert!(bytes.len() as u64 > 4 * INLINE_UP_TO);
        let (alone, _) = scan_with(Scanner::on_this_thread(), &bytes, 65536);
        for chunk in [1usize << 18, 4096, 1000, 77] {
            let (behind, moved) = scan_with(Scanner::new(), &bytes, chunk);
            assert!(
                moved,
                "a stream past {INLINE_UP_TO} bytes is scanned behind"
            );
            assert_eq!(behind, alone, "chunks of {chunk}");
        }
        assert!(alone.total() > 100);
    }

    #[test]
    fn a_small_stream_never_starts_a_thread() {
        let bytes = log(1000);
        let (found, moved) = scan_with(Scanner::new(), &bytes, 4096);
        assert!(!moved);
        assert_eq!(found.total(), 1);
    }
}
