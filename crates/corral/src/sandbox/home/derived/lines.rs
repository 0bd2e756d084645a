//! Line formats: INI (`pip.conf`, `.npmrc`), Java properties (`gradle.properties`) and
//! cabal's `field: value` configuration. Each reader knows its format's entries and
//! continuation lines, and keeps an entry unless its key's name says it is a secret
//! (`super::secret_name`: npm's `_authToken`, `//host/:_password`, Gradle's
//! `…Password`, cabal's `password-command`) or a line of it holds a URL's userinfo
//! (an index URL with a token).

use super::{DeriveError, has_userinfo, secret_name};

/// One entry: its key and its lines (the first and its continuations).
struct Entry<'a> {
    key: &'a str,
    lines: Vec<&'a str>,
}

/// Whether an entry stays.
fn stays(entry: &Entry<'_>) -> bool {
    !secret_name(entry.key) && !entry.lines.iter().any(|l| has_userinfo(l))
}

fn parse_error(line: usize, what: &str) -> DeriveError {
    DeriveError::Parse {
        line,
        what: what.to_string(),
    }
}

/// Write `entry` if it stays.
fn emit(out: &mut String, entry: Option<Entry<'_>>) {
    if let Some(entry) = entry.filter(stays) {
        for line in entry.lines {
            out.push_str(line);
            out.push('\n');
        }
    }
}

/// INI: `[section]`, `key = value` (or `key: value`), comments with `#` or `;`, and
/// indented continuation lines (Python's `configparser`, which pip reads with).
pub(super) fn ini(text: &str) -> Result<String, DeriveError> {
    let mut out = String::new();
    let mut entry: Option<Entry<'_>> = None;
    for (n, line) in text.lines().enumerate() {
        let trimmed = line.trim();
        let indented = line.starts_with([' ', '\t']);
        if indented && !trimmed.is_empty() && entry.is_some() {
            if let Some(e) = entry.as_mut() {
                e.lines.push(line);
            }
            continue;
        }
        emit(&mut out, entry.take());
        if trimmed.is_empty() || trimmed.starts_with(['#', ';']) {
            out.push_str(line);
            out.push('\n');
        } else if trimmed.starts_with('[') {
            if !trimmed.ends_with(']') {
                return Err(parse_error(n + 1, "a section header without `]`"));
            }
            out.push_str(line);
            out.push('\n');
        } else {
            let Some(at) = trimmed.find(['=', ':']) else {
                return Err(parse_error(n + 1, "neither a section nor `key = value`"));
            };
            // npm's scoped keys hold a `:` (`//host/:_authToken`): the key runs to `=`.
            let at = trimmed.find('=').unwrap_or(at);
            let key = trimmed[..at].trim();
            if key.is_empty() {
                return Err(parse_error(n + 1, "an entry without a key"));
            }
            entry = Some(Entry {
                key,
                lines: vec![line],
            });
        }
    }
    emit(&mut out, entry);
    Ok(out)
}

/// Java properties: `key=value`, `key: value` or `key value`, comments with `#` or `!`,
/// a line ending in an odd number of `\` continued on the next.
pub(super) fn properties(text: &str) -> Result<String, DeriveError> {
    let mut out = String::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let trimmed = line.trim_start();
        if trimmed.is_empty() || trimmed.starts_with(['#', '!']) {
            out.push_str(line);
            out.push('\n');
            continue;
        }
        let mut entry = Entry {
            key: key_of_property(trimmed),
            lines: vec![line],
        };
        let mut last = line;
        while continued(last) {
            let Some(next) = lines.next() else { break };
            entry.lines.push(next);
            last = next;
        }
        emit(&mut out, Some(entry));
    }
    Ok(out)
}

/// A property's key: up to the first unescaped `=`, `:` or blank.
fn key_of_property(line: &str) -> &str {
    let mut escaped = false;
    for (at, c) in line.char_indices() {
        match c {
            '\\' if !escaped => escaped = true,
            '=' | ':' | ' ' | '\t' if !escaped => return &line[..at],
            _ => escaped = false,
        }
    }
    line
}

