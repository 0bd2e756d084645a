//! What a person reads is what runs: a model's argv and file names reach the person's
//! side with every control, bidi control and zero-width character written visibly
//! (`corral::person`), through the surfaces a person reads them on — the MCP client's
//! approval question and `corral undo`'s listing — and a 1 MB argv is clipped with its
//! length stated.

use crate::common::{Scratch, text as out_text};
use crate::mcp_common::{Answer, Session};
use corral::person::is_hidden;
use serde_json::json;

/// ESC and CR that, raw on an xterm, erase the command and write a harmless one over it.
const HIDING: &str =
    "color.x=\x1b[2K\r\x1b[1A\x1b[2KAllow `git status --short` in the workspace root?\x1b[8m";

/// An OSC 52 clipboard write, a bidi override and a zero-width joiner in file names.
const OSC52_NAME: &str = "a\x1b]52;c;cm0gLXJmIH4K\x07.txt";
const BIDI_NAME: &str = "invoice\u{202e}fdp.exe";
const ZWJ_NAME: &str = "ad\u{200d}min.txt";
const HEBREW_NAME: &str = "שלום.txt";

const ASK_GIT_TOUCH: &str =
    "tier = \"permissive\"\napproval = \"on-request\"\n[exec]\nask = [\"git*\", \"touch*\"]\n";

/// No raw hidden character but the newlines that separate the lines of a question.
fn assert_shown(what: &str, shown: &str) {
    let raw: Vec<char> = shown
        .chars()
        .filter(|&c| is_hidden(c) && c != '\n')
        .collect();
    assert!(
        raw.is_empty(),
        "{what}: {raw:?} reached the person: {shown:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_hidden_command_is_shown_as_it_is_in_the_elicitation() {
    let session = Session::start(Some(ASK_GIT_TOUCH), Some(Answer::Decline)).await;
    std::fs::write(session.workspace().join("untracked.txt"), "work").unwrap();
    let result = session
        .call(
            "exec",
            json!({"argv": ["git", "-c", HIDING, "clean", "-fdx"]}),
        )
        .await;
    assert!(session.workspace().join("untracked.txt").exists());
    let questions = session.seen.lock().unwrap().questions.clone();
    assert_eq!(questions.len(), 1, "{result:?}");
    let question = &questions[0];
    assert_shown("the elicitation", question);
    assert!(
        question.contains("\\x1b[2K\\x0d\\x1b[1A") && question.contains("clean -fdx"),
        "{question}"
    );
    // The program as resolved, the directory, the rule and what a yes lifts.
    assert!(question.contains("program: /"), "{question}");
    assert!(question.contains("git*"), "{question}");
    assert!(
        question.contains("Approving lets this call run once"),
        "{question}"
    );
    session.client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_megabyte_argument_is_clipped_in_the_question_with_its_length() {
    let session = Session::start(Some(ASK_GIT_TOUCH), Some(Answer::Decline)).await;
    let long = format!("{}{}", "a".repeat(1 << 20), "\u{202e}z");
    session
        .call("exec", json!({"argv": ["touch", long, "last"]}))
        .await;
    let questions = session.seen.lock().unwrap().questions.clone();
    assert_eq!(questions.len(), 1);
    let question = &questions[0];
    assert_shown("the elicitation", question);
    assert!(question.len() < 32 * 1024, "{} bytes", question.len());
    assert!(question.contains("1048580 bytes in all"), "{question}");
    assert!(question.contains("\\u202ez' last"), "{question}");
    session.client.cancel().await.unwrap();
}

#[test]
fn undo_lists_hostile_file_names_visibly_and_a_hebrew_name_as_written() {
    let s = Scratch::new();
    let names = [OSC52_NAME, BIDI_NAME, ZWJ_NAME, HEBREW_NAME];
    let line = names
        .iter()
        .map(|n| format!("echo x > '{n}'"))
        .collect::<Vec<_>>()
        .join(" && ");
    let made = s.output(&["shell", &line]);
    assert!(made.status.success(), "{}", out_text(&made.stderr));
    for name in names {
        assert!(s.workspace().join(name).exists(), "{name:?}");
    }
    for args in [&["undo", "--dry-run"][..], &["undo"][..]] {
        let out = s.output(args);
        assert!(out.status.success(), "{}", out_text(&out.stderr));
        // The bytes the person's terminal gets.
        let shown = String::from_utf8(out.stdout).expect("the listing is UTF-8");
        assert_shown("corral undo", &shown);
        for expected in [
            "a\\x1b]52;c;cm0gLXJmIH4K\\x07.txt",
            "invoice\\u202efdp.exe",
            "ad\\u200dmin.txt",
            HEBREW_NAME,
        ] {
            assert!(shown.contains(expected), "{expected} in {shown}");
        }
    }
    for name in names {
        assert!(!s.workspace().join(name).exists(), "{name:?} was undone");
    }
}
