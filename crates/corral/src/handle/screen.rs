//! What a terminal handle's screen shows: a `vt100` parser fed every byte the program
//! printed, by the handle's watcher as the bytes arrive; and the escape-sequence stripper
//! that turns raw terminal output into text for a poll.

use std::num::NonZeroU16;
use std::sync::{Mutex, MutexGuard};

use serde::Serialize;

use super::keys::Modes;
use super::queries::Answers;
use super::request::HandleState;

/// The emulated terminal of one PTY handle.
pub(crate) struct Term {
    parser: Mutex<vt100::Parser<Answers>>,
    /// Whether to answer the program's queries (see [`super::queries`]).
    answers: bool,
}

impl std::fmt::Debug for Term {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (rows, cols) = self.size();
        f.debug_struct("Term")
            .field("rows", &rows)
            .field("cols", &cols)
            .finish()
    }
}

fn nz(n: u16) -> NonZeroU16 {
    NonZeroU16::new(n).unwrap_or(NonZeroU16::MIN)
}

impl Term {
    pub(crate) fn new(rows: u16, cols: u16, answers: bool) -> Self {
        Self {
            answers,
            parser: Mutex::new(vt100::Parser::new_with_callbacks(
                nz(rows),
                nz(cols),
                0,
                Answers::default(),
            )),
        }
    }

    fn parser(&self) -> MutexGuard<'_, vt100::Parser<Answers>> {
        self.parser.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Show what the program printed; returns what a terminal would answer it (see
    /// [`super::queries`]).
    pub(crate) fn feed(&self, bytes: &[u8]) -> Vec<u8> {
        let mut parser = self.parser();
        parser.process(bytes);
        let owed = parser.callbacks_mut().take();
        if self.answers { owed } else { Vec::new() }
    }

    pub(crate) fn resize(&self, rows: u16, cols: u16) {
        self.parser().set_size(nz(rows), nz(cols));
    }

    pub(crate) fn size(&self) -> (u16, u16) {
        let (rows, cols) = self.parser().screen().size();
        (rows.get(), cols.get())
    }

    /// The modes the program set that change what keys send.
    pub(crate) fn modes(&self) -> Modes {
        let parser = self.parser();
        let screen = parser.screen();
        Modes {
            application_cursor: screen.application_cursor(),
            bracketed_paste: screen.bracketed_paste(),
        }
    }

    /// The screen now, for `shell_screen`.
    pub(crate) fn snapshot(&self, handle: u32, state: HandleState) -> Screen {
        let parser = self.parser();
        let screen = parser.screen();
        let (rows, cols) = screen.size();
        let (rows, cols) = (rows.get(), cols.get());
        let (cursor_row, cursor_col) = screen.cursor_position();
        let mut lines: Vec<String> = screen
            .rows(0, cols)
            .map(|r| r.trim_end().to_string())
            .collect();
        while lines.last().is_some_and(String::is_empty) {
            lines.pop();
        }
        let alternate_screen = screen.alternate_screen();
        let bracketed_paste = screen.bracketed_paste();
        drop(parser);
        let mut observation = format!(
            "handle {handle}: {} · screen {rows}×{cols} · cursor at row {}, column {}{}\n",
            state.word().replace('_', " "),
            cursor_row + 1,
            cursor_col + 1,
            if alternate_screen {
                " · full-screen program"
            } else {
                ""
            }
        );
        for line in &lines {
            observation.push_str(line);
            observation.push('\n');
        }
        Screen {
            handle,
            state,
            rows,
            cols,
            cursor_row,
            cursor_col,
            lines,
            alternate_screen,
            bracketed_paste,
            observation,
        }
    }
}

/// What `shell_screen` answers: the screen as a terminal shows it now.
#[derive(Debug, Clone, Serialize)]
pub struct Screen {
    /// The handle.
    pub handle: u32,
    /// Where it is in its life (an ended handle shows its last screen).
    #[serde(flatten)]
    pub state: HandleState,
    /// The terminal's height.
    pub rows: u16,
    /// The terminal's width.
    pub cols: u16,
    /// The cursor's row, from 0 at the top.
    pub cursor_row: u16,
    /// The cursor's column, from 0 at the left.
    pub cursor_col: u16,
    /// The screen's rows from the top, trailing blanks trimmed, trailing empty rows left
    /// out.
    pub lines: Vec<String>,
    /// A full-screen program (an editor, a pager) is using the alternate screen.
    pub alternate_screen: bool,
    /// The program turned bracketed paste on: `paste:TEXT` keys arrive bracketed.
    pub bracketed_paste: bool,
    /// The text the model reads: a status line, then the screen's rows.
    pub observation: String,
}

/// Terminal output as text: escape sequences (CSI, OSC, DCS, charset selections) and
/// bells removed, `\r\n` turned into `\n`, and the line editing a terminal shows done:
/// a backspace takes back the character before it (`\b \b` erases one), and text after a
/// lone `\r` replaces the line it returned to (a progress bar, a prompt redrawn), as the
/// screen would show it.
pub(crate) fn strip_ansi(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    // Where the current line starts in `out`, and whether a lone `\r` went back to it.
    let mut line_start = 0;
    let mut returned = false;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        match b {
            0x1b => i = skip_escape(bytes, i),
            b'\r' if bytes.get(i + 1) == Some(&b'\n') => i += 1,
            b'\r' => {
                returned = true;
                i += 1;
            }
            0x08 => {
                // Back over one character (all of its UTF-8 bytes), not past the line.
                while out.len() > line_start {
                    let last = out.pop().unwrap_or(b'\n');
                    if last & 0xC0 != 0x80 {
                        break;
                    }
                }
                i += 1;
            }
            0x07 | 0x0e | 0x0f | 0x00 => i += 1,
            _ => {
                if b == b'\n' {
                    returned = false;
                    out.push(b);
                    line_start = out.len();
                } else {
                    if returned {
                        out.truncate(line_start);
                        returned = false;
                    }
                    out.push(b);
                }
                i += 1;
            }
        }
    }
    out
}

