//! The scan behind the capture.
//!
//! A stream's first [`INLINE_UP_TO`] bytes are scanned on the capture's own thread, as
//! they are written: most commands print less, and for them a thread would cost more than
//! the scan. So does a stream of few, long lines (a binary, `/dev/zero`), since the scan's
//! work is per line. Past that, the scan of a stream of lines moves, with everything it
//! has kept, to a thread of its own, fed the chunks in batches of [`BATCH`] bytes (which
//! the capture reads into, so nothing is copied): a command printing gigabytes is read at
//! the pace of the capture, not of the capture and the scan in turn, wherever the host has
//! a core to spare. At most [`IN_FLIGHT`] batches wait for the scan; past them the capture
//! waits too, so memory stays bounded (a few MiB a stream) and every byte is scanned: what
//! the scan finds does not depend on how fast it ran.
//!
//! Where a thread cannot be started, the scan stays on the capture's thread. A scan thread
//! that dies takes its findings with it: the window is then cut without a failure block,
//! as for a run that turned the scan off.

use std::sync::mpsc::{Receiver, SyncSender, channel, sync_channel};
use std::thread::JoinHandle;

use super::{Found, Scan};

/// Bytes scanned on the capture's thread before the scan moves to one of its own.
pub(crate) const INLINE_UP_TO: u64 = 1 << 20;
/// The longest average line for which the scan moves: past it, lines are so few that
/// scanning them costs less than handing the bytes over.
const LINE_AT_MOST: u64 = 4096;
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
    /// Scanned as written; `bytes` and `lines` count what was scanned so far.
    Inline {
        scan: Scan,
        bytes: u64,
        lines: u64,
        stay: bool,
    },
    /// Handed to the scan thread in batches.
    Behind(Behind),
    /// The scan thread is gone (it panicked): nothing more is scanned.
    Lost,
}

#[derive(Debug)]
struct Behind {
    /// The next hand-over: its first `filled` bytes are the stream's, with `newlines`
    /// newlines; the rest is room (a capture reads straight into it: no copy).
    batch: Vec<u8>,
    filled: usize,
    newlines: u64,
    to_scan: SyncSender<(Vec<u8>, usize, u64)>,
    /// Batches the thread has scanned, back to be filled again.
    spent: Receiver<Vec<u8>>,
    thread: JoinHandle<Found>,
}

impl Scanner {
    /// A scan of a stream that has not started.
    pub(crate) fn new() -> Self {
        Self {
            state: State::Inline {
                scan: Scan::new(),
                bytes: 0,
                lines: 0,
                stay: false,
            },
        }
    }

