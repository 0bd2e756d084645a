//! Quote removal: the value of each word part.

use crate::lexer::Part;

const CONTINUATION: &str = "\\\n";

/// Appends the value of one part, given its source text, to `out`.
pub(crate) fn cook(part: Part, text: &str, out: &mut String) {
    match part {
        Part::Plain => push_without_continuations(text, out),
        Part::Escaped => out.push_str(&text[1..]),
        Part::Single => out.push_str(inner(text)),
        Part::Double => unescape_double(inner(text), out),
    }
}

fn inner(quoted: &str) -> &str {
    quoted.get(1..quoted.len().saturating_sub(1)).unwrap_or("")
}

fn push_without_continuations(text: &str, out: &mut String) {
    let mut rest = text;
    while let Some(i) = rest.find(CONTINUATION) {
        out.push_str(&rest[..i]);
        rest = &rest[i + CONTINUATION.len()..];
    }
    out.push_str(rest);
}

/// Inside double quotes a backslash escapes only `"`, `\`, `$`, backtick and
/// newline (POSIX); before anything else it stays.
fn unescape_double(text: &str, out: &mut String) {
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('\n') => {}
            Some(e @ ('"' | '\\' | '$' | '`')) => out.push(e),
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
}

/// `[A-Za-z_][A-Za-z0-9_]*`
pub(crate) fn is_name(s: &str) -> bool {
    let mut bytes = s.bytes();
    bytes
        .next()
        .is_some_and(|b| b == b'_' || b.is_ascii_alphabetic())
        && bytes.all(|b| b == b'_' || b.is_ascii_alphanumeric())
}

/// The source offset of the `cooked`-th byte of an unquoted part's value
/// starting at `start`, looking through continuations.
pub(crate) fn source_offset(src: &str, start: usize, cooked: usize) -> usize {
    let mut i = start;
    let mut n = 0;
    while n < cooked {
        if src[i..].starts_with(CONTINUATION) {
            i += CONTINUATION.len();
            continue;
        }
        let Some(c) = src[i..].chars().next() else {
            break;
        };
        i += c.len_utf8();
        n += c.len_utf8();
    }
    i
}
