//! What destroys work is asked by what it does, on every surface a model drives, and only
//! where `corral undo` cannot put it back (issue 62):
//!
//! - `corral exec --caller model` in a git workspace with uncommitted edits and untracked
//!   files: with the undo record over its budget, every spelling of removing `src` is
//!   asked (refused with no terminal) and no file changes; with a working record the `rm`
//!   and `find` lines run and `corral undo` brings every file back byte for byte, while
//!   `git clean -x` of an ignored file and `git push --force` are asked.
//! - `--caller model` is the MCP posture: `corral policy check` gives the same answer for
//!   it as for `--surface mcp` (which `mcp_check_agrees` holds to the `shell` tool) on
//!   every line of the agent corpus.
//! - A line corral cannot read is never asked less than one it can: Codex's policy test
//!   lines under `--approval unless-trusted`, as a person and as a model.

use std::path::Path;
use std::process::Output;

use crate::common::text;
use crate::mcp_common::{self, PERMISSIVE};
use crate::undo_common::{corral_in, files, git, git_workspace, succeeded};

/// A scratch with a git workspace and `policy` as its trusted corral.toml.
fn scratch(policy: &str) -> tempfile::TempDir {
    let dir = mcp_common::scratch(Some(policy));
    git_workspace(&dir.path().join("ws"));
    // corral.toml is the person's, committed; an ignored file holding a secret.
    std::fs::write(dir.path().join("ws/.gitignore"), "target/\n.env\n").unwrap();
    std::fs::write(dir.path().join("ws/.env"), "TOKEN=1\n").unwrap();
    dir
}

/// `corral exec --caller model --sandbox full -- bash -c LINE` (no terminal: an ask is
/// refused); `--sandbox full` so the test holds where the box cannot be made.
fn exec_model(dir: &Path, line: &str) -> Output {
    corral_in(
        dir,
        &[
            "exec",
            "--caller",
            "model",
            "--sandbox",
            "full",
            "--",
            "bash",
            "-c",
            line,
        ],
    )
}

/// Whether `out` is a refusal for want of a person to ask.
fn asked(out: &Output) -> bool {
    !out.status.success() && text(&out.stderr).contains("ask")
}

const REMOVING_SRC: &[&str] = &[
    "rm src -rf",
    "rm -rf ./src/../src",
    "find src -delete",
    "rm -rf src",
];

#[test]
fn over_the_undo_budget_every_spelling_that_destroys_work_is_asked() {
    let dir = scratch(&format!("{PERMISSIVE}[undo]\nmax_files = 3\n"));
    let ws = dir.path().join("ws");
    let before = files(&ws);
    for line in REMOVING_SRC.iter().chain(&["git -c x=y clean -fdx"]) {
        let out = exec_model(dir.path(), line);
        assert!(asked(&out), "{line}: {}", text(&out.stderr));
        assert_eq!(files(&ws), before, "{line}");
    }
}

#[test]
fn with_a_working_record_what_undo_puts_back_runs_and_is_undone() {
    let dir = scratch(PERMISSIVE);
    let ws = dir.path().join("ws");
    let before = files(&ws);
    for line in ["rm src -rf", "rm -rf ./src/../src", "find src -delete"] {
        let out = exec_model(dir.path(), line);
        assert!(out.status.success(), "{line}: {}", text(&out.stderr));
        assert!(!ws.join("src").exists(), "{line} removed nothing");
        succeeded(&corral_in(dir.path(), &["undo"]));
        assert_eq!(files(&ws), before, "{line}");
    }
    // What the record leaves out, and the remote's, are asked whatever the record.
    git(&ws, &["remote", "add", "origin", "/nonexistent"]);
    for line in [
        "git clean -fx .env",
        "git -c x=y clean -fdx",
        "rm .env",
        "git push --force origin main",
        "git gc --prune=now",
    ] {
        let out = exec_model(dir.path(), line);
        assert!(asked(&out), "{line}: {}", text(&out.stderr));
        assert_eq!(files(&ws), before, "{line}");
        assert!(ws.join(".env").exists(), "{line}");
    }
}

#[test]
fn caller_model_in_the_environment_keeps_git_reflog_expire_asked() {
    let dir = scratch(PERMISSIVE);
    let ws = dir.path().join("ws");
    let before = std::fs::read(ws.join(".git/logs/HEAD")).unwrap();
    let out = std::process::Command::new(mcp_common::corral_bin())
        .args([
            "exec",
            "--approval",
            "never",
            "--",
            "git",
            "reflog",
            "expire",
        ])
        .args(["--expire=now", "--all"])
        .current_dir(&ws)
        .env("CORRAL_CALLER", "model")
        .env("CORRAL_STORE", mcp_common::store(dir.path()))
        .env("CORRAL_TRUST_STORE", mcp_common::trust_store(dir.path()))
        .output()
        .unwrap();
    assert!(!out.status.success(), "{}", text(&out.stderr));
    assert_eq!(std::fs::read(ws.join(".git/logs/HEAD")).unwrap(), before);
}

/// What `corral policy check ARGS --line LINE` answers: 0 runs, 1 asks, 2 refused.
fn check(dir: &Path, args: &[&str], line: &str) -> i32 {
    let mut all = vec!["policy", "check"];
    all.extend(args);
    all.extend(["--line", line]);
    let out = corral_in(dir, &all);
    out.status.code().expect("exited")
}