    /// A scan that never leaves the caller's thread.
    #[cfg(test)]
    pub(crate) fn on_this_thread() -> Self {
        Self {
            state: State::Inline {
                scan: Scan::new(),
                bytes: 0,
                lines: 0,
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
            State::Inline {
                scan,
                bytes,
                lines,
                stay,
            } => {
                scan.feed_counted(chunk, newlines);
                *bytes += chunk.len() as u64;
                *lines += newlines;
                // The scan's cost is in its lines: a stream of long lines (or none, as
                // from /dev/zero) costs it little, and a hand-over more.
                if *bytes >= INLINE_UP_TO && *lines * LINE_AT_MOST >= *bytes && !*stay {
                    self.move_behind();
                }
            }
            State::Behind(_) => {
                let (mut batch, at) = self.room(chunk.len()).expect("the scan is behind");
                batch[at..at + chunk.len()].copy_from_slice(chunk);
                self.read_into(batch, chunk.len(), newlines);
            }
            State::Lost => {}
        }
    }

    /// Where the scan runs behind the capture: the next batch, for the capture to read up
    /// to `want` bytes into, from the returned offset on. Give it back with
    /// [`Scanner::read_into`] (the bytes it read are then scanned as if fed).
    pub(crate) fn room(&mut self, want: usize) -> Option<(Vec<u8>, usize)> {
        let State::Behind(behind) = &mut self.state else {
            return None;
        };
        let mut batch = std::mem::take(&mut behind.batch);
        if batch.len() < behind.filled + want {
            batch.resize(behind.filled + want, 0);
        }
        Some((batch, behind.filled))
    }

    /// The batch [`Scanner::room`] lent, `read` bytes longer, with `newlines` in them.
    pub(crate) fn read_into(&mut self, batch: Vec<u8>, read: usize, newlines: u64) {
        if let State::Behind(behind) = &mut self.state {
            behind.batch = batch;
            self.filled(read, newlines);
        }
    }

    /// `n` more bytes of the batch are the stream's: hand it over once it is full.
    fn filled(&mut self, n: usize, newlines: u64) {
        let State::Behind(behind) = &mut self.state else {
            return;
        };
        behind.filled += n;
        behind.newlines += newlines;
        if behind.filled >= BATCH && !behind.hand_over() {
            self.state = State::Lost;
        }
    }

    /// Start the scan thread with the scan as it stands; where no thread can be started,
    /// stay on this one.
    fn move_behind(&mut self) {
        let State::Inline {
            scan, bytes, lines, ..
        } = std::mem::replace(&mut self.state, State::Lost)
        else {
            unreachable!("only an inline scan moves")
        };
        let (to_scan, batches) = sync_channel::<(Vec<u8>, usize, u64)>(IN_FLIGHT);
        let (give_back, spent) = channel();
        // The scan goes over once the thread runs: where none can start, it stays here.
        let (hand, taken) = channel::<Scan>();
        let started = std::thread::Builder::new()
            .name("corral-scan".into())
            .spawn(move || {
                let Ok(mut scan) = taken.recv() else {
                    return Found::default();
                };
                for (batch, filled, newlines) in batches {
                    scan.feed_counted(&batch[..filled], newlines);
                    // The capture may have finished and gone: then the buffer is freed.
                    let _ = give_back.send(batch);
                }
                scan.finish()
            });
        let thread = match started {
            Ok(thread) => hand.send(scan).map(|()| thread).map_err(|back| back.0),
            Err(_) => Err(scan),
        };
        self.state = match thread {
            Ok(thread) => State::Behind(Behind {
                batch: Vec::new(),
                filled: 0,
                newlines: 0,
                to_scan,
                spent,
                thread,
            }),
            Err(scan) => State::Inline {
                scan,
                bytes,
                lines,
                stay: true,
            },
        };
    }

    /// End the scan: everything handed over is scanned first.
    pub(crate) fn finish(self) -> Found {
        match self.state {
            State::Inline { scan, .. } => scan.finish(),
            State::Behind(mut behind) => {
                if behind.filled > 0 && !behind.hand_over() {
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
        // A spent batch keeps its size: its bytes are written over, never cleared.
        let next = self.spent.try_recv().unwrap_or_default();
        let full = std::mem::replace(&mut self.batch, next);
        let filled = std::mem::take(&mut self.filled);
        let newlines = std::mem::take(&mut self.newlines);
        self.to_scan.send((full, filled, newlines)).is_ok()
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

    /// Scan `bytes` in pieces of `chunk`; with `read_in`, each piece goes where the
    /// scanner lends room for it, as a capture's read puts it.
    fn scan_with(mut scanner: Scanner, bytes: &[u8], chunk: usize, read_in: bool) -> (Found, bool) {
        let mut behind = false;
        for piece in bytes.chunks(chunk) {
            let newlines = memchr::memchr_iter(b'\n', piece).count() as u64;
            match read_in.then(|| scanner.room(chunk)).flatten() {
                Some((mut batch, at)) => {
                    batch[at..at + piece.len()].copy_from_slice(piece);
                    scanner.read_into(batch, piece.len(), newlines);
                }
                None => scanner.feed(piece, newlines),
            }
            behind |= scanner.is_behind();
        }
        (scanner.finish(), behind)
    }

    #[test]
    fn behind_the_capture_the_scan_finds_what_it_finds_on_the_capture_thread() {
        // Past the inline megabyte, in writes of every size a pipe gives.
        let bytes = log(200_000);
        assert!(bytes.len() as u64 > 4 * INLINE_UP_TO);
        let (alone, _) = scan_with(Scanner::on_this_thread(), &bytes, 65536, false);
        for chunk in [1usize << 18, 4096, 1000, 77] {
            for read_in in [false, true] {
                let (behind, moved) = scan_with(Scanner::new(), &bytes, chunk, read_in);
                assert!(
                    moved,
                    "a stream past {INLINE_UP_TO} bytes is scanned behind"
                );
                assert_eq!(behind, alone, "chunks of {chunk}, read in: {read_in}");
            }
        }
        assert!(alone.total() > 100);
    }

    #[test]
    fn a_small_stream_never_starts_a_thread() {
        let bytes = log(1000);
        let (found, moved) = scan_with(Scanner::new(), &bytes, 4096, true);
        assert!(!moved);
        assert_eq!(found.total(), 1);
    }

    #[test]
    fn a_stream_of_long_lines_stays_on_the_capture_thread() {
        let mut bytes = vec![b'x'; 8 << 20];
        for at in (0..bytes.len()).step_by(64 << 10) {
            bytes[at] = b'\n';
        }
        bytes.extend_from_slice(b"\nerror[E0308]: mismatched types\n");
        let (found, moved) = scan_with(Scanner::new(), &bytes, 1 << 18, true);
        assert!(!moved, "lines of 64 KiB are not worth a hand-over");
        assert_eq!(found.total(), 1);
    }
}
