//! Properties that must hold for every input, not just the fixtures.

use corral_line::visible::is_hidden;
use corral_line::{
    Command, Construct, Line, RedirectOp, Refusal, Span, display_argv, parse, quote,
};
use proptest::prelude::*;

/// Fragments that exercise the grammar far more often than random text.
fn shellish() -> impl Strategy<Value = String> {
    let pieces = prop::sample::select(vec![
        "a",
        "b",
        "é",
        " ",
        "\t",
        "\n",
        "\r",
        "\0",
        "'",
        "\"",
        "\\",
        "\\\n",
        "$",
        "$(",
        "${",
        "`",
        "(",
        ")",
        "{",
        "}",
        "{}",
        "[",
        "]",
        "*",
        "?",
        "~",
        "!",
        "#",
        "=",
        "X=",
        "+=",
        ";",
        ";;",
        "&",
        "&&",
        "|",
        "||",
        "|&",
        "<",
        "<<",
        ">",
        ">>",
        ">&",
        "&>",
        "2>",
        "2>&1",
        "1",
        "2",
        "3",
        "-",
        "cd",
        "if",
        "export",
        "<<'E'",
        "<<-E",
        "\nE\n",
        "\n\tE",
        "<<<",
        "~/",
        "$(cat <<E\n",
    ]);
    prop::collection::vec(pieces, 0..24).prop_map(|v| v.concat())
}

fn line_spans(line: &Line) -> Vec<Span> {
    let mut spans = Vec::new();
    for pipeline in line.lists.iter().flat_map(|l| l.pipelines()) {
        spans.push(pipeline.span);
    }
    for command in line.commands() {
        match command {
            Command::Cd(cd) => spans.extend([cd.span, cd.dir.span]),
            Command::DirStack(d) => {
                spans.push(d.span);
                if let corral_line::DirOp::Push(dir) = &d.op {
                    spans.push(dir.span);
                }
            }
            Command::Simple(s) => {
                spans.push(s.span);
                spans.extend(s.argv.iter().map(|w| w.span));
                for a in &s.assignments {
                    spans.extend([a.span, a.value.span]);
                }
                for r in &s.redirects {
                    spans.push(r.span);
                    if let RedirectOp::Read(w) | RedirectOp::Write(w) | RedirectOp::Append(w) =
                        &r.op
                    {
                        spans.push(w.span);
                    }
                }
            }
        }
    }
    spans
}

fn assert_span_ok(src: &str, span: Span) -> Result<(), TestCaseError> {
    prop_assert!(
        span.start <= span.end && span.end <= src.len(),
        "{span:?} out of bounds"
    );
    prop_assert!(src.is_char_boundary(span.start) && src.is_char_boundary(span.end));
    Ok(())
}

fn check_spans(src: &str) -> Result<(), TestCaseError> {
    match parse(src) {
        Ok(line) => line_spans(&line)
            .into_iter()
            .try_for_each(|s| assert_span_ok(src, s)),
        Err(refusal) => assert_span_ok(src, refusal.span),
    }
}

/// Builtins are found by bash even when quoted, and `cd` becomes a `Cd`, so
/// no quoting makes these a plain program.
fn is_not_a_program(word: &str, result: &Result<Line, Refusal>) -> bool {
    match result {
        Err(r) => {
            matches!(&r.construct, Construct::Builtin(b) if b == word)
                || (word == "cd" && matches!(r.construct, Construct::CdMisuse(_)))
        }
        Ok(_) => word == "cd",
    }
}

fn argv_of(line: &Line) -> Option<Vec<&str>> {
    let mut commands = line.commands();
    let Some(Command::Simple(simple)) = commands.next() else {
        return None;
    };
    if commands.next().is_some() || !simple.redirects.is_empty() || !simple.assignments.is_empty() {
        return None;
    }
    Some(simple.argv.iter().map(|w| w.value.as_str()).collect())
}

/// Words with nothing a person must not read raw: what `quote` writes in single quotes.
fn shown_word() -> impl Strategy<Value = String> {
    "[^\\p{Cc}\u{200b}-\u{200f}\u{202a}-\u{202e}\u{2060}\u{2066}-\u{2069}\u{feff}\u{61c}]*"
}

/// [`shellish`] without what `quote` escapes.
fn shown_shellish() -> impl Strategy<Value = String> {
    shellish().prop_map(|w| w.chars().filter(|c| !is_hidden(*c)).collect())
}

proptest! {
    #[test]
    fn spans_are_in_bounds_on_any_string(src in any::<String>()) {
        check_spans(&src)?;
    }

    #[test]
    fn spans_are_in_bounds_on_shell_like_text(src in shellish()) {
        check_spans(&src)?;
    }

    #[test]
    fn quoted_word_is_one_argument(word in shown_word()) {
        let src = format!("echo {}", quote(&word));
        let line = parse(&src).map_err(|e| TestCaseError::fail(format!("{src:?}: {e}")))?;
        prop_assert_eq!(argv_of(&line), Some(vec!["echo", word.as_str()]));
    }

    #[test]
    fn quoted_shell_like_word_is_one_argument(word in shown_shellish()) {
        let src = format!("echo {}", quote(&word));
        let line = parse(&src).map_err(|e| TestCaseError::fail(format!("{src:?}: {e}")))?;
        prop_assert_eq!(argv_of(&line), Some(vec!["echo", word.as_str()]));
    }

    #[test]
    fn quoted_word_alone_is_the_program(word in prop_oneof![shown_shellish(), shown_word()]) {
        let src = quote(&word);
        let result = parse(&src);
        prop_assume!(!is_not_a_program(&word, &result));
        let line = result.map_err(|e| TestCaseError::fail(format!("{src:?}: {e}")))?;
        prop_assert_eq!(argv_of(&line), Some(vec![word.as_str()]));
    }

    #[test]
    fn display_argv_round_trips(argv in prop::collection::vec(prop_oneof![shown_shellish(), shown_word()], 1..5)) {
        let src = display_argv(&argv);
        let result = parse(&src);
        prop_assume!(!is_not_a_program(&argv[0], &result));
        let line = result.map_err(|e| TestCaseError::fail(format!("{src:?}: {e}")))?;
        let expected: Vec<&str> = argv.iter().map(String::as_str).collect();
        prop_assert_eq!(argv_of(&line), Some(expected));
    }

    /// A word with a character a person must not read raw is written escaped in `$'…'`:
    /// nothing hidden reaches the text, and corral's parser refuses it by name rather than
    /// reading the escapes as the word.
    #[test]
    fn a_quoted_word_shows_no_hidden_character(word in prop_oneof![shellish(), any::<String>()]) {
        let src = quote(&word);
        prop_assert!(!src.chars().any(is_hidden), "{:?}", src);
        if word.chars().any(is_hidden) {
            let refusal = parse(&format!("echo {src}")).err();
            prop_assert_eq!(refusal.map(|r| r.construct), Some(Construct::AnsiCQuote));
        }
    }
}
