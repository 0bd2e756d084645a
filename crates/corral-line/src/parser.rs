//! Builds the AST from tokens and turns the lexer's recorded problems into
//! refusals. Stops at the first problem: one actionable message beats a list.

use crate::ast::{
    AndOr, Assignment, Cd, Command, Connector, DirOp, DirStack, HereDoc, Line, Pipeline, Redirect,
    RedirectOp, Simple, Span, Word,
};
use crate::brace::{self, Atom};
use crate::lexer::{HereBody, Lexer, Part, RedirTok, TokenKind, here_bodies};
use crate::refusal::{CdMisuse, Construct, RedirectIssue, Refusal};
use crate::word;

/// Reserved words bash recognizes at command position.
pub(crate) const KEYWORDS: &[&str] = &[
    "if", "then", "elif", "else", "fi", "for", "while", "until", "do", "done", "case", "esac",
    "select", "function", "time", "coproc", "in",
];

/// Builtins that only act on shell state, so there is no program to run.
/// Quoting does not stop bash from finding these, so they are matched on the
/// value.
const BUILTINS: &[&str] = &[
    "export",
    "unset",
    "set",
    "source",
    ".",
    "eval",
    "exec",
    "alias",
    "unalias",
    "read",
    "exit",
    "return",
    "shift",
    "local",
    "declare",
    "typeset",
    "readonly",
    "ulimit",
    "umask",
    "trap",
    "wait",
    "jobs",
    "fg",
    "bg",
    "disown",
    "history",
    "hash",
    "builtin",
    "let",
    "shopt",
    "enable",
    "logout",
    "suspend",
    "mapfile",
    "readarray",
    "getopts",
    "bind",
    "complete",
    "compgen",
    "compopt",
    "fc",
    "caller",
    "command",
    ":",
    "type",
    "break",
    "continue",
    "times",
    "help",
];

type Result<T> = std::result::Result<T, Refusal>;

#[derive(Debug, Clone)]
struct Tok {
    kind: TokenKind,
    span: Span,
}

/// A word as read, with what the grammar needs to know about how it was
/// written.
#[derive(Debug)]
struct RawWord {
    word: Word,
    /// No quotes or escapes anywhere: it can be a keyword or a dup target.
    plain: bool,
    /// Length of the value contributed by a leading unquoted part; only that
    /// part can make the word an assignment.
    lead: usize,
    /// Brace expansion: where its first brace is, and the words it makes (none when
    /// every alternative was empty).
    braces: Option<(Span, Vec<Word>)>,
}

pub(crate) struct Parser<'a> {
    src: &'a str,
    lexer: Lexer<'a>,
    pos: usize,
    peeked: Option<Tok>,
    /// Every here-document body, in operator order, and how many were taken.
    bodies: std::vec::IntoIter<std::result::Result<HereBody, (Construct, Span)>>,
}

impl<'a> Parser<'a> {
    pub(crate) fn new(src: &'a str) -> Self {
        Self {
            src,
            lexer: Lexer::new(src),
            pos: 0,
            peeked: None,
            bodies: here_bodies(src).into_iter(),
        }
    }

    fn peek(&mut self) -> Option<&Tok> {
        if self.peeked.is_none() {
            self.peeked = self.lex();
        }
        self.peeked.as_ref()
    }

    fn lex(&mut self) -> Option<Tok> {
        loop {
            let token = self.lexer.next()?;
            let span = Span::new(self.pos, self.pos + token.len);
            self.pos = span.end;
            if token.kind != TokenKind::Continuation {
                return Some(Tok {
                    kind: token.kind,
                    span,
                });
            }
        }
    }

    fn bump(&mut self) -> Option<Tok> {
        self.peek();
        self.peeked.take()
    }

    fn peek_kind(&mut self) -> Option<&TokenKind> {
        self.peek().map(|t| &t.kind)
    }

    fn skip_blanks(&mut self, newlines: bool) {
        while let Some(k) = self.peek_kind() {
            match k {
                TokenKind::Blank | TokenKind::Comment => {}
                TokenKind::Newline if newlines => {}
                _ => return,
            }
            self.bump();
        }
    }

    fn end_span(&self) -> Span {
        Span::new(self.src.len(), self.src.len())
    }

