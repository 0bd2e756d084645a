//! Named refusals: every construct the grammar does not admit, with a reason
//! a model can act on.

use serde::Serialize;

use crate::ast::Span;

/// Why a line was not admitted, and where.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, thiserror::Error)]
#[error(
    "{} at {}..{} {}: {}",
    .construct.label(),
    .span.start,
    .span.end,
    .construct.verdict(),
    .construct.reason()
)]
pub struct Refusal {
    /// The construct that was refused.
    pub construct: Construct,
    /// Byte range of the construct in the source line.
    pub span: Span,
}

impl Refusal {
    pub(crate) fn new(construct: Construct, span: Span) -> Self {
        Self { construct, span }
    }

    /// A stable `snake_case` identifier for the refused construct, fit for
    /// logs and metrics.
    pub fn construct_name(&self) -> &'static str {
        self.construct.name()
    }

    /// What to write instead.
    pub fn reason(&self) -> &'static str {
        self.construct.reason()
    }
}

/// Everything the grammar refuses, by name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum Construct {
    /// `$( )`
    CommandSubstitution,
    /// `` `...` ``
    Backtick,
    /// `$(( ))` or `$[ ]`
    Arithmetic,
    /// `$NAME`, `${NAME}`, `$1`, `$?`, ...
    ParameterExpansion,
    /// A `$` that starts nothing; bash would keep it, but it is almost
    /// always a mistake worth pointing out.
    BareDollar,
    /// `$'...'`
    AnsiCQuote,
    /// `$"..."`
    LocaleQuote,
    /// `<( )` or `>( )`
    ProcessSubstitution,
    /// `(` or `)`
    Subshell,
    /// `{` or `}` as a word of its own, or brace expansion (`{a,b}`, `{1..3}`)
    Brace,
    /// `<<`: no longer refused by itself; kept for callers that name it.
    HereDoc,
    /// `<<<`: no longer refused by itself; kept for callers that name it.
    HereString,
    /// A here-document whose delimiter is unquoted and whose body holds
    /// something bash would expand (`$`, a backtick, `\$`, ...).
    HereDocExpansion,
    /// A here-document delimiter holding `$`, a backtick or a newline.
    HereDocDelimiter,
    /// A here-document with no line holding only its delimiter.
    UnterminatedHereDoc(String),
    /// `&` after an and-or list of more than one pipeline.
    Background,
    /// `*`, `?`, `[` or `]`
    Glob(char),
    /// `~`
    Tilde,
    /// `#` at the start of a word
    Comment,
    /// A reserved word at command position, or `[[` / `]]`.
    Keyword(String),
    /// `time` with no pipeline after it, with an option (`time -p`), or in the background.
    TimeForm,
    /// `!` as a word of its own: pipeline negation.
    Negation,
    /// `!` inside a word.
    HistoryExpansion,
    /// A builtin that only changes shell state.
    Builtin(String),
    /// `[` as a word of its own: the `test` builtin's bracket form.
    TestBracket,
    /// `NAME=value` with no command after it.
    BareAssignment,
    /// `NAME+=value` before a command.
    AppendAssignment,
    /// `pushd`, `popd` or `dirs` in a form other than `pushd DIR`, `popd`, `dirs`.
    DirStackForm(String),
    /// `cd` used somewhere its effect cannot be applied statically.
    CdMisuse(CdMisuse),
    /// A redirect outside the admitted set.
    UnsupportedRedirect(RedirectIssue),
    /// A redirect with no command to apply it to.
    RedirectWithoutCommand,
    /// `;;`, `;&` or `;;&`
    CaseTerminator,
    /// A character outside the admitted set, unquoted.
    UnexpectedChar(char),
    /// A NUL byte, anywhere.
    Nul,
    /// A `'` or `"` with no closing partner.
    UnterminatedQuote,
    /// A `\` at the very end of the line.
    TrailingBackslash,
    /// A connector or separator with no command on one side.
    MissingCommand,
    /// A redirect operator with no file after it.
    MissingRedirectTarget,
    /// Nothing to run.
    Empty,
}

