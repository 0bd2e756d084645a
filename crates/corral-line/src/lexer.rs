//! Splits a line into tokens. A token is a kind and a length; the lexer never
//! fails, it records refused constructs as tokens and leaves turning them into
//! errors to the parser.
//!
//! Characters are admitted from an enumerated set. Anything outside it becomes
//! a refusal token instead of being absorbed into a word, so a construct
//! nobody anticipated is refused rather than passed through.

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
    /// `<`, `>`, `>>` or `>&`, with the descriptor written before it.
    Redir {
        fd: Option<u32>,
        op: RedirTok,
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
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RedirTok {
    Read,
    Write,
    Append,
    Dup,
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
}

impl<'a> Lexer<'a> {
    pub(crate) fn new(src: &'a str) -> Self {
        Self {
            cursor: Cursor { src, pos: 0 },
            word_start: true,
            after_dup: false,
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
            '\n' => TokenKind::Newline,
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
                _ => Self::refused(Construct::Background),
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
            '<' | '>' => self.redirect(None, c),
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
            '0'..='9' if word_start => self.digits(c),
            '#' if word_start => {
                self.cursor.eat_while(|c| c != '\n');
                Self::refused(Construct::Comment)
            }
            '{' if word_start
                && self.cursor.first() == Some('}')
                && is_boundary(self.cursor.second()) =>
            {
                self.then(TokenKind::Part(Part::Plain))
            }
            '{' | '}' => Self::refused(Construct::Brace),
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
            '[' if word_start && is_boundary(self.cursor.first()) => {
                Self::refused(Construct::TestBracket)
            }
            '*' | '?' | '[' | ']' => Self::refused(Construct::Glob(c)),
            '~' => Self::refused(Construct::Tilde),
            '!' if word_start && is_boundary(self.cursor.first()) => {
                Self::refused(Construct::Negation)
            }
            '!' => Self::refused(Construct::HistoryExpansion),
            '\0' => Self::refused(Construct::Nul),
            c if is_plain(c) || c == '#' => self.plain(),
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
        self.cursor.eat_while(|c| is_plain(c) || c == '#');
        TokenKind::Part(Part::Plain)
    }

    /// Digits at the start of a word name a descriptor only when a `<` or
    /// `>` follows at once; otherwise they are an ordinary word.
    fn digits(&mut self, first: char) -> TokenKind {
        let mut fd = first.to_digit(10).unwrap_or(0);
        while let Some(d) = self.cursor.first().and_then(|c| c.to_digit(10)) {
            fd = fd.saturating_mul(10).saturating_add(d);
            self.cursor.bump();
        }
        match self.cursor.first() {
            Some(op @ ('<' | '>')) if !self.after_dup => {
                self.cursor.bump();
                self.redirect(Some(fd), op)
            }
            _ => self.plain(),
        }
    }

    fn redirect(&mut self, fd: Option<u32>, op: char) -> TokenKind {
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
                    self.then(Self::refused(Construct::HereString))
                } else {
                    Self::refused(Construct::HereDoc)
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

impl Iterator for Lexer<'_> {
    type Item = Token;

    fn next(&mut self) -> Option<Token> {
        let start = self.cursor.pos;
        let kind = self.token_kind(start)?;
        match &kind {
            TokenKind::Continuation => {}
            TokenKind::Blank => self.word_start = true,
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
