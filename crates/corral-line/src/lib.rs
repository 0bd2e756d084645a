//! corral's own command-line grammar.
//!
//! A model writes a line such as `cd web && npm test 2>&1 | tail -n 40`.
//! corral never hands that line to a shell: [`parse`] turns it into an AST of
//! and-or lists, pipelines, commands (an argv with per-command environment
//! and redirects) and `cd`s, or into a [`Refusal`] naming the first construct
//! it does not admit, with its byte span and a reason the model can act on.
//! Every admitted line means exactly what it would mean to bash; everything
//! else is refused by name. This crate is pure: no I/O, no environment, no
//! policy.
//!
//! # Admitted
//!
//! - **Words** of unquoted characters from an enumerated set: ASCII letters
//!   and digits, `_ - . / , : @ % + = ^`, any non-ASCII character, `#`
//!   anywhere but at the start of a word, and what bash leaves literal where
//!   it stands: `{` and `}` inside a word (`{}`, `stash@{0}`, `-I{}`), `!` anywhere but as the first word of a
//!   command (`find . ! -name x`, `a!b`: history expansion is off in a
//!   non-interactive shell), and `~` inside a word (`HEAD~5`) but after `=`
//!   or `:`.
//! - **Tilde**: `~` alone or before `/` at the start of a word is the home
//!   directory. The word keeps the `~` and says so ([`Word::tilde`]); whoever
//!   runs the line expands it ([`Word::expanded`]). `~user` is refused.
//! - **Brace expansion**, as bash does it before every other expansion: an unquoted
//!   `{` with its `}` around unquoted commas (`a{b,c}d`, nested, an empty alternative
//!   dropped when the whole word is empty) or a sequence (`{1..3}`, `{01..10..3}`,
//!   `{a..e..2}`) makes one word per alternative, in bash's order, among a command's
//!   arguments. Braces that make nothing (`{}`, `{x}`, `{1..a}`) stay literal; an
//!   assignment's value is not expanded; a redirect target that would become several
//!   words is refused.
//! - **Comments**: `#` at the start of a word, to the end of its line.
//! - **File-name patterns**: an unquoted `*`, `?` or bracket expression
//!   (`[abc]`, `[!0-9]`) makes the word a pattern ([`Word::glob`], quoted and
//!   escaped characters in it made literal); whoever runs the line expands it
//!   against the file names of the directory it runs in, as bash does. A `[`
//!   the word does not close, and a lone `]`, are literal; `[ EXPR ]` is the
//!   test command. No pattern is made in an assignment's value.
//! - **Here-documents** `<<DELIM`, `<<-DELIM` (leading tabs taken off every
//!   line) and **here-strings** `<<<word`: the lines after the next newline,
//!   up to one holding only the delimiter, or the word and a newline, become
//!   stdin ([`Redirect::stdin_text`]). With a quoted delimiter (`<<'EOF'`,
//!   `<<"EOF"`, `<<\EOF`) the body is literal; with an unquoted one it is
//!   admitted only when it holds nothing bash would expand (`$`, a backtick,
//!   a backslash before one of `$ \` `` ` `` or a newline).
//! - **Single quotes**: everything up to the next `'` is literal.
//! - **Double quotes**: a backslash escapes only `"`, `\`, `$`, backtick and
//!   newline (backslash-newline is removed); before any other character the
//!   backslash is kept. `$` and backticks inside double quotes are refused,
//!   as they would expand: escape them (`\$`) or use single quotes.
//! - **Backslash** outside quotes escapes the next character (`\x` is `x`);
//!   backslash-newline is a line continuation and disappears entirely.
//! - Adjacent parts form one word: `a'b'"c"` is `abc`. `''` is an empty
//!   argument.
//! - **Connectors** `|`, `&&`, `||`, and `;` or an unquoted newline between
//!   lists. A newline may also follow `|`, `&&` or `||`. Blank lines and a
//!   trailing `;` are fine.
//! - **Background** `&` after a list of one pipeline ([`AndOr::background`]):
//!   it starts, with stdin on the null device, and the line goes on at once
//!   with status 0 (`server & sleep 1 && curl …`).
//! - **`time PIPELINE`**: the reserved word, unquoted, where a pipeline starts
//!   ([`Pipeline::timed`]); whoever runs the line writes bash's default report
//!   to stderr when the pipeline ends. `time -p` and a bare `time` are refused.
//! - **Redirects** `<`, `>`, `>>`, `2>`, `2>>`, `1>`, `1>>`, `0<`, and the
//!   duplications `2>&1`, `>&2`, `1>&2`. A redirect may come anywhere among a
//!   command's words, with or without a space before its target, and
//!   redirects keep the order written (`>f 2>&1` differs from `2>&1 >f`).
//! - **Assignments** `NAME=value` before the program, with `NAME` matching
//!   `[A-Za-z_][A-Za-z0-9_]*` and written unquoted: they set that command's
//!   environment. After the program, `a=b` is an ordinary argument.
//! - **`cd DIR`** with exactly one argument, anywhere a command may stand
//!   but inside a pipeline, with no redirects or assignments. As in bash it
//!   runs or is skipped by its connector, and when it runs it changes the
//!   directory of everything after it.
//! - **`cd -`, `pushd DIR`, `popd`, `dirs`** ([`DirStack`]), under the same
//!   rules as `cd`: the line's directory stack and previous directory, printed
//!   as bash prints them.
//!
//! # Precedence
//!
//! As in bash: `|` binds tightest; `&&` and `||` have equal precedence and
//! associate to the left; `;` and newline separate and-or lists. So
//! `a | b && c || d; e` is `((a | b) && c) || d`, then `e`.
//!
//! # Refused
//!
//! Each is a [`Construct`] with its own reason.
//!
//! - Expansions, which need shell state that does not exist here: command
//!   substitution `$( )` and backticks, arithmetic `$(( ))`, parameter
//!   expansion (`$VAR`, `${VAR}`, `$1`, `$?`, ...) also inside double quotes,
//!   `$'...'`, `$"..."`, and a bare `$`; `~user` and `~`
//!   after `=` or `:`; brace expansion in a redirect target; a here-document
//!   body that would expand, or one never closed.
//! - Structure this grammar has no place for: subshells `( )`, brace groups,
//!   process substitution `<( )` `>( )`, `&` after a list of several
//!   pipelines, `;;`, reserved words at command position (`if`, `for`,
//!   `while`, `case`, `function`, `[[`, ...; `time` only where a pipeline
//!   starts), `!` as a command's first word (negation).
//! - Redirects outside the list above: `&>`, `&>>`, `|&`, `>|`, `<>`, `<&`,
//!   `>&-`, `>&file`, descriptors other than 0, 1 and 2, and a redirect with
//!   no command.
//! - Builtins that only change shell state (`export`, `source`, `eval`,
//!   `exit`, `read`, ...): a line has no shell state. An assignment with no
//!   command is refused for the same reason; write `NAME=value cmd`.
//! - `cd` in a pipeline, in the background or timed, and `cd` with no
//!   argument, several, or an option; `pushd`, `popd` and `dirs` with options,
//!   other arguments or redirects.
//! - Any other unquoted character (control characters, `\r`, DEL, ...), and
//!   NUL anywhere, even quoted, since no argument can hold it.
//! - Syntax errors: unterminated quotes, a trailing backslash, a connector
//!   or redirect missing its command or target, an empty line.
//!
//! # Backslashes and Windows paths
//!
//! A backslash is always an escape, on every platform. An unquoted Windows
//! path such as `C:\repo\a.exe` becomes `C:repoa.exe`; quote it:
//! `'C:\repo\a.exe'`.
//!
//! # Writing lines back out
//!
//! [`quote`] and [`display_argv`] produce text that [`parse`] reads back as
//! the same words.

#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod ast;
mod brace;
mod lexer;
mod parser;
mod quote;
mod refusal;
pub mod visible;
mod word;

pub use ast::{
    AndOr, Assignment, Cd, Command, Connector, DirOp, DirStack, HereDoc, Line, Pipeline, Redirect,
    RedirectOp, Simple, Span, Word,
};
pub use quote::{display_argv, quote};
pub use refusal::{CdMisuse, Construct, RedirectIssue, Refusal};

/// Parse one command line into its lists, pipelines, commands and redirects,
/// or refuse it by name with the span of the first offending construct.
pub fn parse(src: &str) -> Result<Line, Refusal> {
    parser::Parser::new(src).line()
}
