//! Shared by the undo tests: a git workspace with uncommitted work, what a workspace holds
//! byte for byte, `corral` run against a session's store, and a handle driven to its end.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::json;

use crate::common::text;
use crate::mcp_common::{self, Answer, Session, field};

/// Every file under `root` but `.git`: its bytes and permission bits.
pub fn files(root: &Path) -> BTreeMap<PathBuf, (Vec<u8>, u32)> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, (Vec<u8>, u32)>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let entry = entry.unwrap();
            let path = entry.path();
            let kind = entry.file_type().unwrap();
            if kind.is_dir() && entry.file_name() != ".git" {
                walk(root, &path, out);
            } else if kind.is_file() {
                let mode = entry.metadata().unwrap().permissions().mode() & 0o7777;
                let rel = path.strip_prefix(root).unwrap().to_path_buf();
                out.insert(rel, (std::fs::read(&path).unwrap(), mode));
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

/// `git ARGS` in `ws`, with no configuration of the user's or the system's.
pub fn git(ws: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .current_dir(ws)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", ws.parent().unwrap())
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {}", text(&out.stderr));
}

/// A git workspace with committed files, an uncommitted edit, untracked files (one not
/// UTF-8, one executable) and ignored build output.
pub fn git_workspace(ws: &Path) {
    let write = |rel: &str, bytes: &[u8]| {
        let path = ws.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    };
    write("src/lib.rs", b"pub fn a() {}\n");
    write(".gitignore", b"target/\n");
    git(ws, &["init", "-q"]);
    git(ws, &["add", "."]);
    git(ws, &["commit", "-qm", "init"]);
    write("src/deep/mod.rs", b"mod x;\n");
    git(ws, &["add", "."]);
    git(ws, &["commit", "-qm", "second"]);
    write("src/lib.rs", b"pub fn a() {}\npub fn uncommitted() {}\n");
    write("src/notes é.bin", b"\x00\x01\xfe\xff not utf-8");
    write("src/run.sh", b"#!/bin/sh\necho hi\n");
    std::fs::set_permissions(
        ws.join("src/run.sh"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    write("target/debug/out", b"build output");
}

/// `corral mcp --git-write --file-tools` with `policy` trusted, on a [`git_workspace`].
pub async fn git_session(policy: &str, answer: Answer) -> Session {
    let session =
        Session::start_with(Some(policy), Some(answer), &["--git-write", "--file-tools"]).await;
    git_workspace(&session.workspace());
    session
}

/// `corral ARGS` in the workspace of the scratch `dir` (see `mcp_common::scratch`),
/// against its store and trust store.
pub fn corral_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(mcp_common::corral_bin())
        .args(args)
        .current_dir(dir.join("ws"))
        .env("CORRAL_STORE", mcp_common::store(dir))
        .env("CORRAL_TRUST_STORE", mcp_common::trust_store(dir))
        .output()
        .unwrap()
}

/// `corral undo ARGS` against the session's store, in its workspace.
pub fn undo(session: &Session, args: &[&str]) -> Output {
    let args: Vec<&str> = ["undo"].into_iter().chain(args.iter().copied()).collect();
    corral_in(session.dir.path(), &args)
}

/// `out` of a command that must have succeeded.
pub fn succeeded(out: &Output) {
    assert!(
        out.status.success(),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
}

/// The number in its run of the session's first `tool` step.
pub fn seq_of(session: &Session, tool: &str) -> String {
    let steps = session.trace(&["steps"]);
    let step = steps
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["tool"] == tool)
        .unwrap_or_else(|| panic!("no {tool} step: {steps}"));
    step["seq"].to_string()
}

/// Write `text` to handle `handle`'s stdin and close it, then poll until it has ended.
pub async fn end_input(session: &Session, handle: u64, text: &str) {
    let wrote = session
        .call(
            "shell_write",
            json!({"handle": handle, "text": text, "eof": true}),
        )
        .await;
    assert_eq!(wrote.is_error, Some(false), "{}", mcp_common::text(&wrote));
    loop {
        let poll = session
            .call("shell_poll", json!({"handle": handle, "wait_ms": 5000}))
            .await;
        if field(&poll, "state") != "running" {
            break;
        }
    }
}

/// Whether any file under `dir` (the undo store's blobs) is one that `holds` says yes to.
pub fn any_blob(dir: &Path, holds: &dyn Fn(&[u8]) -> bool) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    entries.flatten().any(|e| {
        let path = e.path();
        if path.is_dir() {
            any_blob(&path, holds)
        } else {
            std::fs::read(&path).is_ok_and(|b| holds(&b))
        }
    })
}

/// Whether any blob under `dir` is `bytes`, whole.
pub fn stored(dir: &Path, bytes: &[u8]) -> bool {
    any_blob(dir, &|b| b == bytes)
}

/// Whether any blob under `dir` holds `needle` anywhere in it.
pub fn stored_anywhere(dir: &Path, needle: &[u8]) -> bool {
    any_blob(dir, &|b| b.windows(needle.len()).any(|w| w == needle))
}

/// `result` of a tool call that must have run (not an error).
pub fn answered(result: &rmcp::model::CallToolResult) {
    assert_eq!(result.is_error, Some(false), "{}", mcp_common::text(result));
}
