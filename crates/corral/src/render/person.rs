//! What a person reads: the one renderer of every string corral shows a person (an
//! approval question over MCP or on a terminal, `corral undo`'s listing, `corral trace`).
//!
//! A model chooses argvs and file names, and commands print what they like. Every such
//! string reaches a person through this module, which writes control characters, bidi
//! controls, zero-width characters and bytes that are not UTF-8 visibly (`\x1b`,
//! `\u202e`, `\xff`: see [`corral_line::visible`], where the one list of them lives) and
//! clips a long value in the middle with its full length stated. Right-to-left letters
//! are shown as written.
//!
//! - [`value`] and [`path`]: one value on one line.
//! - [`argv`]: an argv, shell-quoted as everywhere ([`corral_line::quote`]), each word and
//!   the whole clipped.
//! - [`Escaped`]: a writer that does the same to a stream (a command's output in a
//!   trace), keeping newlines and tabs.

use std::borrow::Cow;
use std::io::{self, Write};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

pub use corral_line::visible::{Lines, escaped, escaped_bytes, is_hidden};

/// How much of one value (an argument, a path) is shown before it is clipped.
pub const VALUE_MAX: usize = 512;

/// How much of a whole argv is shown before words are left out of the middle.
pub const ARGV_MAX: usize = 4096;

/// One value on one line: escaped, and clipped to about [`VALUE_MAX`] bytes.
pub fn value(s: &str) -> Cow<'_, str> {
    corral_line::visible::value(s, VALUE_MAX)
}

/// A path on one line: its bytes escaped (those that are not UTF-8 as `\xHH`), clipped to
/// about [`VALUE_MAX`] bytes.
pub fn path(p: &Path) -> String {
    let bytes = p.as_os_str().as_bytes();
    match std::str::from_utf8(bytes) {
        Ok(s) => value(s).into_owned(),
        Err(_) => value(&escaped_bytes(bytes, Lines::Escape)).into_owned(),
    }
}

/// An argv as a person reads it: each word shell-quoted ([`corral_line::quote`], which
/// escapes what must not be read raw) and clipped to about [`VALUE_MAX`] bytes; past
/// [`ARGV_MAX`] bytes in all, words are left out of the middle and how many is said, so
/// the program and the last words are always seen.
pub fn argv<S: AsRef<str>>(argv: &[S]) -> String {
    let words: Vec<Cow<'_, str>> = argv
        .iter()
        .map(|w| corral_line::visible::clipped(w.as_ref(), VALUE_MAX, corral_line::quote))
        .collect();
    let shown: usize = words.iter().map(|w| w.len() + 1).sum();
    if shown <= ARGV_MAX {
        return words.join(" ");
    }
    let budget = ARGV_MAX / 2;
    let fits = |ws: &mut dyn Iterator<Item = &Cow<'_, str>>| {
        let mut used = 0;
        ws.take_while(|w| {
            used += w.len() + 1;
            used <= budget
        })
        .count()
        .max(1)
    };
    let head = fits(&mut words.iter());
    let tail = fits(&mut words.iter().rev()).min(words.len() - head);
    let total: usize = argv.iter().map(|w| w.as_ref().len() + 1).sum::<usize>() - 1;
    let left_out = words.len() - head - tail;
    format!(
        "{} [… {left_out} of {} words not shown; the argv is {total} bytes in all …] {}",
        words[..head].join(" "),
        words.len(),
        words[words.len() - tail..].join(" ")
    )
}

/// A writer that escapes what a person must not read raw (see the module docs) when `on`,
/// keeping newlines and tabs; otherwise (a file, a pipe) it passes the bytes as they are.
/// A UTF-8 sequence split across two writes is held until the next write or a flush.
#[derive(Debug)]
pub struct Escaped<W: Write> {
    inner: W,
    on: bool,
    /// The start of a UTF-8 sequence that ended the last write.
    held: Vec<u8>,
}

impl<W: Write> Escaped<W> {
    /// Escape what goes to `inner` when `on` (stdout is a terminal).
    pub fn new(inner: W, on: bool) -> Self {
        Self {
            inner,
            on,
            held: Vec::new(),
        }
    }
}

impl<W: Write> Write for Escaped<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if !self.on {
            return self.inner.write(buf);
        }
        let mut bytes = std::mem::take(&mut self.held);
        bytes.extend_from_slice(buf);
        let mut out = String::with_capacity(bytes.len() + 8);
        let held = corral_line::visible::escape_bytes(&bytes, Lines::Keep, true, &mut out);
        self.held = bytes[bytes.len() - held..].to_vec();
        self.inner.write_all(out.as_bytes())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        let held = std::mem::take(&mut self.held);
        if !held.is_empty() {
            let shown = escaped_bytes(&held, Lines::Keep);
            self.inner.write_all(shown.as_bytes())?;
        }
        self.inner.flush()
    }
}

impl<W: Write> Drop for Escaped<W> {
    fn drop(&mut self) {
        let _ = self.flush();
    }
}

#[cfg(test)]
mod tests;
