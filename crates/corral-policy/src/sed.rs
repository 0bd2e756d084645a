//! Reading a sed script: whether each of its commands only reads and prints.

/// Whether every command of a sed script only reads and prints.
pub(crate) fn script_is_plain(script: &str) -> bool {
    script
        .split([';', '\n'])
        .map(str::trim)
        .all(|cmd| cmd.is_empty() || sed_command(cmd))
}

fn sed_command(cmd: &str) -> bool {
    let rest = skip_address(cmd);
    let Some(rest) = rest else { return false };
    let rest = rest.trim_start();
    let rest = rest.strip_prefix('!').unwrap_or(rest).trim_start();
    let mut chars = rest.chars();
    let Some(c) = chars.next() else {
        return true;
    };
    let after = chars.as_str();
    match c {
        'p' | 'd' | 'q' | 'Q' | '=' | 'n' | 'N' | 'P' | 'D' | 'g' | 'G' | 'h' | 'H' | 'x' | 'l'
        | '{' | '}' => {
            let after = after.trim();
            after.is_empty()
                || (matches!(c, 'q' | 'Q') && after.bytes().all(|b| b.is_ascii_digit()))
        }
        's' | 'y' => {
            let mut it = after.chars();
            let Some(delim) = it.next() else { return false };
            if delim == '\\' || delim == '\n' || delim.is_alphanumeric() {
                return false;
            }
            let mut body = it.as_str();
            for _ in 0..2 {
                match find_unescaped(body, delim) {
                    Some(i) => body = &body[i + delim.len_utf8()..],
                    None => return false,
                }
            }
            let flags = body.trim();
            if c == 'y' {
                flags.is_empty()
            } else {
                flags
                    .chars()
                    .all(|f| "gpiImM".contains(f) || f.is_ascii_digit())
            }
        }
        _ => false,
    }
}

fn find_unescaped(s: &str, delim: char) -> Option<usize> {
    let mut escaped = false;
    for (i, c) in s.char_indices() {
        if escaped {
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if c == delim {
            return Some(i);
        }
    }
    None
}

/// Skip `N`, `$`, `/re/`, `\cREc`, optionally `,ADDR`. `None` if malformed.
fn skip_address(cmd: &str) -> Option<&str> {
    fn one(s: &str) -> Option<&str> {
        if let Some(r) = s.strip_prefix('$') {
            return Some(r);
        }
        if let Some(r) = s.strip_prefix('/') {
            let end = find_unescaped(r, '/')?;
            return Some(&r[end + 1..]);
        }
        let digits = s
            .bytes()
            .take_while(|b| b.is_ascii_digit() || *b == b'~')
            .count();
        Some(&s[digits..])
    }
    let rest = one(cmd)?;
    match rest.strip_prefix(',') {
        Some(r) => one(r),
        None => Some(rest),
    }
}
