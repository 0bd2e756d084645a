//! The parsed line. Every node keeps its span so a later stage (policy,
//! trace) can point back into the text the model wrote.

use serde::Serialize;

/// A byte range into the source line. Always on `char` boundaries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize)]
pub struct Span {
    /// The first byte.
    pub start: usize,
    /// One past the last byte.
    pub end: usize,
}

impl Span {
    /// The bytes `start..end`.
    pub fn new(start: usize, end: usize) -> Self {
        Self { start, end }
    }

    /// The smallest span covering both.
    pub fn to(self, other: Span) -> Span {
        Span::new(self.start.min(other.start), self.end.max(other.end))
    }

    /// The text this span covers in `src`.
    pub fn slice(self, src: &str) -> &str {
        &src[self.start..self.end]
    }
}

/// A whole line: and-or lists separated by `;` or newline. Never empty.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Line {
    /// The lists, in the order they run.
    pub lists: Vec<AndOr>,
}

impl Line {
    /// Every command in source order.
    pub fn commands(&self) -> impl Iterator<Item = &Command> {
        self.lists
            .iter()
            .flat_map(AndOr::pipelines)
            .flat_map(|p| p.commands.iter())
    }
}

/// Pipelines joined by `&&` / `||`, evaluated left to right.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AndOr {
    /// The pipeline that always runs.
    pub first: Pipeline,
    /// The rest, each run or skipped by its connector and the status so far.
    pub rest: Vec<(Connector, Pipeline)>,
    /// Ended by `&`: the pipeline starts and the line goes on without waiting for it
    /// (its status is 0, its stdin the null device). Only a list of one pipeline is
    /// admitted there.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub background: bool,
}

impl AndOr {
    /// Every pipeline in source order.
    pub fn pipelines(&self) -> impl Iterator<Item = &Pipeline> {
        std::iter::once(&self.first).chain(self.rest.iter().map(|(_, p)| p))
    }
}

/// What joins two pipelines of an and-or list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Connector {
    /// `&&`
    And,
    /// `||`
    Or,
}

/// Commands joined by `|`. Never empty.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Pipeline {
    /// The commands, stdout to stdin, left to right.
    pub commands: Vec<Command>,
    /// Where it stands in the line.
    pub span: Span,
    /// Preceded by the reserved word `time`: when it ends, the real, user and system
    /// time it took go to stderr in bash's default format.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub timed: bool,
}

/// One command of a pipeline.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum Command {
    /// A program to start.
    Simple(Simple),
    /// A change of directory for what runs after it.
    Cd(Cd),
    /// `cd -`, `pushd DIR`, `popd` or `dirs`: the line's directory stack.
    DirStack(DirStack),
}

impl Command {
    /// Where it stands in the line.
    pub fn span(&self) -> Span {
        match self {
            Command::Simple(s) => s.span,
            Command::Cd(c) => c.span,
            Command::DirStack(d) => d.span,
        }
    }
}

/// A program with its arguments, per-command environment and redirects.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Simple {
    /// `NAME=value` written before the program.
    pub assignments: Vec<Assignment>,
    /// Never empty: a command of only redirects or assignments is refused.
    pub argv: Vec<Word>,
    /// In the order written, which is the order they apply.
    pub redirects: Vec<Redirect>,
    /// Where it stands in the line.
    pub span: Span,
}

impl Simple {
    /// The program to run (`argv[0]`).
    pub fn program(&self) -> Option<&str> {
        self.argv.first().map(|w| w.value.as_str())
    }
}

/// `cd DIR`: changes the directory of everything that runs after it, as in
/// bash (after `&&` it runs only when the status so far is 0, and so on).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Cd {
    /// The directory, as written.
    pub dir: Word,
    /// Where it stands in the line.
    pub span: Span,
}

