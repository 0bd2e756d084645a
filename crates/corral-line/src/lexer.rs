//! Splits a line into tokens. A token is a kind and a length; the lexer never
//! fails, it records refused constructs as tokens and leaves turning them into
//! errors to the parser.
//!
//! Characters are admitted from an enumerated set. Anything outside it becomes
//! a refusal token instead of being absorbed into a word, so a construct
//! nobody anticipated is refused rather than passed through.
//!
//! Here-documents are read as bash reads them: the operator `<<DELIM` is one
//! token, and the body is the run of lines after the next unquoted newline,
//! up to a line holding only the delimiter. That newline's token covers the
//! bodies, so the parser never sees their text; the bodies themselves are
//! collected in operator order (see [`here_bodies`]).

use crate::ast::Span;
use crate::refusal::{Construct, RedirectIssue};

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Token {
    pub kind: TokenKind,
    pub len: usize,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum TokenKind {
    /// Spaces and tabs.
    Blank,
    /// `#` at the start of a word, up to the end of its line.
    Comment,
    /// An unquoted newline, and the bodies of any here-documents it starts.
    Newline,
    /// Backslash-newline between tokens. bash removes these before
    /// tokenizing, so the parser must see straight through them.
    Continuation,
    /// One piece of a word; adjacent parts form one word.
    Part(Part),
    Pipe,
    AndIf,
    OrIf,
    Semi,
    /// `&` alone: the list before it runs in the background.
    Amp,
    /// `<`, `>`, `>>` or `>&`, with the descriptor written before it.
    Redir {
        fd: Option<u32>,
        op: RedirTok,
    },
    /// `<<DELIM` or `<<-DELIM`, the delimiter included; its body is read
    /// after the next newline.
    HereDoc {
        fd: Option<u32>,
    },
    /// A refused construct starting `at` bytes into the token.
    Refused {
        construct: Construct,
        at: usize,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Part {
    /// Admitted unquoted characters (and continuations between them).
    Plain,
    /// `\x`
    Escaped,
    /// `'...'`
    Single,
    /// `"..."`, free of `$` and backticks.
    Double,
    /// `~` at the start of a word, before `/` or the word's end: the home
    /// directory, expanded by whoever runs the line.
    Tilde,
    /// An unquoted `*`, `?` or bracket expression (`[abc]`, `[!0-9]`): a pattern
    /// matched against file names by whoever runs the line.
    Glob,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RedirTok {
    Read,
    Write,
    Append,
    Dup,
    /// `<<<`
    HereString,
}

/// Unquoted characters that may appear anywhere in a word.
pub(crate) fn is_plain(c: char) -> bool {
    c.is_ascii_alphanumeric()
        || matches!(
            c,
            '_' | '-' | '.' | '/' | ',' | ':' | '@' | '%' | '+' | '=' | '^'
        )
        || !c.is_ascii()
}

/// Unquoted characters a word may hold past its start, besides `~` (which
/// depends on the character before it). `{`, `}` and `!` are literal to bash
/// there: `{}`, `stash@{0}`, `-I{}`, `a!b` (history expansion is off in a
/// non-interactive shell); brace expansion and a lone `{`, `}` or leading `!`
/// are refused elsewhere.
fn is_word_char(c: char) -> bool {
    is_plain(c) || matches!(c, '#' | '{' | '}' | '!')
}

/// The length of the rest of a bracket expression whose `[` was just read: up to and
/// including its `]` (a `]` first, or after `!`/`^`, is a member), if the word closes it.
/// Only plain characters may sit inside; a quote, a `$` or a boundary ends the search.
fn bracket_len(rest: &str) -> Option<usize> {
    let mut chars = rest.char_indices().peekable();
    if let Some((_, '!' | '^')) = chars.peek() {
        chars.next();
    }
    if let Some((_, ']')) = chars.peek() {
        chars.next();
    }
    for (i, c) in chars {
        match c {
            ']' => return Some(i + 1),
            c if is_plain(c) || matches!(c, '-' | '!' | '^' | ':' | '.' | '=') => {}
            _ => return None,
        }
    }
    None
}

/// Characters that end a word in bash.
fn is_boundary(c: Option<char>) -> bool {
    matches!(
        c,
        None | Some(' ' | '\t' | '\n' | '|' | '&' | ';' | '<' | '>' | '(' | ')')
    )
}

const CONTINUATION: &str = "\\\n";

struct Cursor<'a> {
    src: &'a str,
    pos: usize,
}

impl Cursor<'_> {
    /// Steps over line continuations. Everything outside single quotes and
    /// escapes looks through them, as bash removes them first.
    fn settle(&mut self) {
        while self.src[self.pos..].starts_with(CONTINUATION) {
            self.pos += CONTINUATION.len();
        }
    }

    fn first(&mut self) -> Option<char> {
        self.settle();
        self.first_raw()
    }

    fn first_raw(&self) -> Option<char> {
        self.src[self.pos..].chars().next()
    }

    /// The character after `first`, without looking through continuations:
    /// only used for checks where a miss means a refusal.
    fn second(&mut self) -> Option<char> {
        self.settle();
        let mut it = self.src[self.pos..].chars();
        it.next();
        it.next()
    }

    fn bump(&mut self) -> Option<char> {
        self.settle();
        self.bump_raw()
    }

    fn bump_raw(&mut self) -> Option<char> {
        let c = self.first_raw()?;
        self.pos += c.len_utf8();
        Some(c)
    }

    fn eat_while(&mut self, mut pred: impl FnMut(char) -> bool) {
        while self.first().is_some_and(&mut pred) {
            self.bump();
        }
    }

    /// Consumes up to the `close` that balances `depth` opens already seen.
    fn eat_balanced(&mut self, open: char, close: char, mut depth: usize) {
        while let Some(c) = self.bump_raw() {
            if c == open {
                depth += 1;
            } else if c == close {
                depth -= 1;
                if depth == 0 {
                    return;
                }
            }
        }
    }

    /// Consumes up to and including the next unescaped `end`.
    fn eat_until(&mut self, end: char) {
        while let Some(c) = self.bump_raw() {
            if c == '\\' {
                self.bump_raw();
            } else if c == end {
                return;
            }
        }
    }
}

pub(crate) struct Lexer<'a> {
    cursor: Cursor<'a>,
    /// The next token begins a new word (the previous one was not a part).
    word_start: bool,
    /// The previous significant token was `>&`, after which bash reads
    /// digits as the target, never as a descriptor prefix.
    after_dup: bool,
    /// Here-documents whose operator was read and whose body was not yet.
    pending: Vec<Pending>,
    /// Bodies read so far, in operator order.
    bodies: Vec<Result<HereBody, (Construct, Span)>>,
}

/// A here-document operator waiting for its body.
#[derive(Debug, Clone)]
struct Pending {
    delimiter: String,
    quoted: bool,
    strip_tabs: bool,
    operator: Span,
}

/// The body of one here-document, as bash would feed it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HereBody {
    pub delimiter: String,
    pub quoted: bool,
    pub strip_tabs: bool,
    pub text: String,
    pub span: Span,
}

