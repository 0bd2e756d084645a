//! The shell here-document a model wraps a patch in, read as the patch inside it.
//!
//! Models taught to edit through a shell send what they would type there:
//! `apply_patch <<'EOF'`, the patch, then `EOF`; or only the `<<'EOF'` … `EOF` lines; or
//! `cd DIR && apply_patch <<'EOF'`, where the patch's relative paths start at `DIR`. These
//! forms are read as the patch between the two lines. Anything else on the opening line
//! (a second command, `;` or `|`, an argument to `apply_patch`, `<<-`) is not: a shell
//! would have run it too, so it is refused rather than half understood.

/// The opening line of a here-document around a patch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Opener {
    /// The word on the line that closes it (`EOF`).
    pub word: String,
    /// `DIR` of a leading `cd DIR &&`: where the patch's relative paths start.
    pub dir: Option<String>,
}

/// The commands a here-document's patch may be handed to.
const COMMANDS: [&str; 2] = ["apply_patch", "applypatch"];

/// Whether `text` is a patch in the here-document a model writes around it for a shell
/// (`apply_patch <<'EOF'`, `cd DIR && apply_patch <<'EOF'`): a line for the `apply_patch`
/// tool, which no shell here can run.
pub(crate) fn is_patch_heredoc(text: &str) -> bool {
    text.lines()
        .find(|l| !l.trim().is_empty())
        .and_then(opener)
        .is_some_and(|_| {
            let first = text.trim_start();
            COMMANDS.iter().any(|c| first.contains(c))
        })
}

/// `line` read as the opening line of a here-document around a patch, when it is one of
/// the forms above.
pub(super) fn opener(line: &str) -> Option<Opener> {
    let mut rest = line.trim();
    let mut dir = None;
    if let Some(after) = rest.strip_prefix("cd")
        && after.starts_with([' ', '\t'])
    {
        let (word, after) = shell_word(after.trim_start())?;
        rest = after.trim_start().strip_prefix("&&")?.trim_start();
        dir = Some(word);
    }
    match COMMANDS.iter().find_map(|c| rest.strip_prefix(c)) {
        Some(after) => rest = after.trim_start(),
        // `cd DIR &&` is read only before the command itself.
        None if dir.is_some() => return None,
        None => {}
    }
    let rest = rest.strip_prefix("<<")?;
    // `<<-` strips tabs from every line of the body, which a patch's lines cannot spare.
    if rest.starts_with('-') {
        return None;
    }
    let (word, rest) = delimiter(rest.trim_start())?;
    rest.trim().is_empty().then_some(Opener { word, dir })
}

/// The word `s` starts with, in single or double quotes (without escapes) or bare up to
/// the first character `ends_bare` stops at, and what follows it.
fn quoted_or_bare(s: &str, ends_bare: impl Fn(char) -> bool) -> Option<(&str, &str)> {
    match s.chars().next()? {
        q @ ('\'' | '"') => {
            let inner = &s[1..];
            let end = inner.find(q)?;
            Some((&inner[..end], &inner[end + 1..]))
        }
        _ => {
            let end = s.find(ends_bare).unwrap_or(s.len());
            Some((&s[..end], &s[end..]))
        }
    }
}

/// A here-document's delimiter, bare (`EOF`) or quoted (`'EOF'`, `"EOF"`), and what
/// follows it.
fn delimiter(s: &str) -> Option<(String, &str)> {
    let (word, rest) = quoted_or_bare(s, |c| {
        c.is_whitespace() || is_special(c) || c == '\'' || c == '"'
    })?;
    let plain = !word.is_empty() && !word.chars().any(|c| c.is_whitespace() || is_special(c));
    plain.then(|| (word.to_string(), rest))
}

/// `cd`'s one argument: a bare word, or one in single or double quotes (without escapes),
/// and what follows it.
fn shell_word(s: &str) -> Option<(String, &str)> {
    let (word, rest) = quoted_or_bare(s, |c| c.is_whitespace() || is_special(c))?;
    let plain = !word.is_empty() && !word.contains(['$', '`', '\\']);
    plain.then(|| (word.to_string(), rest))
}

/// Characters a shell reads as operators or expansions, never part of a plain word.
fn is_special(c: char) -> bool {
    matches!(
        c,
        ';' | '&' | '|' | '<' | '>' | '(' | ')' | '$' | '`' | '\\'
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(line: &str) -> Option<(String, Option<String>)> {
        opener(line).map(|o| (o.word, o.dir))
    }

    #[test]
    fn the_forms_a_model_writes_are_read() {
        for (line, word, dir) in [
            ("<<EOF", "EOF", None),
            ("<<'EOF'", "EOF", None),
            ("<<\"EOF\"", "EOF", None),
            ("apply_patch <<'EOF'", "EOF", None),
            ("  apply_patch << PATCH  ", "PATCH", None),
            ("applypatch <<'PATCH'", "PATCH", None),
            ("apply_patch<<END_OF_PATCH", "END_OF_PATCH", None),
            ("cd src && apply_patch <<'EOF'", "EOF", Some("src")),
            ("cd 'my dir' && apply_patch <<'EOF'", "EOF", Some("my dir")),
            ("cd \"my dir\"&&apply_patch <<EOF", "EOF", Some("my dir")),
        ] {
            assert_eq!(
                read(line),
                Some((word.to_string(), dir.map(str::to_string))),
                "{line}"
            );
        }
    }

    #[test]
    fn anything_a_shell_would_also_run_is_not() {
        for line in [
            "<<\"EOF'",
            "<<'EOF",
            "<<",
            "<<-EOF",
            "<<EOF extra",
            "apply_patch foo <<'EOF'",
            "apply_patchx <<'EOF'",
            "cd foo; apply_patch <<'EOF'",
            "cd foo || apply_patch <<'EOF'",
            "cd foo | apply_patch <<'EOF'",
            "cd foo bar && apply_patch <<'EOF'",
            "cd foo && cd bar && apply_patch <<'EOF'",
            "cd foo && <<'EOF'",
            "cd $HOME && apply_patch <<'EOF'",
            "echo foo && apply_patch <<'EOF'",
            "echo foo; cd bar && apply_patch <<'EOF'",
            "cat <<'EOF'",
            "*** Begin Patch",
        ] {
            assert_eq!(read(line), None, "{line}");
        }
    }
}
