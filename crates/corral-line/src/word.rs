//! Quote removal: the value of each word part.

use crate::ast::{Span, Word};
use crate::brace::Atom;
use crate::lexer::Part;

const CONTINUATION: &str = "\\\n";

/// The word brace expansion left as `atoms`: its value, pattern and leading `~` as
/// [`crate::parser`] makes them from parts.
pub(crate) fn from_atoms(atoms: &[Atom], span: Span) -> Word {
    let mut value = String::new();
    let mut glob = String::new();
    let mut globbed = false;
    for atom in atoms {
        match atom {
            Atom::Char(c) => {
                value.push(*c);
                glob.push_str(&escape_glob(c.encode_utf8(&mut [0; 4])));
            }
            Atom::Part(part, text) => {
                globbed |= *part == Part::Glob;
                pattern(*part, text, &mut glob);
                cook(*part, text, &mut value);
            }
        }
    }
    Word {
        value,
        span,
        tilde: matches!(atoms.first(), Some(Atom::Part(Part::Tilde, _))),
        glob: globbed.then_some(glob),
    }
}

/// Appends the value of one part, given its source text, to `out`.
pub(crate) fn cook(part: Part, text: &str, out: &mut String) {
    match part {
        Part::Plain => push_without_continuations(text, out),
        Part::Escaped => out.push_str(&text[1..]),
        Part::Single => out.push_str(inner(text)),
        Part::Double => unescape_double(inner(text), out),
        Part::Tilde => out.push('~'),
        Part::Glob => out.push_str(text),
    }
}

/// Appends one part to a word's glob pattern: a glob part as written, everything
/// else as the literal text it stands for.
pub(crate) fn pattern(part: Part, text: &str, out: &mut String) {
    if part == Part::Glob {
        out.push_str(text);
    } else {
        let mut value = String::new();
        cook(part, text, &mut value);
        out.push_str(&escape_glob(&value));
    }
}

/// `text` with every character a glob pattern gives a meaning to made literal.
pub fn escape_glob(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '*' | '?' | '[' | ']' | '{' | '}' | '\\' | ',' => {
                out.push('[');
                out.push(c);
                out.push(']');
            }
            c => out.push(c),
        }
    }
    out
}

/// Finds brace expansion across a word's unquoted parts: an unquoted `{`,
/// then an unquoted `,` or `..`, then its `}`. Other braces are literal to
/// bash (`{}`, `stash@{0}`, `-I{}`).
#[derive(Debug, Default)]
pub(crate) struct BraceScan {
    /// Source offsets of the open braces, and whether each holds a `,` or `..`.
    open: Vec<(usize, bool)>,
    last_dot: Option<usize>,
}

impl BraceScan {
    /// Feed one unquoted part whose text starts at `start` in the source;
    /// the span of the first brace expansion it completes.
    pub(crate) fn scan(&mut self, text: &str, start: usize) -> Option<Span> {
        for (i, c) in text.char_indices() {
            let at = start + i;
            match c {
                '{' => self.open.push((at, false)),
                ',' => self.mark(),
                '.' if self.last_dot == Some(at.wrapping_sub(1)) => self.mark(),
                '}' => {
                    if let Some((from, true)) = self.open.pop() {
                        return Some(Span::new(from, at + 1));
                    }
                }
                _ => {}
            }
            self.last_dot = (c == '.').then_some(at);
        }
        None
    }

    fn mark(&mut self) {
        if let Some(top) = self.open.last_mut() {
            top.1 = true;
        }
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
        // The lexer admits a `$` here only as the start of `$(cat <<'EOF' …)`.
        if c == '$'
            && let Some((len, value)) = crate::lexer::cat_here_doc(chars.as_str())
        {
            out.push_str(&value);
            chars = chars.as_str()[len..].chars();
            continue;
        }
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