/// The index just past the escape sequence starting at `bytes[i]` (an ESC).
fn skip_escape(bytes: &[u8], i: usize) -> usize {
    let Some(&kind) = bytes.get(i + 1) else {
        return bytes.len();
    };
    match kind {
        b'[' => {
            // Parameters and intermediates, then one final byte in 0x40..=0x7e.
            let mut j = i + 2;
            while j < bytes.len() {
                if (0x40..=0x7e).contains(&bytes[j]) {
                    return j + 1;
                }
                j += 1;
            }
            bytes.len()
        }
        b']' | b'P' | b'X' | b'^' | b'_' => {
            // A string, ended by BEL or ST (ESC \).
            let mut j = i + 2;
            while j < bytes.len() {
                match bytes[j] {
                    0x07 => return j + 1,
                    0x1b if bytes.get(j + 1) == Some(&b'\\') => return j + 2,
                    _ => j += 1,
                }
            }
            bytes.len()
        }
        b'(' | b')' | b'*' | b'+' | b'#' | b'%' => (i + 3).min(bytes.len()),
        _ => i + 2,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_are_stripped() {
        let raw = b"\x1b[?2004h\x1b]0;title\x07\x1b[1;31mred\x1b[0m\r\nnext\x1b(B\x1b=\r\n";
        assert_eq!(strip_ansi(raw), b"red\nnext\n");
    }

    #[test]
    fn backspaces_and_returns_are_done_as_a_terminal_shows_them() {
        // A pasted typo erased with `\b \b`, a character of two bytes among them.
        assert_eq!(strip_ansi("ab€x\x08 \x08\x08 \x08c\n".as_bytes()), b"abc\n");
        // Never past the start of the line.
        assert_eq!(strip_ansi(b"a\n\x08\x08b\n"), b"a\nb\n");
        // A progress bar, and a prompt redrawn after a lone return.
        assert_eq!(strip_ansi(b"10%\r50%\r100%\ndone\n"), b"100%\ndone\n");
        assert_eq!(
            strip_ansi(b">>> prin\r>>> print(1)\r\n1\n"),
            b">>> print(1)\n1\n"
        );
        // A return that ends the output leaves the line as it was.
        assert_eq!(strip_ansi(b"50%\r"), b"50%");
    }

    #[test]
    fn the_screen_shows_what_was_printed() {
        let term = Term::new(5, 20, true);
        term.feed(b"hello\r\n\x1b[2;3Hxy");
        let s = term.snapshot(1, HandleState::Running);
        assert_eq!(s.lines, vec!["hello", "  xy"]);
        assert_eq!((s.cursor_row, s.cursor_col), (1, 4));
        term.feed(b"\x1b[?2004h");
        assert!(term.modes().bracketed_paste);
        term.resize(10, 40);
        assert_eq!(term.size(), (10, 40));
    }
}
