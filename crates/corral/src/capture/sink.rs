use std::fs::File;
use std::io::{self, Write};
use std::os::unix::fs::FileExt;
use std::path::PathBuf;

use serde::Serialize;

/// What a capture keeps when the disk fills under it: enough for the head of a window.
const KEPT_ON_FULL_DISK: u64 = 64 * 1024;

/// One stream of one command, being captured.
///
/// Past its cap, a capture keeps its first half as it was and turns its second half into
/// a ring that always holds the newest bytes: the start of a log (what ran) and its end
/// (what failed) both survive, and disk use stays bounded. A byte at logical offset `o`
/// (counting every byte the stream ever carried) lives at file position `o` while
/// `o < head`, and at `head + (o - head) % ring` after that.
pub(crate) struct Sink {
    path: PathBuf,
    file: Option<File>,
    bytes: u64,
    newlines: u64,
    last_byte: Option<u8>,
    cap: u64,
    tee: Option<Box<dyn Write + Send>>,
    /// The lines that look like failures, found as the bytes pass; `None` for a capture
    /// nobody cuts a window from (a handle's) or a run that does not want them.
    scan: Option<super::failures::Scanner>,
    /// Why the file stopped taking bytes (a full disk, a removed directory): the stream is
    /// still drained and counted, so the command is not disturbed.
    broken: Option<String>,
}

impl std::fmt::Debug for Sink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sink")
            .field("path", &self.path)
            .field("bytes", &self.bytes)
            .finish()
    }
}

/// Where a capped capture keeps which bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Layout {
    /// Every byte the stream carried.
    pub total: u64,
    /// The capture's cap (its file never grows past it).
    pub cap: u64,
}

impl Layout {
    pub(crate) fn head(&self) -> u64 {
        self.cap / 2
    }

    fn ring(&self) -> u64 {
        self.cap - self.head()
    }

    /// Bytes the cap dropped from the middle so far.
    pub fn dropped(&self) -> u64 {
        self.total.saturating_sub(self.cap)
    }

    /// The oldest logical offset at or after `from` that is still held.
    pub fn first_held(&self, from: u64) -> u64 {
        if from < self.head() || self.total <= self.cap {
            from
        } else {
            from.max(self.total - self.ring())
        }
    }

    /// The file position of held logical offset `o`.
    fn position(&self, o: u64) -> u64 {
        if o < self.head() {
            o
        } else {
            self.head() + (o - self.head()) % self.ring()
        }
    }

    /// The held bytes in logical order, as `(file position, length)` pieces: the head,
    /// then the ring from its oldest byte, wrapping once.
    pub(crate) fn held_pieces(&self) -> Vec<(u64, u64)> {
        if self.total <= self.cap {
            return vec![(0, self.total)];
        }
        let oldest = self.position(self.total - self.ring());
        vec![
            (0, self.head()),
            (oldest, self.cap - oldest),
            (self.head(), oldest - self.head()),
        ]
    }

    /// Read the held bytes of logical range `[from, to)` from `file`.
    pub(crate) fn read(&self, file: &File, from: u64, to: u64) -> io::Result<Vec<u8>> {
        let mut out = Vec::with_capacity(to.saturating_sub(from) as usize);
        let mut o = from;
        loop {
            // Past the head, skip to what the ring still holds.
            o = self.first_held(o);
            if o >= to {
                break;
            }
            let pos = self.position(o);
            // Up to the end of the head, or of the ring, whichever comes first.
            let limit = if o < self.head() {
                self.head() - o
            } else {
                self.cap - pos
            };
            let n = limit.min(to - o) as usize;
            let start = out.len();
            out.resize(start + n, 0);
            file.read_exact_at(&mut out[start..], pos)?;
            o += n as u64;
        }
        Ok(out)
    }
}