/// Whether a property line goes on: it ends in an odd number of `\`.
fn continued(line: &str) -> bool {
    line.chars().rev().take_while(|c| *c == '\\').count() % 2 == 1
}

/// cabal's configuration: `field: value` lines, `--` comments, section headers (`repository
/// hackage.haskell.org`), and lines indented deeper than a field continuing it.
pub(super) fn cabal(text: &str) -> Result<String, DeriveError> {
    let mut out = String::new();
    let mut entry: Option<(usize, Entry<'_>)> = None;
    for line in text.lines() {
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        if let Some((at, e)) = entry.as_mut()
            && !trimmed.is_empty()
            && indent > *at
        {
            e.lines.push(line);
            continue;
        }
        emit(&mut out, entry.take().map(|(_, e)| e));
        if trimmed.is_empty() || trimmed.starts_with("--") {
            out.push_str(line);
            out.push('\n');
            continue;
        }
        match trimmed.split_once(':') {
            Some((field, _))
                if !field.is_empty()
                    && field
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') =>
            {
                entry = Some((
                    indent,
                    Entry {
                        key: field,
                        lines: vec![line],
                    },
                ));
            }
            // A section header.
            _ => {
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    emit(&mut out, entry.map(|(_, e)| e));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn npm_auth_token_goes() {
        let t = ini("registry=https://registry.npmjs.org/\n_authToken=SECRET\n").unwrap();
        assert!(!t.contains("SECRET") && t.contains("registry="), "{t}");
    }

    #[test]
    fn npm_scoped_auth_token_goes() {
        let t = ini("//registry.npmjs.org/:_authToken=SECRET\n@me:registry=https://r/\n").unwrap();
        assert!(!t.contains("SECRET") && t.contains("@me:registry"), "{t}");
    }

    #[test]
    fn npm_auth_and_password_go() {
        let t =
            ini("_auth=SECRET\n//r/:_password=SECRET\n//r/:username=SECRET\nemail=me@x\n").unwrap();
        assert!(!t.contains("SECRET") && t.contains("email"), "{t}");
    }

    #[test]
    fn pip_index_url_with_userinfo_goes() {
        let t = ini(
            "[global]\nindex-url = https://me:SECRET@pypi.corp/simple\ntimeout = 60\n\
             extra-index-url =\n    https://pypi.org/simple\n    https://SECRET@x/\n",
        )
        .unwrap();
        assert!(!t.contains("SECRET") && t.contains("timeout = 60"), "{t}");
        assert!(t.contains("[global]"), "{t}");
    }

    #[test]
    fn ini_that_does_not_parse_is_an_error() {
        assert!(ini("[global\n").is_err());
        assert!(ini("just words\n").is_err());
        assert!(ini("= x\n").is_err());
    }

    #[test]
    fn gradle_credentials_go() {
        let t = properties(
            "org.gradle.jvmargs=-Xmx2g\nmavenPassword=SECRET\nossrhUsername SECRET\n\
             signing.secretKeyRingFile=SECRET\nsystemProp.http.proxyPassword: SECRET\n\
             gpr.token=SECRET\\\n  SECRET-continued\nartifactoryApiKey=SECRET\n",
        )
        .unwrap();
        assert!(!t.contains("SECRET") && t.contains("jvmargs"), "{t}");
    }

    #[test]
    fn cabal_password_goes() {
        let t = cabal(
            "repository hackage.haskell.org\n  url: http://hackage.haskell.org/\n\n\
             hackage-username: SECRET-me\nhackage-password: SECRET\n\
             password-command: pass SECRET\njobs: $ncpus\n",
        )
        .unwrap();
        assert!(!t.contains("SECRET"), "{t}");
        assert!(t.contains("jobs: $ncpus") && t.contains("url: http"), "{t}");
    }

    #[test]
    fn cabal_continued_secret_goes() {
        let t = cabal("password:\n    SECRET\njobs: 2\n").unwrap();
        assert!(!t.contains("SECRET") && t.contains("jobs: 2"), "{t}");
    }
}
