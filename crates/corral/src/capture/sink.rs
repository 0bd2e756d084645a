use std::fs::File;
use std::io::{self, Write};
use std::path::PathBuf;

use serde::Serialize;

/// One stream of one command, being captured.
pub(crate) struct Sink {
    path: PathBuf,
    file: Option<File>,
    bytes: u64,
    newlines: u64,
    last_byte: Option<u8>,
    tee: Option<Box<dyn Write + Send>>,
}

impl std::fmt::Debug for Sink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sink")
            .field("path", &self.path)
            .field("bytes", &self.bytes)
            .finish()
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
    /// The capture file holding every byte, absent when the stream was empty.
    pub path: Option<PathBuf>,
}

impl Sink {
    /// A sink that will write to `path` once there is something to write.
    pub(crate) fn new(path: PathBuf) -> Self {
        Self {
            path,
            file: None,
            bytes: 0,
            newlines: 0,
            last_byte: None,
            tee: None,
        }
    }

    /// Also copy every chunk to `tee` as it arrives. A failing tee (a closed terminal) is
    /// dropped; the capture goes on.
    pub(crate) fn with_tee(mut self, tee: Box<dyn Write + Send>) -> Self {
        self.tee = Some(tee);
        self
    }

    pub(crate) fn write(&mut self, chunk: &[u8]) -> io::Result<()> {
        if chunk.is_empty() {
            return Ok(());
        }
        let file = match &mut self.file {
            Some(f) => f,
            None => self.file.insert(File::create(&self.path)?),
        };
        file.write_all(chunk)?;
        self.bytes += chunk.len() as u64;
        self.newlines += memchr::memchr_iter(b'\n', chunk).count() as u64;
        self.last_byte = chunk.last().copied();
        if let Some(tee) = &mut self.tee
            && tee.write_all(chunk).and_then(|()| tee.flush()).is_err()
        {
            self.tee = None;
        }
        Ok(())
    }

    pub(crate) fn finish(self) -> Captured {
        let partial = u64::from(self.last_byte.is_some_and(|b| b != b'\n'));
        Captured {
            bytes: self.bytes,
            lines: self.newlines + partial,
            newlines: self.newlines,
            path: self.file.map(|_| self.path),
        }
    }
}