/// What a finished stream left behind.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Captured {
    /// Bytes the stream carried.
    pub bytes: u64,
    /// Lines, counting a final line without a newline.
    pub lines: u64,
    /// Newline bytes, which with the bytes locates line boundaries.
    #[serde(skip)]
    pub(crate) newlines: u64,
    /// Bytes the capture cap dropped from the middle (the file holds the head, a marker
    /// line, and the tail).
    pub dropped: u64,
    /// The capture file holding every byte kept, absent when the stream was empty.
    pub path: Option<PathBuf>,
    /// Why the capture file stopped taking bytes, if it did.
    pub error: Option<String>,
    /// The cap the capture kept to.
    #[serde(skip)]
    pub(crate) cap: u64,
    /// The lines that look like failures, with their places in the stream.
    #[serde(skip)]
    pub(crate) failures: super::failures::Found,
}

/// Create the capture file at `path`, readable too (a capped capture is put back in
/// order when it ends), and its run's directory with the first file: a run whose calls
/// print nothing has no directory to make, nor for retention to delete.
fn create(path: &std::path::Path) -> io::Result<std::fs::File> {
    let open = || {
        std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)
    };
    match open() {
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir)?;
            }
            open()
        }
        opened => opened,
    }
}

impl Sink {
    /// A sink that will write to `path` once there is something to write, keeping at most
    /// `cap` bytes on disk.
    pub(crate) fn new(path: PathBuf, cap: u64) -> Self {
        Self {
            path,
            file: None,
            bytes: 0,
            newlines: 0,
            last_byte: None,
            cap: cap.max(2),
            tee: None,
            scan: None,
            broken: None,
        }
    }

    /// Scan every chunk for the lines that say why a command failed, for the window's
    /// failure block (see `failures`); past its first megabyte, on a thread of its own.
    pub(crate) fn scanning(mut self) -> Self {
        self.scan = Some(super::failures::Scanner::new());
        self
    }

    /// Also copy every chunk to `tee` as it arrives. A failing tee (a closed terminal) is
    /// dropped; the capture goes on.
    pub(crate) fn with_tee(mut self, tee: Box<dyn Write + Send>) -> Self {
        self.tee = Some(tee);
        self
    }

    /// Where the bytes are, so far.
    pub(crate) fn layout(&self) -> Layout {
        Layout {
            total: self.bytes,
            cap: self.cap,
        }
    }

    pub(crate) fn write(&mut self, chunk: &[u8]) -> io::Result<()> {
        let newlines = self.take(chunk);
        if let Some(scan) = &mut self.scan
            && !chunk.is_empty()
        {
            scan.feed(chunk, newlines);
        }
        Ok(())
    }

    /// Read what `fd` has (at most `buf`'s length) and take it as [`Sink::write`] does.
    /// Where the scan runs behind the capture, the bytes are read straight into its next
    /// batch instead of `buf`: the scan's thread reads them where they landed.
    pub(crate) fn read_from(
        &mut self,
        fd: std::os::fd::BorrowedFd<'_>,
        buf: &mut [u8],
    ) -> rustix::io::Result<usize> {
        let Some((mut batch, at)) = self.scan.as_mut().and_then(|s| s.room(buf.len())) else {
            let n = rustix::io::read(fd, &mut *buf)?;
            let _ = self.write(&buf[..n]);
            return Ok(n);
        };
        let read = rustix::io::read(fd, &mut batch[at..at + buf.len()]);
        let n = *read.as_ref().unwrap_or(&0);
        let newlines = self.take(&batch[at..at + n]);
        if let Some(scan) = &mut self.scan {
            scan.read_into(batch, n, newlines);
        }
        read
    }

    /// Store, count and tee `chunk`; its newlines.
    fn take(&mut self, chunk: &[u8]) -> u64 {
        if chunk.is_empty() {
            return 0;
        }
        if self.broken.is_none()
            && let Err(e) = self.store(chunk)
        {
            self.broken = Some(self.give_up(&e));
        }
        self.bytes += chunk.len() as u64;
        let newlines = memchr::memchr_iter(b'\n', chunk).count() as u64;
        self.newlines += newlines;
        self.last_byte = chunk.last().copied();
        if let Some(tee) = &mut self.tee
            && tee.write_all(chunk).and_then(|()| tee.flush()).is_err()
        {
            self.tee = None;
        }
        newlines
    }

