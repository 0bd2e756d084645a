//! Answers to what a program asks its terminal: where the cursor is, whether the terminal
//! is there, what kind it is, its colours. A real terminal answers at once; a program
//! that gets no answer waits for one (a line editor measuring its prompt) or warns
//! (prompt_toolkit's "your terminal doesn't support cursor position requests"). The
//! answers are written to the program's input as a terminal would write them.

use std::io::Write;

/// The `vt100` callbacks that collect the answers a handle's terminal owes its program.
#[derive(Debug, Default)]
pub(crate) struct Answers {
    pending: Vec<u8>,
}

impl Answers {
    /// What is owed since the last call.
    pub(crate) fn take(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.pending)
    }
}

impl vt100::Callbacks for Answers {
    fn unhandled_csi(
        &mut self,
        screen: &mut vt100::Screen,
        i1: Option<u8>,
        i2: Option<u8>,
        params: &[&[u16]],
        c: char,
    ) {
        // Only the exact forms: one plain parameter at most and no second intermediate,
        // so neither an unknown variant nor an answer echoed back is taken for a query.
        if i2.is_some() || params.len() > 1 || params.iter().any(|p| p.len() > 1) {
            return;
        }
        let first = params.first().and_then(|p| p.first()).copied().unwrap_or(0);
        let (row, col) = screen.cursor_position();
        // After the last column is written the cursor waits past it; a terminal reports
        // the last column.
        let col = col.min(screen.size().1.get().saturating_sub(1));
        let out = &mut self.pending;
        let _ = match (i1, c, first) {
            // Device status: "OK".
            (None, 'n', 5) => out.write_all(b"\x1b[0n"),
            // Cursor position report, 1-based.
            (None, 'n', 6) => write!(out, "\x1b[{};{}R", row + 1, col + 1),
            (Some(b'?'), 'n', 6) => write!(out, "\x1b[?{};{}R", row + 1, col + 1),
            // Primary device attributes: a VT100 with advanced video.
            (None, 'c', 0) => out.write_all(b"\x1b[?1;2c"),
            // Secondary device attributes.
            (Some(b'>'), 'c', 0) => out.write_all(b"\x1b[>0;0;0c"),
            _ => Ok(()),
        };
    }

    fn unhandled_osc(&mut self, _: &mut vt100::Screen, params: &[&[u8]]) {
        // Colour queries: white on black, as the screen is rendered.
        let answer: &[u8] = match params {
            [b"10", b"?"] => b"\x1b]10;rgb:ffff/ffff/ffff\x1b\\",
            [b"11", b"?"] => b"\x1b]11;rgb:0000/0000/0000\x1b\\",
            _ => return,
        };
        self.pending.extend_from_slice(answer);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answers(printed: &[u8]) -> Vec<u8> {
        let mut parser = vt100::Parser::new_with_callbacks(
            std::num::NonZeroU16::new(24).unwrap(),
            std::num::NonZeroU16::new(80).unwrap(),
            0,
            Answers::default(),
        );
        parser.process(printed);
        parser.callbacks_mut().take()
    }

    #[test]
    fn queries_get_a_terminals_answers() {
        assert_eq!(answers(b"ab\x1b[6n"), b"\x1b[1;3R");
        assert_eq!(answers(b"\r\n\r\n\x1b[?6n"), b"\x1b[?3;1R");
        assert_eq!(answers(b"\x1b[5n"), b"\x1b[0n");
        assert_eq!(answers(b"\x1b[c"), b"\x1b[?1;2c");
        assert_eq!(answers(b"\x1b[0c"), b"\x1b[?1;2c");
        assert_eq!(answers(b"\x1b[>c"), b"\x1b[>0;0;0c");
        assert_eq!(
            answers(b"\x1b]11;?\x07"),
            b"\x1b]11;rgb:0000/0000/0000\x1b\\"
        );
    }

    #[test]
    fn a_full_line_reports_the_last_column() {
        assert_eq!(
            answers(&[b"x".repeat(80), b"\x1b[6n".to_vec()].concat()),
            b"\x1b[1;80R"
        );
    }

    #[test]
    fn variants_and_echoed_answers_are_not_queries() {
        assert_eq!(answers(b"\x1b[6;5n"), b"");
        assert_eq!(answers(b"\x1b[0;1c"), b"");
        // The answers themselves, printed back by a program that echoes its input.
        assert_eq!(answers(b"\x1b[>0;0;0c\x1b[?1;2c\x1b[1;1R"), b"");
    }

    #[test]
    fn output_that_asks_nothing_is_owed_nothing() {
        assert_eq!(
            answers(b"hello\x1b[31mred\x1b[0m\x1b[2J\x1b]0;title\x07"),
            b""
        );
    }
}
