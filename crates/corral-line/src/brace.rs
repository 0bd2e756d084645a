//! Brace expansion, as bash does it before every other expansion: `a{b,c}d` is `abd acd`,
//! `{1..3}` is `1 2 3`, `{01..10..3}` is `01 04 07 10`, `{a..e..2}` is `a c e`. Only
//! unquoted braces and commas count; a brace that has no partner, or holds neither a
//! comma nor a valid sequence (`{}`, `{x}`, `{1..a}`), stays literal.

use crate::lexer::Part;

/// One piece of a word: an unquoted character that brace expansion may act on, or a part
/// it passes through whole (quoted, escaped, a pattern, `~`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Atom {
    Char(char),
    Part(Part, String),
}

/// Every word `atoms` expands to, in bash's order. A result with no atoms at all (the
/// empty alternative of `{a,}`) is dropped, as bash drops an unquoted empty word.
pub(crate) fn expand(atoms: &[Atom]) -> Vec<Vec<Atom>> {
    let mut out = Vec::new();
    expand_into(atoms, &mut out);
    out.retain(|w| !w.is_empty());
    out
}

fn expand_into(atoms: &[Atom], out: &mut Vec<Vec<Atom>>) {
    for open in 0..atoms.len() {
        if atoms[open] != Atom::Char('{') {
            continue;
        }
        let Some(close) = partner(atoms, open) else {
            continue;
        };
        let inner = &atoms[open + 1..close];
        let alternatives = match commas(inner) {
            Some(alternatives) => alternatives,
            None => match sequence(inner) {
                Some(items) => items,
                None => continue,
            },
        };
        for alternative in alternatives {
            let mut word = atoms[..open].to_vec();
            word.extend(alternative);
            word.extend_from_slice(&atoms[close + 1..]);
            expand_into(&word, out);
        }
        return;
    }
    out.push(atoms.to_vec());
}

/// The `}` that closes the `{` at `open`.
fn partner(atoms: &[Atom], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (i, atom) in atoms.iter().enumerate().skip(open) {
        match atom {
            Atom::Char('{') => depth += 1,
            Atom::Char('}') => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// `inner` split at its commas outside nested braces, when it has any.
fn commas(inner: &[Atom]) -> Option<Vec<Vec<Atom>>> {
    let mut parts = vec![Vec::new()];
    let mut depth = 0usize;
    for atom in inner {
        match atom {
            Atom::Char('{') => depth += 1,
            Atom::Char('}') => depth = depth.saturating_sub(1),
            Atom::Char(',') if depth == 0 => {
                parts.push(Vec::new());
                continue;
            }
            _ => {}
        }
        parts.last_mut().expect("never empty").push(atom.clone());
    }
    (parts.len() > 1).then_some(parts)
}

/// `X..Y` or `X..Y..STEP`, all unquoted: integers (zero-padded when an end is written
/// with a leading zero) or single letters.
fn sequence(inner: &[Atom]) -> Option<Vec<Vec<Atom>>> {
    let text: String = inner
        .iter()
        .map(|a| match a {
            Atom::Char(c) => Some(*c),
            Atom::Part(..) => None,
        })
        .collect::<Option<_>>()?;
    let fields: Vec<&str> = text.split("..").collect();
    let (from, to, step) = match fields.as_slice() {
        [from, to] => (*from, *to, None),
        [from, to, step] => (*from, *to, Some(*step)),
        _ => return None,
    };
    let step = match step {
        Some(s) => integer(s)?.unsigned_abs().max(1),
        None => 1,
    };
    let words: Vec<String> = if let (Some(a), Some(b)) = (integer(from), integer(to)) {
        let width = if padded(from) || padded(to) {
            from.len().max(to.len())
        } else {
            0
        };
        steps(a, b, step)
            .into_iter()
            .map(|n| {
                if n < 0 {
                    format!("-{:0w$}", n.unsigned_abs(), w = width.saturating_sub(1))
                } else {
                    format!("{n:0width$}")
                }
            })
            .collect()
    } else {
        let (a, b) = (letter(from)?, letter(to)?);
        steps(i64::from(a), i64::from(b), step)
            .into_iter()
            .filter_map(|n| u8::try_from(n).ok().map(|b| char::from(b).to_string()))
            .collect()
    };
    Some(
        words
            .into_iter()
            .map(|w| vec![Atom::Part(Part::Single, format!("'{w}'"))])
            .collect(),
    )
}

fn steps(from: i64, to: i64, step: u64) -> Vec<i64> {
    let step = i64::try_from(step).unwrap_or(i64::MAX);
    let mut out = Vec::new();
    let mut n = from;
    // bash caps a sequence's length; so does corral, well above what a line needs.
    while out.len() < 100_000 {
        out.push(n);
        let next = if from <= to {
            n.checked_add(step)
        } else {
            n.checked_sub(step)
        };
        match next {
            Some(m) if (from <= to && m <= to) || (from > to && m >= to) => n = m,
            _ => break,
        }
    }
    out
}

fn integer(s: &str) -> Option<i64> {
    let digits = s.strip_prefix(['-', '+']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

fn padded(s: &str) -> bool {
    let digits = s.strip_prefix('-').unwrap_or(s);
    digits.len() > 1 && digits.starts_with('0')
}

fn letter(s: &str) -> Option<u8> {
    match s.as_bytes() {
        [b] if b.is_ascii_alphabetic() => Some(*b),
        _ => None,
    }
}
