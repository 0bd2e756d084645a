//! Text a person reads, with everything that could hide or rewrite it written visibly.
//!
//! A model chooses argvs and file names, and commands print what they like; a person then
//! reads them in an approval question, an undo listing or a trace. Written raw, a control
//! character acts on the terminal (`\r` and cursor moves hide text, OSC 52 writes the
//! clipboard, OSC 8 plants links), a bidi control reorders what follows it, and a
//! zero-width character makes two different names look the same. This module is the one
//! place that decides which characters those are and how they are written, so that every
//! crate shows them the same way:
//!
//! - C0 controls (`\n`, `\t`, ESC, CR, BS …) and DEL as `\xHH` (`\x1b`);
//! - C1 controls (U+0080–U+009F), bidi controls (U+202A–202E, U+2066–2069, U+200E/200F,
//!   U+061C) and zero-width characters (U+200B–200D, U+2060, U+FEFF) as `\uHHHH`
//!   (`\u202e`);
//! - bytes that are not UTF-8 as `\xHH`.
//!
//! These are bash's own escapes inside `$'…'`, so [`quote`](crate::quote) can write such a
//! word in a form bash reads back. Right-to-left letters are not escaped: a Hebrew file
//! name is shown as written. A backslash is not doubled, so the output of an escape is
//! escaped again unchanged.
//!
//! A long value is clipped in the middle ([`clipped`]), its head and tail shown and its
//! full length stated, so that what comes after a megabyte of padding is still seen.

use std::borrow::Cow;
use std::fmt::Write;

/// Whether newlines and tabs pass as they are (text of several lines, a command's output)
/// or are escaped too (one value on one line: an argument, a file name).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lines {
    /// `\n` and `\t` pass; every other hidden character is escaped.
    Keep,
    /// Every hidden character is escaped, `\n` and `\t` included.
    Escape,
}

/// Whether `c` is written escaped (see the module docs). `\n` and `\t` are, unless the
/// caller keeps lines.
pub fn is_hidden(c: char) -> bool {
    matches!(
        c,
        '\0'..='\x1f'
            | '\x7f'..='\u{9f}'
            | '\u{061c}'
            | '\u{200b}'..='\u{200f}'
            | '\u{202a}'..='\u{202e}'
            | '\u{2060}'
            | '\u{2066}'..='\u{2069}'
            | '\u{feff}'
    )
}

/// Append `c` to `out`, escaped if it is hidden.
pub fn push(c: char, lines: Lines, out: &mut String) {
    if !is_hidden(c) || (lines == Lines::Keep && matches!(c, '\n' | '\t')) {
        out.push(c);
    } else if c.is_ascii() {
        let _ = write!(out, "\\x{:02x}", c as u32);
    } else {
        let _ = write!(out, "\\u{:04x}", c as u32);
    }
}

/// `s` with every hidden character escaped; borrowed when there is none.
pub fn escaped(s: &str, lines: Lines) -> Cow<'_, str> {
    let keeps = |c: char| !is_hidden(c) || (lines == Lines::Keep && matches!(c, '\n' | '\t'));
    if s.chars().all(keeps) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        push(c, lines, &mut out);
    }
    Cow::Owned(out)
}

/// Escape `bytes` onto `out`: UTF-8 as [`escaped`], each byte that is not part of valid
/// UTF-8 as `\xHH`. When `more` is true, an incomplete UTF-8 sequence at the very end is
/// left unwritten and its length returned, so a stream can prepend it to what comes next;
/// otherwise it is escaped and 0 is returned.
pub fn escape_bytes(mut bytes: &[u8], lines: Lines, more: bool, out: &mut String) -> usize {
    loop {
        match std::str::from_utf8(bytes) {
            Ok(s) => {
                out.push_str(&escaped(s, lines));
                return 0;
            }
            Err(e) => {
                let (good, rest) = bytes.split_at(e.valid_up_to());
                // `from_utf8` just said these bytes are UTF-8: the default is never taken.
                out.push_str(&escaped(
                    std::str::from_utf8(good).unwrap_or_default(),
                    lines,
                ));
                let bad = match e.error_len() {
                    Some(n) => n,
                    None if more => return rest.len(),
                    None => rest.len(),
                };
                for b in &rest[..bad] {
                    let _ = write!(out, "\\x{b:02x}");
                }
                bytes = &rest[bad..];
            }
        }
    }
}