/// Every here-document body of `src`, in the order of their operators: a
/// body, or why it cannot be admitted.
pub(crate) fn here_bodies(src: &str) -> Vec<Result<HereBody, (Construct, Span)>> {
    let mut lexer = Lexer::new(src);
    for _ in lexer.by_ref() {}
    for p in std::mem::take(&mut lexer.pending) {
        lexer.bodies.push(Err((
            Construct::UnterminatedHereDoc(p.delimiter),
            p.operator,
        )));
    }
    lexer.bodies
}

impl<'a> Lexer<'a> {
    pub(crate) fn new(src: &'a str) -> Self {
        Self {
            cursor: Cursor { src, pos: 0 },
            word_start: true,
            after_dup: false,
            pending: Vec::new(),
            bodies: Vec::new(),
        }
    }

    fn refused(construct: Construct) -> TokenKind {
        TokenKind::Refused { construct, at: 0 }
    }

    fn token_kind(&mut self, start: usize) -> Option<TokenKind> {
        if self.cursor.src[start..].starts_with(CONTINUATION) {
            self.cursor.settle();
            return Some(TokenKind::Continuation);
        }
        let word_start = self.word_start;
        let c = self.cursor.bump_raw()?;
        let kind = match c {
            ' ' | '\t' => {
                self.cursor.eat_while(|c| c == ' ' || c == '\t');
                TokenKind::Blank
            }
            '\n' => {
                self.read_bodies();
                TokenKind::Newline
            }
            '|' => match self.cursor.first() {
                Some('|') => self.then(TokenKind::OrIf),
                Some('&') => self.then(Self::refused(Construct::UnsupportedRedirect(
                    RedirectIssue::PipeStderr,
                ))),
                _ => TokenKind::Pipe,
            },
            '&' => match self.cursor.first() {
                Some('&') => self.then(TokenKind::AndIf),
                Some('>') => {
                    self.cursor.bump();
                    if self.cursor.first() == Some('>') {
                        self.cursor.bump();
                    }
                    Self::refused(Construct::UnsupportedRedirect(RedirectIssue::BothOutputs))
                }
                _ => TokenKind::Amp,
            },
            ';' => match self.cursor.first() {
                Some(';') => {
                    self.cursor.bump();
                    if self.cursor.first() == Some('&') {
                        self.cursor.bump();
                    }
                    Self::refused(Construct::CaseTerminator)
                }
                Some('&') => self.then(Self::refused(Construct::CaseTerminator)),
                _ => TokenKind::Semi,
            },
            '<' | '>' => self.redirect(None, c, start),
            '(' => {
                self.cursor.eat_balanced('(', ')', 1);
                Self::refused(Construct::Subshell)
            }
            ')' => Self::refused(Construct::Subshell),
            '\'' => self.single(),
            '"' => self.double(start),
            '\\' => match self.cursor.bump_raw() {
                None => Self::refused(Construct::TrailingBackslash),
                Some('\0') => TokenKind::Refused {
                    construct: Construct::Nul,
                    at: 1,
                },
                Some(_) => TokenKind::Part(Part::Escaped),
            },
            '$' => Self::refused(self.dollar(false)),
            '`' => {
                self.cursor.eat_until('`');
                Self::refused(Construct::Backtick)
            }
            '0'..='9' if word_start => self.digits(c, start),
            '#' if word_start => {
                self.cursor.eat_while(|c| c != '\n');
                TokenKind::Comment
            }
            // A lone `{` or `}` is a brace group's; inside a word they are literal.
            '{' | '}' if word_start && is_boundary(self.cursor.first()) => {
                Self::refused(Construct::Brace)
            }
            '[' if word_start
                && self.cursor.first() == Some('[')
                && is_boundary(self.cursor.second()) =>
            {
                self.then(Self::refused(Construct::Keyword("[[".into())))
            }
            ']' if word_start
                && self.cursor.first() == Some(']')
                && is_boundary(self.cursor.second()) =>
            {
                self.then(Self::refused(Construct::Keyword("]]".into())))
            }
            // `[ EXPR ]`: the test command, a program like any other.
            '[' if word_start && is_boundary(self.cursor.first()) => TokenKind::Part(Part::Plain),
            '*' | '?' => TokenKind::Part(Part::Glob),
            '[' => match bracket_len(&self.cursor.src[self.cursor.pos..]) {
                Some(len) => {
                    self.cursor.pos += len;
                    TokenKind::Part(Part::Glob)
                }
                // No closing `]` in the word: bash keeps the `[` as it is.
                None => TokenKind::Part(Part::Plain),
            },
            ']' => TokenKind::Part(Part::Plain),
            '~' if word_start => {
                let next = self.cursor.first();
                if next == Some('/') || is_boundary(next) {
                    TokenKind::Part(Part::Tilde)
                } else {
                    Self::refused(Construct::Tilde)
                }
            }
            // After `=` or `:` bash may expand it (`PATH=~/bin`, `a:~`); elsewhere
            // inside a word it is literal (`HEAD~5`).
            '~' if matches!(
                self.cursor.src[..start].chars().next_back(),
                Some('=' | ':')
            ) =>
            {
                Self::refused(Construct::Tilde)
            }
            '\0' => Self::refused(Construct::Nul),
            c if is_word_char(c) || c == '~' => self.plain(),
            c => Self::refused(Construct::UnexpectedChar(c)),
        };
        Some(kind)
    }