    /// The file failed to take a write: stop writing to it. On a full disk, shrink it to
    /// its first [`KEPT_ON_FULL_DISK`] bytes first, so the space it took goes back to the
    /// trace (which must still record the call) and to later calls. Says what is kept.
    fn give_up(&mut self, e: &io::Error) -> String {
        let full =
            e.kind() == io::ErrorKind::StorageFull || e.kind() == io::ErrorKind::QuotaExceeded;
        if full && let Some(file) = &self.file {
            let kept = self.bytes.min(KEPT_ON_FULL_DISK).min(self.cap / 2);
            if file.set_len(kept).is_ok() {
                return format!(
                    "{e} at byte {}: the capture keeps only its first {kept} bytes",
                    self.bytes
                );
            }
        }
        format!("{e} (at byte {})", self.bytes)
    }

    /// Put `chunk` in the file, where the ring keeps it past the cap.
    fn store(&mut self, chunk: &[u8]) -> io::Result<()> {
        let file = match &mut self.file {
            Some(f) => f,
            None => self.file.insert(create(&self.path)?),
        };
        let layout = Layout {
            total: self.bytes,
            cap: self.cap,
        };
        if self.bytes + chunk.len() as u64 <= self.cap {
            file.write_all_at(chunk, self.bytes)?;
        } else {
            // Past the cap: write each byte where the ring keeps it.
            let mut o = self.bytes;
            let mut rest = chunk;
            while !rest.is_empty() {
                let pos = layout.position(o);
                let room = if o < layout.head() {
                    layout.head() - o
                } else {
                    self.cap - pos
                };
                let n = (room as usize).min(rest.len());
                file.write_all_at(&rest[..n], pos)?;
                rest = &rest[n..];
                o += n as u64;
            }
        }
        Ok(())
    }

    /// End the capture. A capture that went past its cap is rewritten in order, in place
    /// and in bounded memory: its head, a line saying how many bytes were dropped, its
    /// tail.
    ///
    /// Never fails the call: a capture that cannot be finished (a full disk) says why in
    /// [`Captured::error`], and what was counted stays counted.
    pub(crate) fn finish(mut self) -> Captured {
        let partial = u64::from(self.last_byte.is_some_and(|b| b != b'\n'));
        let layout = self.layout();
        if let Some(file) = &self.file
            && layout.dropped() > 0
            && self.broken.is_none()
        {
            let marker = format!(
                "\n[… {} bytes dropped by the capture cap …]\n",
                layout.dropped()
            );
            let ring = layout.ring();
            let newest = (layout.total - layout.head()) % ring;
            let ordered = super::reorder::rotate_and_mark(
                file,
                layout.head(),
                ring,
                newest,
                marker.as_bytes(),
            )
            .and_then(|()| file.set_len(layout.head() + marker.len() as u64 + ring));
            if let Err(e) = ordered {
                // Keep what is certainly in order: the head.
                let _ = file.set_len(layout.head());
                self.broken = Some(format!(
                    "{e} (putting the capture in order; only its first {} bytes are kept)",
                    layout.head()
                ));
            }
        }
        Captured {
            bytes: self.bytes,
            lines: self.newlines + partial,
            newlines: self.newlines,
            dropped: layout.dropped(),
            error: self.broken,
            path: self.file.map(|_| self.path),
            cap: self.cap,
            failures: self
                .scan
                .map(super::failures::Scanner::finish)
                .unwrap_or_default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn past_the_cap_the_head_stays_and_the_tail_rolls() {
        let dir = tempfile::tempdir().unwrap();
        let mut sink = Sink::new(dir.path().join("c"), 10);
        let data: Vec<u8> = (0..37u8).map(|i| b'a' + (i % 26)).collect();
        for chunk in data.chunks(3) {
            sink.write(chunk).unwrap();
        }
        let layout = sink.layout();
        let file = File::open(dir.path().join("c")).unwrap();
        assert_eq!(
            layout.read(&file, 0, 37).unwrap(),
            [&data[..5], &data[32..]].concat()
        );
        assert_eq!(layout.first_held(6), 32);
        let captured = sink.finish();
        assert_eq!(captured.dropped, 27);
        let text = std::fs::read_to_string(dir.path().join("c")).unwrap();
        assert_eq!(
            text,
            "abcde\n[… 27 bytes dropped by the capture cap …]\nghijk"
        );
    }
}