/// `bytes` as text a person reads: see [`escape_bytes`].
pub fn escaped_bytes(bytes: &[u8], lines: Lines) -> Cow<'_, str> {
    if let Ok(s) = std::str::from_utf8(bytes) {
        return escaped(s, lines);
    }
    let mut out = String::with_capacity(bytes.len() + 16);
    escape_bytes(bytes, lines, false, &mut out);
    Cow::Owned(out)
}

/// `s` shown within about `max` bytes of the original: whole when it fits, else its head
/// and tail each passed through `show`, with the full length stated between them:
/// `aaaa[… 1048576 bytes in all, 1048064 not shown …]zzzz`.
pub fn clipped<'a>(s: &'a str, max: usize, show: impl Fn(&'a str) -> Cow<'a, str>) -> Cow<'a, str> {
    if s.len() <= max {
        return show(s);
    }
    let half = max / 2;
    let head = floor_char_boundary(s, half);
    let tail = ceil_char_boundary(s, s.len() - half);
    let omitted = tail - head;
    Cow::Owned(format!(
        "{}[… {} bytes in all, {omitted} not shown …]{}",
        show(&s[..head]),
        s.len(),
        show(&s[tail..])
    ))
}

/// One value (an argument, a path, a name) as a person reads it: escaped with
/// [`Lines::Escape`] and clipped to about `max` bytes of the original.
pub fn value(s: &str, max: usize) -> Cow<'_, str> {
    clipped(s, max, |part| escaped(part, Lines::Escape))
}

fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn ceil_char_boundary(s: &str, mut i: usize) -> usize {
    while !s.is_char_boundary(i) {
        i += 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hidden_characters_are_written_as_bash_reads_them_in_ansi_c_quotes() {
        assert_eq!(
            escaped(
                "a\x1b]52;c;eA==\x07\rb\u{202e}c\u{200d}d\u{85}\u{feff}",
                Lines::Escape
            ),
            "a\\x1b]52;c;eA==\\x07\\x0db\\u202ec\\u200dd\\u0085\\ufeff"
        );
        assert_eq!(escaped("one\n\ttwo", Lines::Keep), "one\n\ttwo");
        assert_eq!(escaped("one\n\ttwo", Lines::Escape), "one\\x0a\\x09two");
    }

    #[test]
    fn right_to_left_letters_are_shown_as_written() {
        assert!(matches!(
            escaped("שלום.txt", Lines::Escape),
            Cow::Borrowed("שלום.txt")
        ));
    }

    #[test]
    fn invalid_utf8_is_escaped_and_an_unfinished_sequence_held_for_a_stream() {
        assert_eq!(
            escaped_bytes(b"a\xffb\xe2\x80", Lines::Keep),
            "a\\xffb\\xe2\\x80"
        );
        let mut out = String::new();
        assert_eq!(escape_bytes(b"a\xe2\x80", Lines::Keep, true, &mut out), 2);
        assert_eq!(out, "a");
    }

    #[test]
    fn a_long_value_keeps_its_head_and_tail_and_states_its_length() {
        let long = format!("{}clean -fdx", "a".repeat(1 << 20));
        let shown = value(&long, 64);
        assert!(shown.len() < 128, "{shown}");
        assert!(shown.ends_with("clean -fdx"), "{shown}");
        assert!(shown.contains("1048586 bytes in all"), "{shown}");
    }
}