    pub(crate) fn line(mut self) -> Result<Line> {
        let mut lists = Vec::new();
        loop {
            self.skip_blanks(true);
            if self.peek().is_none() {
                break;
            }
            let mut list = self.and_or()?;
            self.skip_blanks(false);
            match self.bump() {
                None => {
                    lists.push(list);
                    break;
                }
                Some(Tok {
                    kind: TokenKind::Newline | TokenKind::Semi,
                    ..
                }) => {}
                Some(Tok {
                    kind: TokenKind::Amp,
                    span,
                }) => {
                    background(&list, span)?;
                    list.background = true;
                }
                Some(t) => return Err(unexpected(t)),
            }
            lists.push(list);
        }
        if lists.is_empty() {
            return Err(Refusal::new(Construct::Empty, Span::new(0, self.src.len())));
        }
        Ok(Line { lists })
    }

    fn and_or(&mut self) -> Result<AndOr> {
        let first = self.pipeline(None)?;
        let mut rest = Vec::new();
        loop {
            self.skip_blanks(false);
            let connector = match self.peek_kind() {
                Some(TokenKind::AndIf) => Connector::And,
                Some(TokenKind::OrIf) => Connector::Or,
                _ => break,
            };
            let op = self.bump().map(|t| t.span);
            // bash lets a connector end a line and the list continue on the next.
            self.skip_blanks(true);
            rest.push((connector, self.pipeline(op)?));
        }
        Ok(AndOr {
            first,
            rest,
            background: false,
        })
    }

    fn pipeline(&mut self, after: Option<Span>) -> Result<Pipeline> {
        let timed = self.time()?;
        let after = timed.or(after);
        let mut commands = vec![self.command(after)?];
        loop {
            self.skip_blanks(false);
            if self.peek_kind() != Some(&TokenKind::Pipe) {
                break;
            }
            let op = self.bump().map(|t| t.span);
            self.skip_blanks(true);
            commands.push(self.command(op)?);
        }
        for command in &commands {
            if let Command::Cd(Cd { span, .. }) | Command::DirStack(DirStack { span, .. }) = command
                && commands.len() > 1
            {
                return Err(cd_misuse(CdMisuse::InPipeline, *span));
            }
        }
        let span = commands[0].span().to(commands[commands.len() - 1].span());
        if let (
            Some(time),
            [Command::Cd(Cd { span: cd, .. }) | Command::DirStack(DirStack { span: cd, .. })],
        ) = (timed, commands.as_slice())
        {
            return Err(cd_misuse(CdMisuse::Timed, time.to(*cd)));
        }
        Ok(Pipeline {
            commands,
            span: timed.map_or(span, |t| t.to(span)),
            timed: timed.is_some(),
        })
    }

    /// The reserved word `time` at the start of a pipeline, written unquoted and followed
    /// by a blank: its span. Anything else is left for [`Parser::command`].
    fn time(&mut self) -> Result<Option<Span>> {
        let Some(Tok {
            kind: TokenKind::Part(Part::Plain),
            span,
        }) = self.peek().cloned()
        else {
            return Ok(None);
        };
        let rest = &self.src[span.end..];
        if span.slice(self.src) != "time"
            || !(rest.is_empty() || rest.starts_with([' ', '\t', '\n', ';', '&', '|']))
        {
            return Ok(None);
        }
        self.bump();
        self.skip_blanks(false);
        let src = self.src;
        match self.peek() {
            Some(Tok {
                kind: TokenKind::Part(_) | TokenKind::Redir { .. } | TokenKind::HereDoc { .. },
                span: next,
            }) if !next.slice(src).starts_with('-') => Ok(Some(span)),
            Some(Tok { span: next, .. }) => Err(Refusal::new(Construct::TimeForm, span.to(*next))),
            None => Err(Refusal::new(Construct::TimeForm, span)),
        }
    }