/// A builtin that moves along the line's directory stack, as bash's do: it changes the
/// directory of everything after it (`dirs` only prints), prints the stack, and fails
/// with status 1 and bash's message when there is nowhere to go.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DirStack {
    /// Which builtin.
    pub op: DirOp,
    /// Where it stands in the line.
    pub span: Span,
}

/// What a [`DirStack`] builtin does.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum DirOp {
    /// `cd -`: back to the directory before the last change (`OLDPWD`), printed.
    Back,
    /// `pushd DIR`: the current directory goes on the stack and `DIR` is entered; the
    /// stack is printed.
    Push(Word),
    /// `popd`: the directory on top of the stack is taken off and entered; the stack is
    /// printed.
    Pop,
    /// `dirs`: the stack is printed.
    Show,
}

/// `NAME=value` before a command: set in that command's environment only.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Assignment {
    /// The variable.
    pub name: String,
    /// Its value (no pattern is made in it).
    pub value: Word,
    /// Where it stands in the line.
    pub span: Span,
}

/// One argument after quote removal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Word {
    /// The word after quote removal.
    pub value: String,
    /// Where it stands in the line.
    pub span: Span,
    /// The word starts with an unquoted `~` (alone, or before `/`): `value`
    /// starts with that `~`, which stands for the home directory. Whoever
    /// runs the line expands it (see [`Word::expanded`]).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub tilde: bool,
    /// The word holds an unquoted `*`, `?` or bracket expression: its pattern, with
    /// every quoted or escaped character made literal (`[*]`). Whoever runs the line
    /// expands it against the file names of the directory it runs in, as bash does: the
    /// matches sorted, and the word itself (`value`) when nothing matches.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub glob: Option<String>,
}

impl Word {
    /// The value with a leading `~` replaced by `home`, as bash expands it.
    pub fn expanded(&self, home: &str) -> String {
        match self.value.strip_prefix('~') {
            Some(rest) if self.tilde => {
                // bash drops the slash `~/` would double when HOME ends in one.
                let home = if rest.starts_with('/') && home.len() > 1 {
                    home.strip_suffix('/').unwrap_or(home)
                } else {
                    home
                };
                format!("{home}{rest}")
            }
            _ => self.value.clone(),
        }
    }
}

/// A redirect of one of a command's descriptors.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Redirect {
    /// 0, 1 or 2.
    pub fd: u8,
    /// What the descriptor becomes.
    pub op: RedirectOp,
    /// Where it stands in the line.
    pub span: Span,
}

/// What a redirect does.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum RedirectOp {
    /// `<file`
    Read(Word),
    /// `>file`
    Write(Word),
    /// `>>file`
    Append(Word),
    /// `N>&M`: make `fd` a copy of descriptor M (1 or 2).
    Dup(u8),
    /// `<<DELIM` or `<<-DELIM`: the lines that follow, as stdin.
    HereDoc(HereDoc),
    /// `<<<word`: the word and a newline, as stdin.
    HereString(Word),
}

/// A here-document whose body is literal text: its delimiter was quoted, or
/// its body holds nothing bash would expand.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HereDoc {
    /// The delimiter, quotes removed.
    pub delimiter: String,
    /// Whether the delimiter was quoted (`<<'EOF'`, `<<"EOF"`, `<<\EOF`).
    pub quoted: bool,
    /// `<<-`: leading tabs were taken off every line.
    pub strip_tabs: bool,
    /// What the command reads: every line up to the delimiter's, each with
    /// its newline.
    pub body: String,
    /// Where the body's lines are in the source.
    pub body_span: Span,
}

impl Redirect {
    /// The text this redirect feeds to stdin, for a here-document or a
    /// here-string; `None` for the other redirects.
    pub fn stdin_text(&self) -> Option<String> {
        match &self.op {
            RedirectOp::HereDoc(doc) => Some(doc.body.clone()),
            RedirectOp::HereString(word) => Some(format!("{}\n", word.value)),
            _ => None,
        }
    }
}