    /// Consumes the character already peeked and yields `kind`.
    fn then(&mut self, kind: TokenKind) -> TokenKind {
        self.cursor.bump();
        kind
    }

    fn plain(&mut self) -> TokenKind {
        let mut prev = self.cursor.src[..self.cursor.pos].chars().next_back();
        while let Some(c) = self.cursor.first() {
            let literal_tilde = c == '~' && !matches!(prev, Some('=' | ':'));
            if !(is_word_char(c) || literal_tilde) {
                break;
            }
            self.cursor.bump();
            prev = Some(c);
        }
        TokenKind::Part(Part::Plain)
    }

    /// Digits at the start of a word name a descriptor only when a `<` or
    /// `>` follows at once; otherwise they are an ordinary word.
    fn digits(&mut self, first: char, start: usize) -> TokenKind {
        let mut fd = first.to_digit(10).unwrap_or(0);
        while let Some(d) = self.cursor.first().and_then(|c| c.to_digit(10)) {
            fd = fd.saturating_mul(10).saturating_add(d);
            self.cursor.bump();
        }
        match self.cursor.first() {
            Some(op @ ('<' | '>')) if !self.after_dup => {
                self.cursor.bump();
                self.redirect(Some(fd), op, start)
            }
            _ => self.plain(),
        }
    }

