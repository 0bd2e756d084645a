//! The inverse of parsing one word: how corral writes an argv back out.

use std::borrow::Cow;

use crate::lexer::is_plain;
use crate::parser::KEYWORDS;
use crate::visible;
use crate::word::is_name;

/// Quote a word so that [`parse`](crate::parse) gives it back unchanged as
/// one word: as is when every character is admitted unquoted and the word
/// cannot be read as a keyword or an assignment, otherwise in single quotes
/// with each `'` written as `'\''`.
///
/// A word holding a character a person must not read raw (a control, a bidi
/// control, a zero-width character: see [`visible`](crate::visible)) is
/// written in bash's ANSI-C quotes instead, each such character escaped
/// (`$'color.x=\x1b[2K\x0d'`): bash reads it back as the same word, no
/// terminal acts on it, and corral's parser refuses it by name
/// ([`Construct::AnsiCQuote`](crate::Construct::AnsiCQuote)) rather than
/// taking the escapes as text.
pub fn quote(word: &str) -> Cow<'_, str> {
    if word.chars().any(visible::is_hidden) {
        return Cow::Owned(ansi_c(word));
    }
    if is_bare_safe(word) {
        return Cow::Borrowed(word);
    }
    let mut out = String::with_capacity(word.len() + 2);
    out.push('\'');
    for c in word.chars() {
        if c == '\'' {
            out.push_str("'\\''");
        } else {
            out.push(c);
        }
    }
    out.push('\'');
    Cow::Owned(out)
}

/// Display an argv the one shell-escaped way corral uses everywhere: each
/// word passed through [`quote`], joined by single spaces.
pub fn display_argv<S: AsRef<str>>(argv: &[S]) -> String {
    let mut out = String::new();
    for (i, word) in argv.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        out.push_str(&quote(word.as_ref()));
    }
    out
}

/// `$'…'` with `\\`, `\'` and every hidden character escaped.
fn ansi_c(word: &str) -> String {
    let mut out = String::with_capacity(word.len() + 8);
    out.push_str("$'");
    for c in word.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            c => visible::push(c, visible::Lines::Escape, &mut out),
        }
    }
    out.push('\'');
    out
}

fn is_bare_safe(word: &str) -> bool {
    let all_plain = word.chars().all(|c| is_plain(c) || c == '#');
    let looks_assigned = word
        .split_once('=')
        .is_some_and(|(name, _)| is_name(name) || name.strip_suffix('+').is_some_and(is_name));
    all_plain
        && !word.is_empty()
        && !word.starts_with('#')
        && !looks_assigned
        && !KEYWORDS.contains(&word)
}
