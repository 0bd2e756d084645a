//! Single behaviours worth pinning down outside the fixture snapshots.

use corral_line::{Command, Construct, RedirectOp, Span, display_argv, parse, quote};

fn argv(src: &str) -> Vec<String> {
    let line = parse(src).unwrap_or_else(|e| panic!("{src:?}: {e}"));
    match line.commands().next() {
        Some(Command::Simple(s)) => s.argv.iter().map(|w| w.value.clone()).collect(),
        other => panic!("{src:?}: not a simple command: {other:?}"),
    }
}

fn refusal(src: &str) -> corral_line::Refusal {
    parse(src).expect_err(src)
}

#[test]
fn backslash_escapes_the_next_character() {
    assert_eq!(argv(r"echo \a\ b\\c\'"), ["echo", "a b\\c'"]);
}

#[test]
fn backslash_newline_disappears() {
    assert_eq!(argv("echo ab\\\ncd"), ["echo", "abcd"]);
}

#[test]
fn unquoted_windows_path_loses_its_backslashes() {
    assert_eq!(argv(r"C:\repo\a.exe"), ["C:repoa.exe"]);
}

#[test]
fn single_quoted_windows_path_is_kept() {
    assert_eq!(argv(r"'C:\repo\a.exe'"), [r"C:\repo\a.exe"]);
}

