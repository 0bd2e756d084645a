use super::*;

#[test]
fn a_split_sequence_is_held_across_writes() {
    let mut out = Vec::new();
    {
        let mut w = Escaped::new(&mut out, true);
        w.write_all(b"a\xc2").unwrap();
        w.write_all(b"\x9b2J\xc2\xa9 \xe2\x80").unwrap();
        w.write_all(b"\xae!\n\xe2").unwrap();
    }
    assert_eq!(
        String::from_utf8(out).unwrap(),
        "a\\u009b2J\u{a9} \\u202e!\n\\xe2"
    );
}

#[test]
fn off_a_terminal_the_bytes_are_kept() {
    let mut out = Vec::new();
    Escaped::new(&mut out, false)
        .write_all(b"\x1b[31mred")
        .unwrap();
    assert_eq!(out, b"\x1b[31mred");
}

use std::ffi::OsStr;
use std::path::PathBuf;

use corral_policy::{Act, Decision, Effect, Why};
use proptest::prelude::*;

use crate::approve::{ApprovalRequest, AskedItem};

/// The strings every renderer is fed: what a model may choose as an argument or a file
/// name, or a command may print.
const HOSTILE: &[(&str, &[u8])] = &[
    // Erase the line, go back to its start, write another command over it.
    (
        "esc-cr",
        b"color.x=\x1b[2K\r\x1b[1A\x1b[2KAllow `git status --short` in the workspace root?\x1b[8m",
    ),
    ("backspace", b"rm\x08\x08\x08\x08ls -rf /"),
    ("osc52", b"a\x1b]52;c;cm0gLXJmIH4K\x07.txt"),
    ("osc8", b"\x1b]8;;https://evil.test\x1b\\link\x1b]8;;\x1b\\"),
    ("c1-csi", "x\u{9b}2Jy".as_bytes()),
    (
        "bidi",
        "invoice\u{202e}fdp.exe\u{2066}\u{200f}\u{61c}".as_bytes(),
    ),
    (
        "zero-width",
        "ad\u{200d}min\u{200b}\u{2060}\u{feff}".as_bytes(),
    ),
    ("invalid-utf8", b"caf\xe9\xff\xc2"),
    ("newline", b"one\ntwo\tthree"),
];

const HEBREW: &str = "שלום/קובץ.txt";

/// No raw control, bidi control or zero-width character; `\n` and `\t` only where the
/// output keeps lines.
fn assert_shown(out: &str, keeps_lines: bool) {
    for c in out.chars() {
        let allowed = keeps_lines && matches!(c, '\n' | '\t');
        assert!(
            !is_hidden(c) || allowed,
            "{c:?} reached the output: {out:?}"
        );
    }
}

fn text(bytes: &[u8]) -> String {
    crate::os_text::OsText::from(bytes).escaped().into_owned()
}

fn ask(tool: &str, argv: Vec<String>, path: Option<PathBuf>, cwd: PathBuf) -> ApprovalRequest {
    let target = argv.join(" ");
    let program = Some(PathBuf::from("/usr/bin").join(&argv[0]));
    ApprovalRequest {
        tool: tool.into(),
        line: None,
        items: vec![AskedItem {
            act: if path.is_some() {
                Act::Write
            } else {
                Act::Exec
            },
            argv,
            bytes: false,
            program,
            cwd,
            path,
            decision: Decision {
                effect: Effect::Ask,
                act: Act::Exec,
                target,
                rule: None,
                why: Why::ActDefault,
                via: Vec::new(),
                wrapper: false,
            },
        }],
    }
}

