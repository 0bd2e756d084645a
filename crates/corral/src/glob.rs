//! File-name patterns in a line (`*.rs`, `test_?.py`, `src/[ab]*`), expanded while the
//! line is planned, as bash expands them with its default options: each `/`-separated
//! part matched against the names in its directory, `*` and `?` never matching a `/` or
//! a leading `.`, `**` no more than `*`, the matches sorted byte by byte (bash in the C
//! locale), and the word as written (quotes removed) when nothing matches. The argv that
//! is checked is the argv that runs; a file that a stage before it in the same line
//! creates is not among the matches, since the line is planned before it starts.
//!
//! The names are read in corral's own process, so what the call's box hides is left out
//! here as the box would leave it out (`hidden`, from [`crate::sandbox::sets`]): a pattern
//! under a hidden directory matches nothing, and a hidden name is never a match.

use std::path::{Path, PathBuf};

use globset::GlobBuilder;

use crate::error::{Error, Result};

/// The most names one pattern may expand to.
const MAX_MATCHES: usize = 10_000;

/// Which paths a call may not see, as the box hides them: a question, so that planning
/// asks only where a line has a pattern.
#[derive(Clone, Copy)]
pub(crate) struct Hidden<'a>(pub &'a dyn Fn(&Path) -> bool);

impl Hidden<'_> {
    /// Nothing hidden: no box, or a question asked for no call.
    pub(crate) const NONE: Hidden<'static> = Hidden(&|_| false);
}

impl std::fmt::Debug for Hidden<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Hidden(..)")
    }
}

/// The words `pattern` expands to in `cwd`, or `[literal]` when nothing matches; no path
/// `hidden` answers true for is read or matched.
pub(crate) fn expand(
    pattern: &str,
    literal: &str,
    cwd: &Path,
    hidden: Hidden<'_>,
) -> Result<Vec<String>> {
    let hidden = hidden.0;
    let absolute = pattern.starts_with('/');
    let parts: Vec<&str> = pattern.split('/').filter(|p| !p.is_empty()).collect();
    // Each candidate: the path to read, and the text of the word so far.
    let mut found: Vec<(PathBuf, String)> = vec![if absolute {
        (PathBuf::from("/"), "/".to_string())
    } else {
        (cwd.to_path_buf(), String::new())
    }];
    for (i, part) in parts.iter().enumerate() {
        let last = i + 1 == parts.len();
        let mut next = Vec::new();
        for (dir, text) in &found {
            let join = |name: &str| {
                let word = if text.is_empty() || text.ends_with('/') {
                    format!("{text}{name}")
                } else {
                    format!("{text}/{name}")
                };
                (dir.join(name), word)
            };
            if !has_magic(part) {
                let name = unescape(part);
                let (path, word) = join(&name);
                if last || path.is_dir() {
                    next.push((path, word));
                }
                continue;
            }
            let matcher = component(part)?;
            if hidden(dir) {
                continue;
            }
            let Ok(entries) = std::fs::read_dir(dir) else {
                continue;
            };
            let mut names: Vec<String> = entries
                .filter_map(|e| e.ok())
                .filter_map(|e| e.file_name().into_string().ok())
                .filter(|n| !n.starts_with('.') || part.starts_with('.'))
                .filter(|n| matcher.is_match(n))
                .filter(|n| !hidden(&dir.join(n)))
                .collect();
            names.sort();
            for name in names {
                let (path, word) = join(&name);
                if last || path.is_dir() {
                    next.push((path, word));
                }
            }
        }
        if next.len() > MAX_MATCHES {
            return Err(Error::invalid(format!(
                "`{literal}` matches more than {MAX_MATCHES} names: narrow the pattern, or use find"
            )));
        }
        found = next;
    }
    // A trailing `/` (`*/`) keeps only directories, and stays on the word.
    let trailing = pattern.ends_with('/') && !parts.is_empty();
    let mut words: Vec<String> = found
        .into_iter()
        .filter(|(path, _)| path.symlink_metadata().is_ok() && (!trailing || path.is_dir()))
        .map(|(_, word)| if trailing { format!("{word}/") } else { word })
        .collect();
    words.sort();
    if words.is_empty() {
        words.push(literal.to_string());
    }
    Ok(words)
}

/// Whether a part holds an unescaped `*`, `?` or bracket expression (the escapes the
/// parser writes are one character in brackets: `[*]`).
fn has_magic(part: &str) -> bool {
    let mut chars = part.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '*' | '?' => return true,
            '[' => {
                // `[x]`: one escaped character, literal.
                let mut ahead = chars.clone();
                let escaped = ahead.next().is_some() && ahead.next() == Some(']');
                if escaped {
                    chars.next();
                    chars.next();
                } else {
                    return true;
                }
            }
            _ => {}
        }
    }
    false
}

/// A part with no magic left, as the name it stands for.
fn unescape(part: &str) -> String {
    let mut out = String::with_capacity(part.len());
    let mut chars = part.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '[' {
            let mut ahead = chars.clone();
            if let (Some(inner), Some(']')) = (ahead.next(), ahead.next()) {
                out.push(inner);
                chars.next();
                chars.next();
                continue;
            }
        }
        out.push(c);
    }
    out
}

/// One part as a matcher: bash's `**` is `*`, and `[!…]` is globset's `[!…]`.
fn component(part: &str) -> Result<globset::GlobMatcher> {
    let mut pattern = part.to_string();
    while pattern.contains("**") {
        pattern = pattern.replace("**", "*");
    }
    GlobBuilder::new(&pattern)
        .literal_separator(true)
        .backslash_escape(false)
        .build()
        .map(|g| g.compile_matcher())
        .map_err(|e| {
            Error::invalid(format!(
                "the pattern `{part}` cannot be read ({e}): quote it"
            ))
        })
}