/// The ways `cd` can be misused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum CdMisuse {
    /// `cd` alone.
    NoArgument,
    /// `cd a b`
    TooManyArguments,
    /// `cd -`
    Dash,
    /// `cd -P dir`, `cd -L`, ...
    Option,
    /// `cd ''`
    EmptyDir,
    /// `a && cd b`, `a || cd b`
    AfterConnector,
    /// `cd a | b`
    InPipeline,
    /// `cd a >f`
    Redirect,
    /// `X=1 cd a`
    Assignment,
    /// `cd a &`
    Background,
    /// `time cd a`
    Timed,
}

/// The ways a redirect can fall outside the admitted set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum RedirectIssue {
    /// `&>`, `&>>`
    BothOutputs,
    /// `|&`
    PipeStderr,
    /// `>|`
    Clobber,
    /// `<>`
    ReadWrite,
    /// `<&`
    DupInput,
    /// `>&-`
    Close,
    /// `>&file`, `2>&1x`, `>&"1"`
    DupToFile,
    /// `3>`, `>&3`
    OtherFd,
    /// `0>`, `1<`, `2<`
    Direction,
}

impl Construct {
    /// A stable `snake_case` identifier.
    pub fn name(&self) -> &'static str {
        match self {
            Self::CommandSubstitution => "command_substitution",
            Self::Backtick => "backtick",
            Self::Arithmetic => "arithmetic",
            Self::ParameterExpansion => "parameter_expansion",
            Self::BareDollar => "bare_dollar",
            Self::AnsiCQuote => "ansi_c_quote",
            Self::LocaleQuote => "locale_quote",
            Self::ProcessSubstitution => "process_substitution",
            Self::Subshell => "subshell",
            Self::Brace => "brace",
            Self::HereDoc => "here_doc",
            Self::HereString => "here_string",
            Self::HereDocExpansion => "here_doc_expansion",
            Self::HereDocDelimiter => "here_doc_delimiter",
            Self::UnterminatedHereDoc(_) => "unterminated_here_doc",
            Self::Background => "background",
            Self::Glob(_) => "glob",
            Self::Tilde => "tilde",
            Self::Comment => "comment",
            Self::Keyword(_) => "keyword",
            Self::TimeForm => "time_form",
            Self::Negation => "negation",
            Self::HistoryExpansion => "history_expansion",
            Self::Builtin(_) => "builtin",
            Self::TestBracket => "test_bracket",
            Self::BareAssignment => "bare_assignment",
            Self::AppendAssignment => "append_assignment",
            Self::DirStackForm(_) => "dir_stack_form",
            Self::CdMisuse(_) => "cd_misuse",
            Self::UnsupportedRedirect(_) => "unsupported_redirect",
            Self::RedirectWithoutCommand => "redirect_without_command",
            Self::CaseTerminator => "case_terminator",
            Self::UnexpectedChar(_) => "unexpected_char",
            Self::Nul => "nul",
            Self::UnterminatedQuote => "unterminated_quote",
            Self::TrailingBackslash => "trailing_backslash",
            Self::MissingCommand => "missing_command",
            Self::MissingRedirectTarget => "missing_redirect_target",
            Self::Empty => "empty",
        }
    }

    /// How the construct is shown to a reader.
    pub fn label(&self) -> String {
        let s = match self {
            Self::CommandSubstitution => "command substitution `$( )`",
            Self::Backtick => "command substitution with backticks",
            Self::Arithmetic => "arithmetic expansion `$(( ))`",
            Self::ParameterExpansion => "variable expansion `$`",
            Self::BareDollar => "bare `$`",
            Self::AnsiCQuote => "ANSI-C quoting `$'...'`",
            Self::LocaleQuote => "locale quoting `$\"...\"`",
            Self::ProcessSubstitution => "process substitution `<( )` or `>( )`",
            Self::Subshell => "subshell `( )`",
            Self::Brace => "brace `{ }`",
            Self::HereDoc => "here-document `<<`",
            Self::HereString => "here-string `<<<`",
            Self::HereDocExpansion => "expansion in a here-document with an unquoted delimiter",
            Self::HereDocDelimiter => "here-document delimiter",
            Self::UnterminatedHereDoc(d) => {
                return format!("here-document `<<{d}` without its closing `{d}` line");
            }
            Self::Background => "background `&` after `&&` or `||`",
            Self::Glob(c) => return format!("glob `{c}`"),
            Self::Tilde => "tilde `~`",
            Self::Comment => "comment `#`",
            Self::Keyword(k) => return format!("shell keyword `{k}`"),
            Self::TimeForm => "`time` without a pipeline, with an option, or in the background",
            Self::Negation => "negation `!`",
            Self::HistoryExpansion => "history expansion `!`",
            Self::Builtin(b) => return format!("shell builtin `{b}`"),
            Self::TestBracket => "test bracket `[`",
            Self::BareAssignment => "assignment without a command",
            Self::AppendAssignment => "append assignment `+=`",
            Self::DirStackForm(b) => return format!("`{b}` in this form"),
            Self::CdMisuse(m) => match m {
                CdMisuse::NoArgument => "`cd` without a directory",
                CdMisuse::TooManyArguments => "`cd` with several arguments",
                CdMisuse::Dash => "`cd -`",
                CdMisuse::Option => "`cd` option",
                CdMisuse::EmptyDir => "`cd` to an empty path",
                CdMisuse::AfterConnector => "`cd` after `&&` or `||`",
                CdMisuse::InPipeline => "`cd` in a pipeline",
                CdMisuse::Redirect => "`cd` with a redirect",
                CdMisuse::Assignment => "`cd` with an assignment",
                CdMisuse::Background => "`cd` in the background",
                CdMisuse::Timed => "`time cd`",
            },
            Self::UnsupportedRedirect(r) => match r {
                RedirectIssue::BothOutputs => "redirect `&>`",
                RedirectIssue::PipeStderr => "pipe `|&`",
                RedirectIssue::Clobber => "redirect `>|`",
                RedirectIssue::ReadWrite => "redirect `<>`",
                RedirectIssue::DupInput => "redirect `<&`",
                RedirectIssue::Close => "descriptor close `>&-`",
                RedirectIssue::DupToFile => "redirect `>&` to a non-descriptor",
                RedirectIssue::OtherFd => "redirect of a descriptor other than 0, 1 or 2",
                RedirectIssue::Direction => "redirect in the wrong direction",
            },
            Self::RedirectWithoutCommand => "redirect without a command",
            Self::CaseTerminator => "case terminator `;;`",
            Self::UnexpectedChar(c) => {
                return format!("character {:?} (U+{:04X})", c, u32::from(*c));
            }
            Self::Nul => "NUL character",
            Self::UnterminatedQuote => "unterminated quote",
            Self::TrailingBackslash => "trailing backslash",
            Self::MissingCommand => "missing command",
            Self::MissingRedirectTarget => "redirect without a target",
            Self::Empty => "empty line",
        };
        s.to_owned()
    }

    /// Whether bash itself would reject the line, as opposed to the grammar
    /// choosing not to admit something bash accepts.
    pub fn is_syntax_error(&self) -> bool {
        matches!(
            self,
            Self::UnterminatedQuote
                | Self::TrailingBackslash
                | Self::MissingCommand
                | Self::MissingRedirectTarget
                | Self::CaseTerminator
                | Self::UnterminatedHereDoc(_)
        )
    }

    fn verdict(&self) -> &'static str {
        match self {
            Self::Glob(_) | Self::Tilde => "is not expanded",
            Self::Empty => "has nothing to run",
            Self::Nul | Self::UnexpectedChar(_) => "is not allowed",
            Self::MissingCommand
            | Self::MissingRedirectTarget
            | Self::UnterminatedQuote
            | Self::TrailingBackslash
            | Self::CaseTerminator => "is a syntax error",
            Self::UnterminatedHereDoc(_) => "is not closed",
            _ => "is not supported",
        }
    }

    /// What to write instead.
    pub fn reason(&self) -> &'static str {
        match self {
            Self::CommandSubstitution | Self::Backtick => {
                "run the inner command as its own call first and write its output into this line \
                 as an argument; for a message of several lines, `-F-` or a file with a \
                 here-document works: `git commit -F- <<'EOF'`"
            }
            Self::Arithmetic => "compute the value first and write the number literally",
            Self::ParameterExpansion => {
                "lines have no shell variables: write the value literally; \
                 a literal `$` must be single-quoted or escaped as `\\$`, also inside double quotes"
            }
            Self::BareDollar => "quote it ('$') or escape it (`\\$`) so it is passed literally",
            Self::AnsiCQuote => {
                "write the characters directly inside single quotes (a newline may appear inside quotes)"
            }
            Self::LocaleQuote => "use plain double or single quotes",
            Self::ProcessSubstitution => {
                "write the command's output to a file first and pass the file name"
            }
            Self::Subshell => {
                "run the commands directly (a `cd` at the start applies only to this line); \
                 quote parentheses meant as literal text"
            }
            Self::Brace => {
                "brace groups `{ a; b; }` do not exist here: write the commands out, joined with \
                 `&&` or `;`; quote a brace meant as literal text. Brace expansion (`a{b,c}`, \
                 `{1..3}`) is admitted among a command's arguments, but a redirect's target must \
                 stay one file name: write it out"
            }
            Self::HereDoc | Self::HereString => {
                "here-documents feed stdin: write `<<'EOF'`, the text on the lines after, then a line \
                 holding only `EOF`; a here-string is `<<<'text'`"
            }
            Self::HereDocExpansion => {
                "quote the delimiter (`<<'EOF'`) so the body is passed exactly as written; \
                 lines have no shell variables to expand"
            }
            Self::HereDocDelimiter => "use a plain word as the delimiter, e.g. `<<'EOF'`",
            Self::UnterminatedHereDoc(_) => {
                "end the body with a line holding only the delimiter, with no spaces around it \
                 (with `<<-`, leading tabs are allowed)"
            }
            Self::Background => {
                "`&` here puts a whole `&&`/`||` list in the background: put one pipeline there \
                 (`server & sleep 1 && curl …`), or start the list with shell_start (it returns a \
                 handle to poll and kill); a background job ends with the call"
            }
            Self::Glob(_) => {
                "name the files: list them first (e.g. `find DIR -name '*.py'`) and pass the names, \
                 or quote the pattern if the program should see it (`find . -name '*.py'`)"
            }
            Self::Tilde => {
                "`~` and `~/path` at the start of a word are expanded; for another user's home or \
                 after `=` or `:`, write the path in full, or quote `~` if the program should see it"
            }
            Self::Comment => "remove the comment, or quote `#` if it is meant as an argument",
            Self::Keyword(k) if k == "[[" || k == "]]" => {
                "use the `test` program instead, e.g. `test -f FILE`"
            }
            Self::Keyword(_) => {
                "lines have no control flow: write each command out, joined with `&&`, `||` and `;` \
                 (`a x && a y` for a loop over x and y), or make one call per command; \
                 quote the word if it is meant as a program name"
            }
            Self::TimeForm => {
                "write `time CMD …` in the foreground: the report is bash's default one (real, \
                 user, sys); `time -p`, a `time` with nothing to measure and a timed background \
                 job are not supported"
            }
            Self::Negation => "use `||` to act on failure, or quote `!` meant as an argument",
            Self::HistoryExpansion => "quote `!` so it is passed literally (e.g. '!')",
            Self::Builtin(b) => builtin_reason(b),
            Self::TestBracket => "use the `test` program instead, e.g. `test -f FILE`",
            Self::BareAssignment => {
                "lines have no shell variables: put the assignment in front of the command \
                 that needs it, e.g. `NAME=value cmd`"
            }
            Self::AppendAssignment => "write the whole value: `NAME=value cmd`",
            Self::DirStackForm(_) => {
                "write `pushd DIR`, `popd` or `dirs` alone, without options or redirects, joined \
                 to the rest with `&&` or `;` (the stack lasts until the end of the line); \
                 `cd DIR` and `cd -` work too"
            }
            Self::CdMisuse(m) => match m {
                CdMisuse::NoArgument => "name the directory: `cd DIR` (there is no home directory)",
                CdMisuse::TooManyArguments => {
                    "cd takes exactly one directory; quote a path that contains spaces"
                }
                CdMisuse::Dash => "write `cd -` alone, or name the directory",
                CdMisuse::Option => "cd takes no options here: write `cd DIR`",
                CdMisuse::EmptyDir => "name the directory: `cd DIR`",
                CdMisuse::AfterConnector => "write `cd DIR && …`",
                CdMisuse::InPipeline => {
                    "cd in a pipeline does not change the directory of the rest of the line; \
                     write `cd DIR && …` instead"
                }
                CdMisuse::Background => {
                    "a `cd` in the background changes nothing for the rest of the line: drop the `&`"
                }
                CdMisuse::Timed => "drop `time`: a `cd` takes no time worth measuring",
                CdMisuse::Redirect | CdMisuse::Assignment => {
                    "write `cd DIR` on its own, joined to the rest with `&&` or `;`"
                }
            },
            Self::UnsupportedRedirect(r) => match r {
                RedirectIssue::BothOutputs => "write `>file 2>&1` (or `>>file 2>&1` to append)",
                RedirectIssue::PipeStderr => "write `2>&1 |`",
                RedirectIssue::Clobber => "write `>file`",
                RedirectIssue::ReadWrite => "use `<file` to read or `>file` to write",
                RedirectIssue::DupInput => "read from a file with `<file`",
                RedirectIssue::Close => {
                    "redirect the output to /dev/null instead, e.g. `2>/dev/null`"
                }
                RedirectIssue::DupToFile => {
                    "`>&` takes descriptor 1 or 2; to write to a file use `>file`, \
                     or `>file 2>&1` for both outputs"
                }
                RedirectIssue::OtherFd => {
                    "only stdin (`<`), stdout (`>`, `1>`) and stderr (`2>`) can be redirected"
                }
                RedirectIssue::Direction => {
                    "stdin can only be read (`<`); stdout and stderr can only be written (`>`, `>>`, `>&`)"
                }
            },
            Self::RedirectWithoutCommand => {
                "put the redirect on a command; to create an empty file use `touch FILE`"
            }
            Self::CaseTerminator => "separate commands with a single `;`",
            Self::UnexpectedChar(_) => {
                "only printable characters may appear outside quotes; quote it if the program should see it"
            }
            Self::Nul => "arguments cannot contain NUL bytes",
            Self::UnterminatedQuote => {
                "close the quote; inside single quotes write a single quote as '\\''"
            }
            Self::TrailingBackslash => {
                "a backslash escapes the next character; for a literal backslash write `\\\\` or '\\'"
            }
            Self::MissingCommand => "`|`, `&&`, `||` and `;` need a command on each side",
            Self::MissingRedirectTarget => "name the file after the operator, e.g. `>out.txt`",
            Self::Empty => "write a command",
        }
    }
}