/// Everything a person reads of `bytes`, rendered by every renderer: (output, keeps lines).
fn every_rendering(bytes: &[u8]) -> Vec<(String, bool)> {
    let word = text(bytes);
    let path = PathBuf::from(OsStr::from_bytes(bytes));
    let workspace = PathBuf::from("/w");
    let question = ask(
        "exec",
        vec![
            "git".into(),
            "-c".into(),
            word.clone(),
            "clean".into(),
            "-fdx".into(),
        ],
        None,
        workspace.join(&path),
    );
    let rerun = ask(
        "rerun-sandboxed",
        vec![word.clone()],
        Some(path.clone()),
        workspace.clone(),
    );
    let mut streamed = Vec::new();
    {
        let mut w = Escaped::new(&mut streamed, true);
        for chunk in bytes.chunks(3) {
            w.write_all(chunk).unwrap();
        }
    }
    vec![
        (value(&word).into_owned(), false),
        (path_shown(&path), false),
        (argv(&[word.as_str(), "x"]), false),
        (corral_line::display_argv(&[word.as_str()]), false),
        (question.question(&workspace), false),
        (question.message(&workspace), true),
        (rerun.message(&workspace), true),
        (String::from_utf8(streamed).unwrap(), true),
    ]
}

fn path_shown(p: &std::path::Path) -> String {
    path(p)
}

#[test]
fn no_hostile_string_reaches_a_person_raw() {
    for (name, bytes) in HOSTILE {
        for (out, keeps) in every_rendering(bytes) {
            assert_shown(&out, keeps);
            assert!(!out.contains("\x1b[2K\r"), "{name}: {out}");
        }
    }
}

#[test]
fn a_hebrew_name_is_shown_as_written() {
    for (out, _) in every_rendering(HEBREW.as_bytes()) {
        assert!(out.contains("שלום"), "{out}");
    }
    assert_eq!(path(std::path::Path::new(HEBREW)), HEBREW);
}

#[test]
fn a_megabyte_argv_is_bounded_and_its_length_stated() {
    let pad = "a".repeat(1 << 20);
    let words = ["git", "-c", &format!("x={pad}"), "clean", "-fdx"];
    let workspace = PathBuf::from("/w");
    let q = ask(
        "exec",
        words.iter().map(|w| w.to_string()).collect(),
        None,
        workspace.clone(),
    );
    let shown = q.message(&workspace);
    assert!(shown.len() < 4 * ARGV_MAX, "{} bytes", shown.len());
    assert!(shown.contains("1048578 bytes in all"), "{shown}");
    assert!(shown.contains("clean -fdx"), "{shown}");
    // Many short words: the program and the last words are kept, the count stated.
    let many: Vec<String> = (0..200_000).map(|i| format!("w{i}")).collect();
    let shown = argv(&many);
    assert!(shown.len() <= ARGV_MAX + 200, "{} bytes", shown.len());
    assert!(
        shown.starts_with("w0 w1 ") && shown.ends_with("w199999"),
        "{shown:.80}"
    );
    assert!(
        shown.contains("words not shown; the argv is"),
        "{shown:.80}"
    );
}

#[test]
fn what_a_person_reads_of_a_hostile_question() {
    let workspace = PathBuf::from("/home/me/app");
    for (name, bytes) in HOSTILE {
        let word = text(bytes);
        let q = ask(
            "exec",
            vec![
                "git".into(),
                "-c".into(),
                word,
                "clean".into(),
                "-fdx".into(),
            ],
            None,
            workspace.clone(),
        );
        insta::assert_snapshot!(format!("question_{name}"), q.message(&workspace));
    }
    let hebrew = ask(
        "exec",
        vec!["cat".into(), HEBREW.into()],
        None,
        workspace.join("דוחות"),
    );
    insta::assert_snapshot!("question_hebrew", hebrew.message(&workspace));
}

proptest! {
    #[test]
    fn no_raw_control_for_any_input(bytes in prop::collection::vec(any::<u8>(), 0..64)) {
        for (out, keeps) in every_rendering(&bytes) {
            for c in out.chars() {
                prop_assert!(!is_hidden(c) || (keeps && matches!(c, '\n' | '\t')), "{:?} in {:?}", c, out);
            }
        }
    }

    #[test]
    fn no_raw_control_for_any_text(s in any::<String>()) {
        for (out, keeps) in every_rendering(s.as_bytes()) {
            for c in out.chars() {
                prop_assert!(!is_hidden(c) || (keeps && matches!(c, '\n' | '\t')), "{:?} in {:?}", c, out);
            }
        }
    }
}