    /// `after` is the operator this command must follow, blamed if it is
    /// missing.
    fn command(&mut self, after: Option<Span>) -> Result<Command> {
        let mut assignments = Vec::new();
        let mut argv: Vec<Word> = Vec::new();
        let mut redirects = Vec::new();
        let mut program_plain = false;
        let mut span: Option<Span> = None;
        while let Some(tok) = self.peek() {
            let item = match &tok.kind {
                TokenKind::Blank | TokenKind::Comment => {
                    self.bump();
                    continue;
                }
                TokenKind::Part(_) => {
                    let raw = self.word()?;
                    let item = raw.word.span;
                    if argv.is_empty()
                        && let Some(assignment) = self.assignment(&raw)?
                    {
                        // bash expands no braces in an assignment.
                        assignments.push(assignment);
                    } else {
                        if argv.is_empty() {
                            program_plain = raw.plain && raw.braces.is_none();
                        }
                        match raw.braces {
                            Some((_, words)) => argv.extend(words),
                            None => argv.push(raw.word),
                        }
                    }
                    item
                }
                TokenKind::Redir { .. } | TokenKind::HereDoc { .. } => {
                    let redirect = self.redirect()?;
                    let item = redirect.span;
                    redirects.push(redirect);
                    item
                }
                TokenKind::Refused { .. } => {
                    return Err(self
                        .bump()
                        .map_or_else(|| missing(self.end_span()), unexpected));
                }
                _ => break,
            };
            span = Some(span.map_or(item, |s| s.to(item)));
        }
        let Some(span) = span else {
            let blame = after
                .or_else(|| self.peek().map(|t| t.span))
                .unwrap_or_else(|| self.end_span());
            return Err(missing(blame));
        };
        let Some(program) = argv.first() else {
            let construct = if assignments.is_empty() {
                Construct::RedirectWithoutCommand
            } else {
                Construct::BareAssignment
            };
            return Err(Refusal::new(construct, span));
        };
        let name = program.value.as_str();
        if program_plain && name == "!" {
            return Err(Refusal::new(Construct::Negation, program.span));
        }
        if program_plain && KEYWORDS.contains(&name) {
            return Err(Refusal::new(
                Construct::Keyword(name.to_owned()),
                program.span,
            ));
        }
        if name == "cd" {
            return cd(assignments, argv, redirects, span);
        }
        if matches!(name, "pushd" | "popd" | "dirs") {
            return dir_stack(assignments, argv, redirects, span);
        }
        if BUILTINS.contains(&name) {
            return Err(Refusal::new(
                Construct::Builtin(name.to_owned()),
                program.span,
            ));
        }
        // `printf -v NAME` is the builtin's own form: it assigns a shell variable.
        if name == "printf" && argv.get(1).is_some_and(|w| w.value == "-v") {
            return Err(Refusal::new(
                Construct::Builtin("printf -v".to_owned()),
                program.span.to(argv[1].span),
            ));
        }
        Ok(Command::Simple(Simple {
            assignments,
            argv,
            redirects,
            span,
        }))
    }

    /// Reads adjacent parts into one word, and what brace expansion makes of it (only
    /// unquoted braces and commas count).
    fn word(&mut self) -> Result<RawWord> {
        let mut value = String::new();
        let mut plain = true;
        let mut tilde = false;
        let mut glob = String::new();
        let mut globbed = false;
        let mut lead = 0;
        let mut span: Option<Span> = None;
        let mut braces = word::BraceScan::default();
        let mut brace_at = None;
        let mut atoms = Vec::new();
        while let Some(Tok {
            kind: TokenKind::Part(part),
            span: s,
        }) = self.peek().cloned()
        {
            self.bump();
            let text = s.slice(self.src);
            if part == Part::Plain {
                if let Some(found) = braces.scan(text, s.start) {
                    brace_at.get_or_insert(found);
                }
                let mut cooked = String::new();
                word::cook(part, text, &mut cooked);
                atoms.extend(cooked.chars().map(Atom::Char));
            } else {
                atoms.push(Atom::Part(part, text.to_owned()));
            }
            tilde |= span.is_none() && part == Part::Tilde;
            globbed |= part == Part::Glob;
            word::pattern(part, text, &mut glob);
            word::cook(part, text, &mut value);
            if span.is_none() && part == Part::Plain {
                lead = value.len();
            }
            plain &= part == Part::Plain;
            span = Some(span.map_or(s, |w| w.to(s)));
        }
        let span = span.unwrap_or_else(|| Span::new(self.pos, self.pos));
        let expanded = brace_at.and_then(|at| {
            let words = brace::expand(&atoms);
            let unchanged = words.len() == 1 && words[0] == atoms;
            (!unchanged).then(|| {
                (
                    at,
                    words.iter().map(|w| word::from_atoms(w, span)).collect(),
                )
            })
        });
        Ok(RawWord {
            word: Word {
                value,
                span,
                tilde,
                glob: globbed.then_some(glob),
            },
            plain,
            lead,
            braces: expanded,
        })
    }