    fn redirect(&mut self, fd: Option<u32>, op: char, start: usize) -> TokenKind {
        let next = self.cursor.first();
        let redir = |op| TokenKind::Redir { fd, op };
        let unsupported = |issue| Self::refused(Construct::UnsupportedRedirect(issue));
        if next == Some('(') {
            self.cursor.bump();
            self.cursor.eat_balanced('(', ')', 1);
            return Self::refused(Construct::ProcessSubstitution);
        }
        match (op, next) {
            ('<', Some('<')) => {
                self.cursor.bump();
                if self.cursor.first() == Some('<') {
                    self.then(redir(RedirTok::HereString))
                } else {
                    self.here_doc(fd, start)
                }
            }
            ('<', Some('>')) => self.then(unsupported(RedirectIssue::ReadWrite)),
            ('<', Some('&')) => self.then(unsupported(RedirectIssue::DupInput)),
            ('<', _) => redir(RedirTok::Read),
            (_, Some('>')) => self.then(redir(RedirTok::Append)),
            (_, Some('&')) => self.then(redir(RedirTok::Dup)),
            (_, Some('|')) => self.then(unsupported(RedirectIssue::Clobber)),
            _ => redir(RedirTok::Write),
        }
    }

    /// After `<<`: an optional `-`, blanks, then the delimiter word, read as
    /// bash reads it (quotes removed; any quoting makes the body literal).
    fn here_doc(&mut self, fd: Option<u32>, start: usize) -> TokenKind {
        let strip_tabs = self.cursor.first() == Some('-');
        if strip_tabs {
            self.cursor.bump();
        }
        self.cursor.eat_while(|c| c == ' ' || c == '\t');
        let mut delimiter = String::new();
        let mut quoted = false;
        loop {
            self.cursor.settle();
            let Some(c) = self.cursor.first_raw() else {
                break;
            };
            if is_boundary(Some(c)) {
                break;
            }
            self.cursor.bump_raw();
            match c {
                '\'' | '"' => {
                    quoted = true;
                    loop {
                        match self.cursor.bump_raw() {
                            None => return Self::refused(Construct::UnterminatedQuote),
                            Some(e) if e == c => break,
                            Some('\\') if c == '"' => {
                                if let Some(e) = self.cursor.bump_raw() {
                                    if !matches!(e, '"' | '\\' | '$' | '`') {
                                        delimiter.push('\\');
                                    }
                                    delimiter.push(e);
                                }
                            }
                            Some(e) => delimiter.push(e),
                        }
                    }
                }
                '\\' => {
                    quoted = true;
                    match self.cursor.bump_raw() {
                        Some(e) => delimiter.push(e),
                        None => return Self::refused(Construct::TrailingBackslash),
                    }
                }
                '$' | '`' => {
                    return TokenKind::Refused {
                        construct: Construct::HereDocDelimiter,
                        at: 0,
                    };
                }
                c => delimiter.push(c),
            }
        }
        if delimiter.is_empty() && !quoted {
            return Self::refused(Construct::MissingRedirectTarget);
        }
        if delimiter.contains('\0') || delimiter.contains('\n') {
            return Self::refused(Construct::HereDocDelimiter);
        }
        self.pending.push(Pending {
            delimiter,
            quoted,
            strip_tabs,
            operator: Span::new(start, self.cursor.pos),
        });
        TokenKind::HereDoc { fd }
    }