fn builtin_reason(name: &str) -> &'static str {
    match name {
        "export" | "unset" | "set" | "local" | "declare" | "typeset" | "readonly" => {
            "lines have no shell state: to set an environment variable for one command \
             write `NAME=value cmd`"
        }
        "source" | "." => {
            "lines have no shell state to load a script into: for a virtualenv, run its programs \
             by path (`.venv/bin/pytest` instead of `source .venv/bin/activate && pytest`); \
             to set a variable for one command write `NAME=value cmd`"
        }
        "eval" | "exec" | "builtin" | "command" => "write the command itself",
        "exit" | "return" | "logout" => {
            "a line ends after its last command; use `false` to fail on purpose"
        }
        "wait" | "jobs" | "fg" | "bg" | "disown" | "suspend" => {
            "there are no shell jobs: use the shell_* tools to manage background commands"
        }
        ":" => "it does nothing: use `true`",
        "type" | "help" | "times" => {
            "it reports on the shell itself: to find a program, run `which NAME`"
        }
        "break" | "continue" => "lines have no loops: write each command out",
        "printf -v" => {
            "lines have no shell variables to assign: print to stdout and use the output"
        }
        "read" | "mapfile" | "readarray" => {
            "lines have no shell variables to read into: pass the input as arguments or through a file"
        }
        _ => "lines have no shell state for this builtin to change",
    }
}