    /// A word that must stay one word (a redirect's target): brace expansion refused.
    fn single_word(&mut self) -> Result<RawWord> {
        let raw = self.word()?;
        match &raw.braces {
            Some((at, _)) => Err(Refusal::new(Construct::Brace, *at)),
            None => Ok(raw),
        }
    }

    /// `NAME=value` counts only when the `NAME=` is written unquoted, as in
    /// bash.
    fn assignment(&self, raw: &RawWord) -> Result<Option<Assignment>> {
        let lead = &raw.word.value[..raw.lead];
        let Some(eq) = lead.find('=') else {
            return Ok(None);
        };
        let name = &lead[..eq];
        if let Some(base) = name.strip_suffix('+')
            && word::is_name(base)
        {
            return Err(Refusal::new(Construct::AppendAssignment, raw.word.span));
        }
        if !word::is_name(name) {
            return Ok(None);
        }
        let value_start = word::source_offset(self.src, raw.word.span.start, eq + 1);
        Ok(Some(Assignment {
            name: name.to_owned(),
            value: Word {
                value: raw.word.value[eq + 1..].to_owned(),
                span: Span::new(value_start, raw.word.span.end),
                tilde: false,
                // bash expands no pattern in an assignment's value.
                glob: None,
            },
            span: raw.word.span,
        }))
    }

    fn redirect(&mut self) -> Result<Redirect> {
        let (fd, op, op_span) = match self.bump() {
            Some(Tok {
                kind: TokenKind::Redir { fd, op },
                span,
            }) => (fd, op, span),
            Some(Tok {
                kind: TokenKind::HereDoc { fd },
                span,
            }) => return self.here_doc(fd, span),
            _ => return Err(missing(self.end_span())),
        };
        let unsupported = |issue| Refusal::new(Construct::UnsupportedRedirect(issue), op_span);
        let fd = match (fd, op) {
            (Some(n), _) => n,
            (None, RedirTok::Read | RedirTok::HereString) => 0,
            (None, _) => 1,
        };
        let fd = match u8::try_from(fd) {
            Ok(fd @ 0..=2) => fd,
            _ => return Err(unsupported(RedirectIssue::OtherFd)),
        };
        if matches!(op, RedirTok::Read | RedirTok::HereString) != (fd == 0) {
            return Err(unsupported(RedirectIssue::Direction));
        }
        self.skip_blanks(false);
        match self.peek_kind() {
            Some(TokenKind::Part(_)) => {}
            Some(TokenKind::Refused { .. }) => {
                return Err(self.bump().map_or_else(|| missing(op_span), unexpected));
            }
            _ => {
                return Err(Refusal::new(Construct::MissingRedirectTarget, op_span));
            }
        }
        let target = self.single_word()?;
        let span = op_span.to(target.word.span);
        let op = match op {
            RedirTok::HereString => RedirectOp::HereString(target.word),
            RedirTok::Read => RedirectOp::Read(target.word),
            RedirTok::Write => RedirectOp::Write(target.word),
            RedirTok::Append => RedirectOp::Append(target.word),
            RedirTok::Dup => {
                let issue = match target.word.value.as_str() {
                    "1" if target.plain => return Ok(redirect(fd, RedirectOp::Dup(1), span)),
                    "2" if target.plain => return Ok(redirect(fd, RedirectOp::Dup(2), span)),
                    "-" if target.plain => RedirectIssue::Close,
                    v if target.plain && v.bytes().all(|b| b.is_ascii_digit()) => {
                        RedirectIssue::OtherFd
                    }
                    _ => RedirectIssue::DupToFile,
                };
                return Err(Refusal::new(Construct::UnsupportedRedirect(issue), span));
            }
        };
        Ok(redirect(fd, op, span))
    }
}

impl Parser<'_> {
    /// A `<<DELIM` operator just read: its body is the next one collected.
    fn here_doc(&mut self, fd: Option<u32>, op_span: Span) -> Result<Redirect> {
        let fd = match fd.map(u8::try_from) {
            None => 0,
            Some(Ok(0)) => 0,
            Some(Ok(1 | 2)) => {
                return Err(Refusal::new(
                    Construct::UnsupportedRedirect(RedirectIssue::Direction),
                    op_span,
                ));
            }
            Some(_) => {
                return Err(Refusal::new(
                    Construct::UnsupportedRedirect(RedirectIssue::OtherFd),
                    op_span,
                ));
            }
        };
        let body = match self.bodies.next() {
            Some(Ok(body)) => body,
            Some(Err((construct, span))) => return Err(Refusal::new(construct, span)),
            None => return Err(Refusal::new(Construct::HereDocDelimiter, op_span)),
        };
        Ok(redirect(
            fd,
            RedirectOp::HereDoc(HereDoc {
                delimiter: body.delimiter,
                quoted: body.quoted,
                strip_tabs: body.strip_tabs,
                body: body.text,
                body_span: body.span,
            }),
            op_span,
        ))
    }
}

