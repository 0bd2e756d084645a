//! What corral prints of a command's bytes, made safe for the terminal it is printed on.
//!
//! A trace holds what commands printed and the argv a model chose; printed raw to a
//! terminal, an escape sequence in it acts on the person's terminal: `\r` and cursor
//! moves hide text, OSC 52 writes the clipboard, OSC 8 plants links, some terminals answer
//! queries into the input. [`Escaped`] passes newlines and tabs and writes every other
//! control character as `\xHH` (C0 and DEL as bytes, the C1 controls U+0080–U+009F as
//! their UTF-8 encoding), when it writes to a terminal; anything else (a file, a pipe)
//! gets the bytes as they are.

use std::io::{self, Write};

/// A writer that escapes control characters when `on` (see the module docs).
pub struct Escaped<W: Write> {
    inner: W,
    on: bool,
    /// A `0xC2` that ended the last write: the start of a C1 control, or of a letter.
    held: bool,
}

impl<W: Write> Escaped<W> {
    /// Escape what goes to `inner` when `on` (stdout is a terminal).
    pub fn new(inner: W, on: bool) -> Self {
        Self {
            inner,
            on,
            held: false,
        }
    }
}

impl<W: Write> Write for Escaped<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if !self.on {
            return self.inner.write(buf);
        }
        let mut out = Vec::with_capacity(buf.len() + 8);
        let mut bytes = buf.iter().copied().peekable();
        if self.held {
            self.held = false;
            match bytes.peek() {
                Some(b @ 0x80..=0x9f) => {
                    out.extend_from_slice(format!("\\xc2\\x{b:02x}").as_bytes());
                    bytes.next();
                }
                _ => out.push(0xc2),
            }
        }
        while let Some(b) = bytes.next() {
            match b {
                b'\n' | b'\t' => out.push(b),
                0x00..=0x1f | 0x7f => out.extend_from_slice(format!("\\x{b:02x}").as_bytes()),
                0xc2 => match bytes.peek() {
                    Some(next @ 0x80..=0x9f) => {
                        out.extend_from_slice(format!("\\xc2\\x{next:02x}").as_bytes());
                        bytes.next();
                    }
                    Some(_) => out.push(b),
                    None => self.held = true,
                },
                _ => out.push(b),
            }
        }
        self.inner.write_all(&out)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if std::mem::take(&mut self.held) {
            self.inner.write_all(&[0xc2])?;
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
mod tests {
    use super::*;

    fn escaped(chunks: &[&[u8]]) -> String {
        let mut out = Vec::new();
        {
            let mut w = Escaped::new(&mut out, true);
            for c in chunks {
                w.write_all(c).unwrap();
            }
        }
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn controls_are_shown_not_obeyed() {
        assert_eq!(
            escaped(&[b"ok\r\x1b]52;c;cm0gLXJm\x07\tend\n"]),
            "ok\\x0d\\x1b]52;c;cm0gLXJm\\x07\tend\n"
        );
        // A C1 CSI in UTF-8, split across two writes; a letter of the same lead byte.
        assert_eq!(
            escaped(&[b"a\xc2", b"\x9b2J\xc2\xa9"]),
            "a\\xc2\\x9b2J\u{a9}"
        );
    }

    #[test]
    fn off_a_terminal_the_bytes_are_kept() {
        let mut out = Vec::new();
        Escaped::new(&mut out, false)
            .write_all(b"\x1b[31mred")
            .unwrap();
        assert_eq!(out, b"\x1b[31mred");
    }
}
