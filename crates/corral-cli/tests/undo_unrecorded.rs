//! Where a call's changes cannot be recorded for undo (here a workspace over the record's
//! budget), a call that would destroy uncommitted work is asked about by what it does,
//! however it is spelled, and a person who declines keeps every file; any other call's
//! result says plainly that its changes cannot be undone. Where the record works, what
//! undo puts back is not asked, git's refs and index included.

use serde_json::json;

use crate::mcp_common::{self, Answer, PERMISSIVE, Session};
use crate::undo_common::{answered, files, git_session, succeeded, undo};

/// Lines that destroy uncommitted work, spelled past the built-in questions' patterns.
const DESTROYING: &[&str] = &[
    "git reset --har",
    "git checkout HEAD -- .",
    "git restore '*'",
    "git checkout -- '*'",
    "git checkout -- src",
    "git read-tree -u --reset HEAD",
    "git wipe",
    "rm src -rf",
    "rm -rf ./src/../src",
    "find src -delete",
    "env rm -rf src",
    "c=rm; $c -rf ./*",
    "eval \"$(echo rm -rf ./*)\"",
    "ls | xargs rm -rf",
];

/// A session on a git workspace with uncommitted work, `policy` its trusted corral.toml.
async fn session(policy: &str) -> Session {
    let session = git_session(policy, Answer::Decline).await;
    let ws = session.workspace();
    // An alias the person set up in the repository, which runs a shell line.
    let config = ws.join(".git/config");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str("[alias]\n\twipe = \"!rm -rf src\"\n");
    std::fs::write(&config, text).unwrap();
    session
}

#[tokio::test(flavor = "multi_thread")]
async fn over_the_budget_what_destroys_work_is_asked_and_a_decline_keeps_every_file() {
    let policy = format!("{PERMISSIVE}[undo]\nmax_files = 3\n");
    let session = session(&policy).await;
    let ws = session.workspace();
    let before = files(&ws);
    let branch = std::fs::read(ws.join(".git/refs/heads/main")).unwrap();
    for line in DESTROYING {
        let asked = session.seen.lock().unwrap().questions.len();
        let result = session.call("shell", json!({"line": line})).await;
        let body = mcp_common::text(&result);
        assert_eq!(files(&ws), before, "{line}: {body}");
        let now = std::fs::read(ws.join(".git/refs/heads/main")).unwrap();
        assert_eq!(now, branch, "{line}");
        let questions = session.seen.lock().unwrap().questions.len();
        assert_eq!(questions, asked + 1, "{line}: {body}");
        // Asked by what it does, not by a built-in pattern (`git reset`: by the built-in
        // asks, since git's refs are not in the record).
        assert!(
            body.contains("could not be undone") || body.contains("cannot put back"),
            "{line}: {body}"
        );
    }
    // Git's options before the subcommand, or an alias the line defines, do not take a
    // line past the question: it is asked as `git reset --hard` is, by what it does.
    for line in [
        "git -P reset --hard",
        "git --no-pager reset --hard",
        "git --git-dir=.git --work-tree=. reset --hard",
        "git -c alias.nuke='reset --hard' nuke",
    ] {
        let asked = session.seen.lock().unwrap().questions.len();
        let result = session.call("shell", json!({"line": line})).await;
        let body = mcp_common::text(&result);
        assert_eq!(files(&ws), before, "{line}: {body}");
        let questions = session.seen.lock().unwrap().questions.len();
        assert_eq!(questions, asked + 1, "{line}: {body}");
        assert!(body.contains("could not be undone"), "{line}: {body}");
    }
    // What destroys nothing runs unasked, and says once that it cannot be undone.
    let asked = session.seen.lock().unwrap().questions.len();
    let first = session
        .call("shell", json!({"line": "echo made > new.txt"}))
        .await;
    answered(&first);
    assert_eq!(std::fs::read(ws.join("new.txt")).unwrap(), b"made\n");
    assert!(
        mcp_common::text(&first).contains("this call's changes cannot be undone"),
        "{}",
        mcp_common::text(&first)
    );
    let second = session
        .call("shell", json!({"line": "echo more >> new.txt"}))
        .await;
    assert_eq!(second.is_error, Some(false));
    assert!(!mcp_common::text(&second).contains("cannot be undone"));
    // Removing ignored build output is routine.
    let result = session
        .call("shell", json!({"line": "rm -rf target"}))
        .await;
    answered(&result);
    assert!(!ws.join("target").exists());
    assert_eq!(session.seen.lock().unwrap().questions.len(), asked);
    session.client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn with_a_working_record_the_same_spellings_are_not_asked_and_are_undone() {
    let session = session(PERMISSIVE).await;
    let ws = session.workspace();
    let before = files(&ws);
    for line in [
        "rm src -rf",
        "find src -delete",
        "git wipe",
        "git checkout -- .",
    ] {
        let result = session.call("shell", json!({"line": line})).await;
        assert_eq!(
            result.is_error,
            Some(false),
            "{line}: {}",
            mcp_common::text(&result)
        );
        assert_ne!(files(&ws), before, "{line} destroyed nothing");
        succeeded(&undo(&session, &[]));
        assert_eq!(files(&ws), before, "{line}");
    }
    // Git's refs and index are in the record: what moves them runs unasked, however it
    // is spelled, and is undone.
    for line in ["git reset --har", "git -c x.y=z reset --hard"] {
        let result = session.call("shell", json!({"line": line})).await;
        let body = mcp_common::text(&result);
        assert_eq!(result.is_error, Some(false), "{line}: {body}");
        assert_ne!(files(&ws), before, "{line} discarded nothing: {body}");
        succeeded(&undo(&session, &[]));
        assert_eq!(files(&ws), before, "{line}");
    }
    assert!(session.seen.lock().unwrap().questions.is_empty());
    session.client.cancel().await.unwrap();
}