#[test]
fn double_quotes_keep_backslash_before_ordinary_characters() {
    assert_eq!(argv(r#""C:\repo\a.exe""#), [r"C:\repo\a.exe"]);
}

#[test]
fn nul_is_refused_inside_single_quotes_at_its_position() {
    let r = refusal("echo 'a\0b'");
    assert_eq!((r.construct, r.span), (Construct::Nul, Span::new(7, 8)));
}

#[test]
fn nul_is_refused_inside_double_quotes_at_its_position() {
    let r = refusal("echo \"a\0b\"");
    assert_eq!((r.construct, r.span), (Construct::Nul, Span::new(7, 8)));
}

#[test]
fn nul_is_refused_after_a_backslash() {
    let r = refusal("echo a\\\0");
    assert_eq!((r.construct, r.span), (Construct::Nul, Span::new(7, 8)));
}

#[test]
fn nul_is_refused_unquoted() {
    assert_eq!(refusal("echo \0").construct, Construct::Nul);
}

#[test]
fn display_names_construct_span_and_reason() {
    assert_eq!(
        refusal("echo hi $(date +%s)").to_string(),
        "command substitution `$( )` at 8..19 is not supported: \
         run the inner command as its own call first and write its output into this line as an \
         argument; for a message of several lines, `-F-` or a file with a here-document works: \
         `git commit -F- <<'EOF'`"
    );
}

#[test]
fn construct_name_is_stable_snake_case() {
    assert_eq!(refusal("a && b &").construct_name(), "background");
}

#[test]
fn commands_iterates_in_source_order() {
    let line = parse("cd x; a | b && c || d\ne").unwrap();
    let names: Vec<String> = line
        .commands()
        .map(|c| match c {
            Command::Cd(cd) => format!("cd {}", cd.dir.value),
            Command::DirStack(d) => format!("{:?}", d.op),
            Command::Simple(s) => s.program().unwrap_or_default().to_owned(),
        })
        .collect();
    assert_eq!(names, ["cd x", "a", "b", "c", "d", "e"]);
}

#[test]
fn assignment_value_span_points_after_the_equals_sign() {
    let line = parse("FOO='a b' x").unwrap();
    let Some(Command::Simple(s)) = line.commands().next() else {
        panic!("not simple");
    };
    assert_eq!(s.assignments[0].value.span, Span::new(4, 9));
}

#[test]
fn redirect_span_covers_operator_and_target() {
    let line = parse("echo hi 2>> err.log").unwrap();
    let Some(Command::Simple(s)) = line.commands().next() else {
        panic!("not simple");
    };
    assert_eq!(s.redirects[0].span, Span::new(8, 19));
    assert!(matches!(&s.redirects[0].op, RedirectOp::Append(w) if w.value == "err.log"));
}

#[test]
fn pipeline_span_covers_all_its_commands() {
    let line = parse("  a | b  ;").unwrap();
    assert_eq!(line.lists[0].first.span, Span::new(2, 7));
}

#[test]
fn quote_leaves_plain_words_alone() {
    assert_eq!(quote("src/main.rs"), "src/main.rs");
}

#[test]
fn quote_writes_empty_word_as_two_quotes() {
    assert_eq!(quote(""), "''");
}

#[test]
fn quote_escapes_single_quotes() {
    assert_eq!(quote("it's"), r"'it'\''s'");
}

#[test]
fn quote_protects_keywords_and_assignments() {
    assert_eq!((quote("if"), quote("A=1")), ("'if'".into(), "'A=1'".into()));
}

#[test]
fn display_argv_joins_quoted_words() {
    assert_eq!(display_argv(&["grep", "-n", "a b", ""]), "grep -n 'a b' ''");
}

#[test]
fn a_here_document_body_is_stdin_text() {
    let line = parse("cat <<'EOF' | wc -l\na $b\n\tc\nEOF\necho after").unwrap();
    let Some(Command::Simple(cat)) = line.commands().next() else {
        panic!("not a simple command");
    };
    assert_eq!(
        cat.redirects[0].stdin_text().as_deref(),
        Some("a $b\n\tc\n")
    );
    assert_eq!(
        line.lists.len(),
        2,
        "the line after the body is a list of its own"
    );
}

#[test]
fn a_here_string_is_its_word_and_a_newline() {
    let line = parse("grep x <<< 'a b'").unwrap();
    let Some(Command::Simple(grep)) = line.commands().next() else {
        panic!("not a simple command");
    };
    assert_eq!(grep.redirects[0].stdin_text().as_deref(), Some("a b\n"));
}

#[test]
fn a_commit_message_from_cat_and_a_here_document_is_the_text() {
    let src = "git commit -m \"$(cat <<'EOF'\nTitle\n\nBody with $x and `y`.\n\nEOF\n)\"";
    assert_eq!(
        argv(src),
        ["git", "commit", "-m", "Title\n\nBody with $x and `y`."]
    );
}

#[test]
fn an_unquoted_cat_substitution_is_still_refused() {
    let r = refusal("echo $(cat <<'EOF'\nx\nEOF\n)");
    assert_eq!(r.construct, Construct::CommandSubstitution);
}

#[test]
fn an_unquoted_delimiter_admits_only_a_body_without_expansions() {
    assert!(parse("cat <<EOF\nplain \\ text\nEOF").is_ok());
    for body in ["$HOME", "`date`", "a \\$", "a \\\nb"] {
        let r = refusal(&format!("cat <<EOF\n{body}\nEOF"));
        assert_eq!(r.construct, Construct::HereDocExpansion, "{body:?}");
    }
}

#[test]
fn tilde_is_marked_only_at_a_word_start() {
    let line = parse("ls ~/a ~ b~c").unwrap();
    let Some(Command::Simple(ls)) = line.commands().next() else {
        panic!("not a simple command");
    };
    let marked: Vec<bool> = ls.argv.iter().map(|w| w.tilde).collect();
    assert_eq!(marked, [false, true, true, false]);
    assert_eq!(ls.argv[1].expanded("/home/u"), "/home/u/a");
    assert_eq!(ls.argv[2].expanded("/home/u/"), "/home/u/");
    assert_eq!(ls.argv[3].expanded("/home/u"), "b~c");
}

#[test]
fn cd_may_follow_a_connector() {
    let line = parse("mkdir -p out && cd out && make").unwrap();
    assert!(matches!(
        line.lists[0].rest[0].1.commands[0],
        Command::Cd(_)
    ));
}

#[test]
fn brace_expansion_makes_words_in_bash_order() {
    assert_eq!(
        argv("echo {a..c}{1..2} x{a,b{c,d}}y {a,}z {,} {-05..5..5} {5..1..2} {a\\,b,c} \"{\"a,b}"),
        [
            "echo", "a1", "a2", "b1", "b2", "c1", "c2", "xay", "xbcy", "xbdy", "az", "z", "-05",
            "000", "005", "5", "3", "1", "a,b", "c", "{a,b}"
        ]
    );
}

#[test]
fn braces_that_expand_nothing_stay_literal() {
    assert_eq!(
        argv("echo {x} {1..a} a{}b {a..} {1..2..3..4}"),
        ["echo", "{x}", "{1..a}", "a{}b", "{a..}", "{1..2..3..4}"]
    );
}

#[test]
fn time_is_a_reserved_word_only_where_a_pipeline_starts() {
    let line = parse("time a | b; c && time d; echo time").unwrap();
    let timed: Vec<bool> = line
        .lists
        .iter()
        .flat_map(|l| l.pipelines())
        .map(|p| p.timed)
        .collect();
    assert_eq!(timed, [true, false, true, false]);
    assert_eq!(refusal("a | time b").construct_name(), "keyword");
}

#[test]
fn background_ends_a_list_of_one_pipeline() {
    let line = parse("a | b & c &\nd").unwrap();
    let bg: Vec<bool> = line.lists.iter().map(|l| l.background).collect();
    assert_eq!(bg, [true, true, false]);
    assert_eq!(refusal("a & ; b").construct_name(), "missing_command");
    assert_eq!(refusal("a || b &").construct_name(), "background");
}