/// The entries of the agent corpus (`%%` separates them; `#` lines are comments).
fn corpus() -> Vec<String> {
    let text = include_str!("../../corral-line/tests/corpus/agent_lines.txt");
    text.split("\n%%\n")
        .map(|e| {
            e.lines()
                .filter(|l| !l.starts_with('#'))
                .collect::<Vec<_>>()
                .join("\n")
        })
        .filter(|e| !e.trim().is_empty() && e.trim() != "%%")
        .collect()
}

#[test]
fn caller_model_answers_as_the_mcp_surface_on_every_agent_line() {
    let dir = mcp_common::scratch(None);
    git_workspace(&dir.path().join("ws"));
    let lines = corpus();
    assert!(lines.len() > 500, "{}", lines.len());
    let mut differ = Vec::new();
    for line in &lines {
        let mcp = check(dir.path(), &["--surface", "mcp"], line);
        let model = check(dir.path(), &["--caller", "model"], line);
        if mcp != model {
            differ.push(format!("{line:?}: mcp {mcp}, --caller model {model}"));
        }
    }
    assert!(differ.is_empty(), "{}", differ.join("\n"));
}

/// Lines Codex's own command-safety tests ask about; none may run unasked.
const CODEX_ASKED: &[&str] = &[
    r#"bash -lc 'rm -rf "$TARGET" >/dev/null'"#,
    r#"bash -lc 'for target in /tmp/a /tmp/b; do rm -r -f "$target"; done'"#,
    r#"python3 <<< "$(rm -rf /)""#,
    r#"bash -c 'touch "$PWD/x"'"#,
    "bash -lc 'git reset --hard'",
    "python3 -c 'import os; os.remove(\"victim\")'",
    "rm -rf victim",
];

#[test]
fn under_unless_trusted_a_line_corral_cannot_read_is_asked() {
    let dir = mcp_common::scratch(None);
    let ws = dir.path().join("ws");
    for caller in ["person", "model"] {
        for line in CODEX_ASKED {
            let args = ["--caller", caller, "--approval", "unless-trusted"];
            let said = check(dir.path(), &args, line);
            assert_ne!(said, 0, "{caller}: {line} checked as running unasked");
            std::fs::create_dir_all(ws.join("victim")).unwrap();
            let out = std::process::Command::new(mcp_common::corral_bin())
                .args(["exec", "--caller", caller, "--approval", "unless-trusted"])
                .args(["--sandbox", "full", "--", "bash", "-c", line])
                .current_dir(&ws)
                .env("TARGET", ws.join("victim"))
                .env("CORRAL_STORE", mcp_common::store(dir.path()))
                .env("CORRAL_TRUST_STORE", mcp_common::trust_store(dir.path()))
                .output()
                .unwrap();
            assert!(
                !out.status.success(),
                "{caller}: {line} ran: {}",
                text(&out.stderr)
            );
            assert!(ws.join("victim").exists(), "{caller}: {line}");
            assert!(!ws.join("x").exists(), "{caller}: {line}");
        }
    }
}

/// The state of an MCP `shell` call's answer: `exited`, `declined`, …
fn mcp_status(result: &rmcp::model::CallToolResult) -> String {
    result
        .structured_content
        .as_ref()
        .and_then(|v| v["status"].as_str())
        .unwrap_or_default()
        .to_string()
}

/// Through `corral mcp` (a client that cannot ask a person): over the record's budget
/// every spelling of removing `src` is declined and nothing changes; with a working
/// record they run, while what undo cannot put back is still declined.
#[tokio::test(flavor = "multi_thread")]
async fn through_mcp_what_undo_cannot_put_back_is_asked_however_spelled() {
    let dir = scratch(&format!("{PERMISSIVE}[undo]\nmax_files = 3\n"));
    let ws = dir.path().join("ws");
    let before = files(&ws);
    let session = mcp_common::Session::start_in(dir, None, &[], None).await;
    for line in REMOVING_SRC.iter().chain(&["git -c x=y clean -fdx"]) {
        let answer = session
            .call("shell", serde_json::json!({ "line": line }))
            .await;
        assert_eq!(mcp_status(&answer), "declined", "{line}");
        assert_eq!(files(&ws), before, "{line}");
    }
    session.client.cancel().await.unwrap();

    let dir = scratch(PERMISSIVE);
    let ws = dir.path().join("ws");
    let session = mcp_common::Session::start_in(dir, None, &[], None).await;
    let removed = session
        .call("shell", serde_json::json!({ "line": "rm src -rf" }))
        .await;
    assert_eq!(mcp_status(&removed), "exited");
    assert!(!ws.join("src").exists());
    for line in ["git clean -fx .env", "git push --force"] {
        let answer = session
            .call("shell", serde_json::json!({ "line": line }))
            .await;
        assert_eq!(mcp_status(&answer), "declined", "{line}");
    }
    assert!(ws.join(".env").exists());
    session.client.cancel().await.unwrap();
}

/// Where git may not write its data (`git_write = false`), the undo record does not hold
/// its refs and index: a `git reset --hard` outside the box is asked, and no work is lost.
#[test]
fn without_git_write_a_hard_reset_is_asked() {
    let dir = scratch(&format!("{PERMISSIVE}[sandbox]\ngit_write = false\n"));
    let ws = dir.path().join("ws");
    std::fs::write(ws.join("src/lib.rs"), "edited\n").unwrap();
    let out = exec_model(dir.path(), "git reset --hard");
    assert!(asked(&out), "{}", text(&out.stderr));
    assert_eq!(
        std::fs::read_to_string(ws.join("src/lib.rs")).unwrap(),
        "edited\n"
    );
}