    /// Just past an unquoted newline: the bodies of the pending here-documents,
    /// one after another, each up to a line holding only its delimiter.
    fn read_bodies(&mut self) {
        for p in std::mem::take(&mut self.pending) {
            let src = self.cursor.src;
            let body_start = self.cursor.pos;
            let mut text = String::new();
            let mut closed = None;
            let mut at = body_start;
            while at < src.len() {
                let end = src[at..].find('\n').map_or(src.len(), |i| at + i);
                let raw = &src[at..end];
                let line = if p.strip_tabs {
                    raw.trim_start_matches('\t')
                } else {
                    raw
                };
                let next = (end + 1).min(src.len());
                if line == p.delimiter {
                    closed = Some((at, next));
                    break;
                }
                text.push_str(line);
                text.push('\n');
                at = next;
            }
            let Some((body_end, after)) = closed else {
                self.cursor.pos = src.len();
                self.bodies.push(Err((
                    Construct::UnterminatedHereDoc(p.delimiter),
                    p.operator,
                )));
                continue;
            };
            self.cursor.pos = after;
            let span = Span::new(body_start, body_end);
            if !p.quoted
                && let Some(offset) = expands_in_body(&src[body_start..body_end])
            {
                let at = body_start + offset;
                self.bodies.push(Err((
                    Construct::HereDocExpansion,
                    Span::new(at, (at + 1).min(body_end)),
                )));
                continue;
            }
            self.bodies.push(Ok(HereBody {
                delimiter: p.delimiter,
                quoted: p.quoted,
                strip_tabs: p.strip_tabs,
                text,
                span,
            }));
        }
    }

    fn single(&mut self) -> TokenKind {
        let open = self.cursor.pos - 1;
        loop {
            match self.cursor.bump_raw() {
                None => return Self::refused(Construct::UnterminatedQuote),
                Some('\'') => return TokenKind::Part(Part::Single),
                Some('\0') => return self.nul_from(open),
                Some(_) => {}
            }
        }
    }

    fn double(&mut self, start: usize) -> TokenKind {
        loop {
            self.cursor.settle();
            let here = self.cursor.pos - start;
            match self.cursor.bump_raw() {
                None => return Self::refused(Construct::UnterminatedQuote),
                Some('"') => return TokenKind::Part(Part::Double),
                Some('\\') => match self.cursor.bump_raw() {
                    None => return Self::refused(Construct::UnterminatedQuote),
                    Some('\0') => return self.nul_from(start),
                    Some(_) => {}
                },
                Some('$') => {
                    if let Some((len, _)) = cat_here_doc(&self.cursor.src[self.cursor.pos..]) {
                        self.cursor.pos += len;
                        continue;
                    }
                    let construct = self.dollar(true);
                    return TokenKind::Refused {
                        construct,
                        at: here,
                    };
                }
                Some('`') => {
                    self.cursor.eat_until('`');
                    return TokenKind::Refused {
                        construct: Construct::Backtick,
                        at: here,
                    };
                }
                Some('\0') => return self.nul_from(start),
                Some(_) => {}
            }
        }
    }

    /// A NUL just consumed inside a token that began at `start`.
    fn nul_from(&self, start: usize) -> TokenKind {
        TokenKind::Refused {
            construct: Construct::Nul,
            at: self.cursor.pos - 1 - start,
        }
    }

    /// Classifies what follows a `$` just consumed, stepping over it so the
    /// refusal's span covers the whole construct where that is cheap to find.
    fn dollar(&mut self, in_double: bool) -> Construct {
        match self.cursor.first() {
            Some('(') => {
                self.cursor.bump();
                if self.cursor.first() == Some('(') {
                    self.cursor.bump();
                    self.cursor.eat_balanced('(', ')', 2);
                    Construct::Arithmetic
                } else {
                    self.cursor.eat_balanced('(', ')', 1);
                    Construct::CommandSubstitution
                }
            }
            Some('[') => {
                self.cursor.bump();
                self.cursor.eat_balanced('[', ']', 1);
                Construct::Arithmetic
            }
            Some('{') => {
                self.cursor.bump();
                self.cursor.eat_balanced('{', '}', 1);
                Construct::ParameterExpansion
            }
            Some('\'') if !in_double => {
                self.cursor.bump();
                self.cursor.eat_until('\'');
                Construct::AnsiCQuote
            }
            Some('"') if !in_double => {
                self.cursor.bump();
                self.cursor.eat_until('"');
                Construct::LocaleQuote
            }
            Some(c) if c == '_' || c.is_ascii_alphabetic() => {
                self.cursor
                    .eat_while(|c| c == '_' || c.is_ascii_alphanumeric());
                Construct::ParameterExpansion
            }
            Some('0'..='9' | '?' | '$' | '@' | '*' | '#' | '!' | '-') => {
                self.cursor.bump();
                Construct::ParameterExpansion
            }
            _ => Construct::BareDollar,
        }
    }
}

