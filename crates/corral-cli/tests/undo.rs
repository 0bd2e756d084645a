//! `corral undo` brings back what a call destroyed: in a git workspace with uncommitted
//! edits and untracked files, after each of the lines that destroy work, through `corral
//! mcp` and through the CLI; in a plain directory; never over a file a person changed
//! since; and from a record the box cannot reach.

use crate::common::{Scratch, text};
use crate::mcp_common::{self, Answer, PERMISSIVE, Session};
use crate::undo_common::{answered, files, git_session, git_workspace, succeeded, undo};
use serde_json::json;

/// The lines that discarded uncommitted work without asking, as the agent sends them.
const DESTROYING: &[&str] = &[
    "rm src -rf",
    "rm -rf ./src/../src",
    "find src -delete",
    "/usr/bin/python3 -c 'import shutil; shutil.rmtree(\"src\")'",
    "git checkout -- src",
    "git -P reset --hard",
    "git --no-pager reset --hard",
    "git restore src/lib.rs",
    "git reset --hard HEAD~1",
];

#[tokio::test(flavor = "multi_thread")]
async fn every_line_that_destroys_work_is_undone_byte_for_byte_through_mcp() {
    // `--git-write`, so git's own destroying commands run rather than being refused.
    let session = git_session(PERMISSIVE, Answer::Accept).await;
    let ws = session.workspace();
    let before = files(&ws);
    let branch = std::fs::read(ws.join(".git/refs/heads/main")).unwrap();
    for line in DESTROYING {
        let result = session.call("shell", json!({"line": line})).await;
        assert_eq!(
            result.is_error,
            Some(false),
            "{line}: {}",
            mcp_common::text(&result)
        );
        assert_ne!(
            files(&ws),
            before,
            "{line} destroyed nothing: {}",
            mcp_common::text(&result)
        );
        let out = undo(&session, &[]);
        succeeded(&out);
        assert_eq!(files(&ws), before, "{line}: {}", text(&out.stdout));
        // With `--git-write` the repository's refs are recorded too: a reset's moved
        // branch is put back.
        let now = std::fs::read(ws.join(".git/refs/heads/main")).unwrap();
        assert_eq!(text(&now), text(&branch), "{line}");
    }
    // A file tool's write is recorded as a command's is.
    let result = session
        .call(
            "write_file",
            json!({"path": "src/lib.rs", "content": "overwritten\n"}),
        )
        .await;
    answered(&result);
    assert_ne!(files(&ws), before);
    succeeded(&undo(&session, &[]));
    assert_eq!(files(&ws), before);
    session.client.cancel().await.unwrap();
}