fn redirect(fd: u8, op: RedirectOp, span: Span) -> Redirect {
    Redirect { fd, op, span }
}

fn cd(
    assignments: Vec<Assignment>,
    mut argv: Vec<Word>,
    redirects: Vec<Redirect>,
    span: Span,
) -> Result<Command> {
    let misuse = if !assignments.is_empty() {
        Some(CdMisuse::Assignment)
    } else if !redirects.is_empty() {
        Some(CdMisuse::Redirect)
    } else if argv.len() < 2 {
        Some(CdMisuse::NoArgument)
    } else if argv.len() > 2 {
        Some(CdMisuse::TooManyArguments)
    } else if argv[1].value == "-" {
        return Ok(Command::DirStack(DirStack {
            op: DirOp::Back,
            span,
        }));
    } else if argv[1].value.starts_with('-') {
        Some(CdMisuse::Option)
    } else if argv[1].value.is_empty() {
        Some(CdMisuse::EmptyDir)
    } else {
        None
    };
    match (misuse, argv.pop()) {
        (None, Some(dir)) => Ok(Command::Cd(Cd { dir, span })),
        (misuse, _) => Err(cd_misuse(misuse.unwrap_or(CdMisuse::NoArgument), span)),
    }
}

/// `&` after `list`: admitted after one pipeline of programs, which bash runs in the
/// background without a subshell of its own to speak of.
fn background(list: &AndOr, amp: Span) -> Result<()> {
    if let Some((_, last)) = list.rest.last() {
        return Err(Refusal::new(
            Construct::Background,
            list.first.span.to(last.span).to(amp),
        ));
    }
    if list.first.timed {
        return Err(Refusal::new(Construct::TimeForm, list.first.span.to(amp)));
    }
    match list.first.commands.as_slice() {
        [Command::Cd(Cd { span, .. }) | Command::DirStack(DirStack { span, .. })] => {
            Err(cd_misuse(CdMisuse::Background, span.to(amp)))
        }
        _ => Ok(()),
    }
}

/// `pushd DIR`, `popd`, `dirs`: the forms bash gives a meaning without options; the
/// rest (`pushd` alone, `+N`, `-n`, `dirs -v`, ...) and redirects are refused, like
/// `cd`'s.
fn dir_stack(
    assignments: Vec<Assignment>,
    mut argv: Vec<Word>,
    redirects: Vec<Redirect>,
    span: Span,
) -> Result<Command> {
    let name = argv[0].value.clone();
    let misuse = if !assignments.is_empty() {
        Some(CdMisuse::Assignment)
    } else if !redirects.is_empty() {
        Some(CdMisuse::Redirect)
    } else {
        None
    };
    let op = match (name.as_str(), argv.len()) {
        _ if misuse.is_some() => None,
        ("pushd", 2) if !argv[1].value.starts_with(['-', '+']) && !argv[1].value.is_empty() => {
            argv.pop().map(DirOp::Push)
        }
        ("popd", 1) => Some(DirOp::Pop),
        ("dirs", 1) => Some(DirOp::Show),
        _ => None,
    };
    match op {
        Some(op) => Ok(Command::DirStack(DirStack { op, span })),
        None => Err(Refusal::new(Construct::DirStackForm(name), span)),
    }
}

fn cd_misuse(misuse: CdMisuse, span: Span) -> Refusal {
    Refusal::new(Construct::CdMisuse(misuse), span)
}

fn missing(span: Span) -> Refusal {
    Refusal::new(Construct::MissingCommand, span)
}

/// A token found where a command, connector or separator was expected.
fn unexpected(tok: Tok) -> Refusal {
    match tok.kind {
        TokenKind::Refused { construct, at } => {
            Refusal::new(construct, Span::new(tok.span.start + at, tok.span.end))
        }
        _ => missing(tok.span),
    }
}