/// `$(cat <<'DELIM'` … `DELIM` `)` inside double quotes, the way a commit
/// message of several lines is usually written: the command substitution of
/// `cat` reading a literal here-document is that text without its trailing
/// newlines, which is what corral puts in the word (no `cat` runs). `s`
/// starts just after the `$`; the answer is how many bytes the substitution
/// takes and its value. Anything else is not matched, and is refused as the
/// command substitution it is.
pub(crate) fn cat_here_doc(s: &str) -> Option<(usize, String)> {
    let blanks = |i: usize| i + s[i..].len() - s[i..].trim_start_matches([' ', '\t']).len();
    let mut i = blanks(s.strip_prefix('(').map(|_| 1)?);
    s[i..].strip_prefix("cat")?;
    i += 3;
    if !s[i..].starts_with([' ', '\t']) {
        return None;
    }
    i = blanks(i);
    if !s[i..].starts_with("<<") || s[i..].starts_with("<<<") {
        return None;
    }
    i += 2;
    let strip_tabs = s[i..].starts_with('-');
    i = blanks(i + usize::from(strip_tabs));
    let (delimiter, quoted) = match s[i..].chars().next()? {
        q @ ('\'' | '"') => {
            let end = s[i + 1..].find(q)? + i + 1;
            let d = &s[i + 1..end];
            i = end + 1;
            (d, true)
        }
        _ => {
            let len = s[i..]
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(s.len() - i);
            let d = &s[i..i + len];
            i += len;
            (d, false)
        }
    };
    if delimiter.is_empty() || delimiter.contains(['\\', '\n', '$', '`', '\0']) {
        return None;
    }
    i = blanks(i);
    i += s[i..].strip_prefix('\n').map(|_| 1)?;
    let mut text = String::new();
    let body_start = i;
    loop {
        let end = s[i..].find('\n').map_or(s.len(), |n| i + n);
        let raw = &s[i..end];
        let line = if strip_tabs {
            raw.trim_start_matches('\t')
        } else {
            raw
        };
        if line == delimiter {
            if !quoted && expands_in_body(&s[body_start..i]).is_some() {
                return None;
            }
            i = (end + 1).min(s.len());
            break;
        }
        if end == s.len() {
            return None;
        }
        text.push_str(line);
        text.push('\n');
        i = end + 1;
    }
    i += s[i..].len() - s[i..].trim_start_matches([' ', '\t', '\n']).len();
    if !s[i..].starts_with(')') || text.contains('\0') {
        return None;
    }
    let value = text.trim_end_matches('\n').to_owned();
    Some((i + 1, value))
}

/// The offset of the first character bash would expand in the body of a
/// here-document with an unquoted delimiter: `$`, a backtick, or a
/// backslash before `$`, a backtick, a backslash or a newline.
fn expands_in_body(body: &str) -> Option<usize> {
    let bytes = body.as_bytes();
    bytes.iter().enumerate().find_map(|(i, b)| match b {
        b'$' | b'`' => Some(i),
        b'\\' if matches!(bytes.get(i + 1), Some(b'$' | b'`' | b'\\' | b'\n')) => Some(i),
        _ => None,
    })
}

impl Iterator for Lexer<'_> {
    type Item = Token;

    fn next(&mut self) -> Option<Token> {
        let start = self.cursor.pos;
        let kind = self.token_kind(start)?;
        match &kind {
            TokenKind::Continuation => {}
            TokenKind::Blank | TokenKind::Comment => self.word_start = true,
            _ => {
                self.word_start = !matches!(kind, TokenKind::Part(_));
                self.after_dup = matches!(
                    kind,
                    TokenKind::Redir {
                        op: RedirTok::Dup,
                        ..
                    }
                );
            }
        }
        Some(Token {
            kind,
            len: self.cursor.pos - start,
        })
    }
}