#[test]
fn a_line_through_the_cli_is_undone_and_trace_show_lists_what_it_changed() {
    let s = Scratch::new();
    let ws = s.workspace();
    git_workspace(&ws);
    let before = files(&ws);
    let out = s.output(&["shell", "rm -rf src && echo made > new.txt"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let shown = text(&s.output(&["trace", "show"]).stdout);
    for (change, path) in [
        ("deleted", "src/lib.rs"),
        ("deleted", "src/run.sh"),
        ("added", "new.txt"),
    ] {
        assert!(
            shown
                .lines()
                .any(|l| l.split_whitespace().collect::<Vec<_>>() == [change, path]),
            "{shown}"
        );
    }
    assert!(
        !shown.contains("target/"),
        "ignored output is not recorded: {shown}"
    );
    let dry = s.output(&["undo", "--dry-run"]);
    assert!(
        text(&dry.stdout).contains("would remove  new.txt"),
        "{}",
        text(&dry.stdout)
    );
    assert!(!ws.join("src").exists(), "a dry run changes nothing");
    let out = s.output(&["undo"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(files(&ws), before);
}

#[test]
fn a_plain_directory_is_undone_and_its_build_output_left_alone() {
    let s = Scratch::new();
    let ws = s.workspace();
    std::fs::create_dir_all(ws.join("src")).unwrap();
    std::fs::create_dir_all(ws.join("node_modules/dep")).unwrap();
    std::fs::write(ws.join("src/main.py"), "print('hi')\n").unwrap();
    std::fs::write(ws.join("README"), "read me\n").unwrap();
    std::fs::write(ws.join("node_modules/dep/index.js"), "x\n").unwrap();
    let out = s.output(&["shell", "rm -rf src node_modules README"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = s.output(&["undo"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        std::fs::read(ws.join("src/main.py")).unwrap(),
        b"print('hi')\n"
    );
    assert_eq!(std::fs::read(ws.join("README")).unwrap(), b"read me\n");
    // Not recorded, so not brought back: undo never touches what the rules leave out.
    assert!(!ws.join("node_modules").exists());
}

#[test]
fn a_file_the_person_edited_after_the_call_is_not_overwritten() {
    let s = Scratch::new();
    let ws = s.workspace();
    std::fs::write(ws.join("notes.txt"), "mine\n").unwrap();
    std::fs::write(ws.join("other.txt"), "other\n").unwrap();
    let out = s.output(&["shell", "echo agent > notes.txt && rm other.txt"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    std::fs::write(ws.join("notes.txt"), "edited by the person since\n").unwrap();
    let out = s.output(&["undo"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    assert!(
        text(&out.stdout).contains("notes.txt"),
        "{}",
        text(&out.stdout)
    );
    assert_eq!(
        std::fs::read_to_string(ws.join("notes.txt")).unwrap(),
        "edited by the person since\n"
    );
    // All or nothing: the file it could restore is not restored either.
    assert!(!ws.join("other.txt").exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn the_record_survives_a_boxed_rm_of_everything_the_box_can_write() {
    let session = Session::start_with(
        Some(PERMISSIVE),
        Some(Answer::Accept),
        &["--sandbox", "workspace-write"],
    )
    .await;
    let ws = session.workspace();
    std::fs::create_dir_all(ws.join("src")).unwrap();
    std::fs::write(ws.join("src/work.rs"), "uncommitted work\n").unwrap();
    let before = files(&ws);
    let state = session.dir.path().join("state");
    let line = format!(
        "rm -rf src {state}/undo {state} {dir} /tmp; ls {state}/undo",
        state = state.display(),
        dir = session.dir.path().display()
    );
    let result = session.call("shell", json!({"line": line})).await;
    assert!(!ws.join("src").exists(), "{}", mcp_common::text(&result));
    assert!(
        state.join("undo/blobs").is_dir(),
        "{}",
        mcp_common::text(&result)
    );
    succeeded(&undo(&session, &[]));
    assert_eq!(files(&ws), before);
    session.client.cancel().await.unwrap();
}

#[test]
fn trace_show_says_which_steps_files_are_still_being_recorded_or_never_were() {
    use corral::trace::{NewRun, NewStep, Store};
    let s = Scratch::new();
    let ws = s.workspace();
    let out = s.output(&["shell", "echo made > new.txt"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let store = Store::open_existing(&s.store()).unwrap();
    let ended = store.runs(1).unwrap().remove(0);
    let step = store.steps(Some(&ended.id), 1).unwrap().remove(0);
    // A run still going, whose step's files are still being recorded.
    let live = NewRun {
        id: "run-still-recording".into(),
        workspace: ws.display().to_string(),
        started_at_ms: ended.started_at_ms + 1,
        pid: std::process::id(),
        config_json: "{}".into(),
    };
    store.begin_run(&live).unwrap();
    let pending = store
        .begin_step(&NewStep {
            run_id: live.id.clone(),
            tool: "shell".into(),
            call_json: "{}".into(),
            cwd: ws.display().to_string(),
            started_at_ms: live.started_at_ms,
        })
        .unwrap();
    store.mark_step_files_pending(&live.id, pending.id).unwrap();
    // The ended run's step, left pending as by a corral that ended while recording it.
    store.mark_step_files_pending(&ended.id, step.id).unwrap();
    drop(store);
    let shown = text(&s.output(&["trace", "show", "--run", &live.id]).stdout);
    assert!(shown.contains("record pending"), "{shown}");
    let shown = text(&s.output(&["trace", "show", "--run", &ended.id]).stdout);
    assert!(shown.contains("not recorded"), "{shown}");
    assert!(!shown.contains("pending"), "{shown}");
    // What was never recorded is not undone.
    let out = s.output(&["undo", &step.seq.to_string(), "--run", &ended.id]);
    assert!(!out.status.success(), "{}", text(&out.stdout));
    assert_eq!(std::fs::read(ws.join("new.txt")).unwrap(), b"made\n");
}
