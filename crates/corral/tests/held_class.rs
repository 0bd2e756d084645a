//! The files host programs run on their own are held for the person: a sandboxed call may
//! write them, but the workspace keeps the person's version, the change waits in the
//! held store, and applying it there puts it in place. Checked by effect, per row of the
//! class's table.

use crate::common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use common::Fixture;
use corral::HeldStore;
use corral::held_class::{ROWS, Shape, Treatment};
use corral::{Config, ExecRequest, Outcome, Run, sandbox::SandboxConfig, sandbox::SandboxMode};

/// Approves what the gate asks, and answers a held change's question with `apply`.
#[derive(Debug)]
struct Person {
    apply: bool,
}

impl corral::approve::Approver for Person {
    fn name(&self) -> &str {
        "test-person"
    }
    fn approve(
        &self,
        request: &corral::approve::ApprovalRequest,
        _: &Path,
    ) -> corral::approve::Approval {
        use corral::approve::Approval;
        match (request.tool.as_str(), self.apply) {
            ("apply-held", false) => Approval::Deny(None),
            _ => Approval::Approve,
        }
    }
}

fn boxed_with(fx: &Fixture, apply: bool) -> Run {
    Run::builder(fx.workspace())
        .store(fx.store())
        .config(Config {
            sandbox: SandboxConfig::mode(SandboxMode::WorkspaceWrite),
            ..Config::default()
        })
        .policy(corral::Policy::permissive())
        .approver(Person { apply })
        .open()
        .unwrap()
}

/// A run whose person keeps every held change for later.
fn boxed(fx: &Fixture) -> Run {
    boxed_with(fx, false)
}

fn sh(run: &Run, script: &str) -> Outcome {
    run.exec(&ExecRequest::new(["sh", "-c", script]).timeout(Duration::from_secs(60)))
        .unwrap()
}

fn store(fx: &Fixture) -> HeldStore {
    HeldStore::beside_trace(&fx.store())
}

/// A file the row names in a workspace: itself, a file in its directory, or a name its
/// pattern matches.
fn example(path: &str, shape: Shape) -> PathBuf {
    match shape {
        Shape::File => PathBuf::from(path),
        Shape::Dir => Path::new(path).join("pre-commit"),
        Shape::Pattern => PathBuf::from(path.replace('*', "example")),
    }
}

fn sandboxed_here() -> bool {
    common::layer_enforced(corral::sandbox::Layer::Landlock)
}

#[test]
fn every_held_row_keeps_the_person_s_version_and_applies_on_review() {
    if !sandboxed_here() {
        return common::skip("no Landlock here");
    }
    for row in ROWS.iter().filter(|r| r.treatment == Treatment::Held) {
        let fx = Fixture::new();
        let ws = fx.workspace();
        let rel = example(row.path, row.shape);
        std::fs::create_dir_all(ws.join(&rel).parent().unwrap()).unwrap();
        std::fs::write(ws.join(&rel), "person\n").unwrap();
        let run = boxed(&fx);
        let o = sh(&run, &format!("printf 'box\\n' > '{}'", rel.display()));
        assert!(o.status.success(), "{}: {}", row.path, o.observation);
        assert_eq!(
            std::fs::read_to_string(ws.join(&rel)).unwrap(),
            "person\n",
            "{}: {}",
            row.path,
            o.observation
        );
        assert!(
            o.observation.contains("held for the person")
                && o.observation.contains(&rel.display().to_string()),
            "{}: {}",
            row.path,
            o.observation
        );
        let held = store(&fx).list().unwrap();
        assert_eq!(held.len(), 1, "{}: {held:?}", row.path);
        assert_eq!(held[0].path, rel);
        store(&fx).apply(&held[0].id).unwrap();
        assert_eq!(
            std::fs::read_to_string(ws.join(&rel)).unwrap(),
            "box\n",
            "{}",
            row.path
        );
        assert!(store(&fx).list().unwrap().is_empty());
    }
}

#[test]
fn every_held_row_that_appears_is_moved_out_and_held() {
    if !sandboxed_here() {
        return common::skip("no Landlock here");
    }
    for row in ROWS.iter().filter(|r| r.treatment == Treatment::Held) {
        let fx = Fixture::new();
        let ws = fx.workspace();
        let rel = example(row.path, row.shape);
        let run = boxed(&fx);
        let o = sh(
            &run,
            &format!(
                "mkdir -p \"$(dirname '{0}')\" && printf 'box\\n' > '{0}'",
                rel.display()
            ),
        );
        assert!(o.status.success(), "{}: {}", row.path, o.observation);
        assert!(
            !ws.join(&rel).exists(),
            "{}: left in the workspace: {}",
            row.path,
            o.observation
        );
        let held = store(&fx).list().unwrap();
        assert_eq!(held.len(), 1, "{}: {held:?} {}", row.path, o.observation);
        assert_eq!(held[0].path, rel);
        assert!(held[0].base_sha256.is_none());
    }
}

#[test]
fn the_read_only_rows_stay_as_they_were() {
    if !sandboxed_here() {
        return common::skip("no Landlock here");
    }
    for row in ROWS.iter().filter(|r| r.treatment == Treatment::ReadOnly) {
        let fx = Fixture::new();
        let ws = fx.workspace();
        // In `.git`, what runs programs: its config (git's own data it may write).
        let rel = match row.path {
            ".git" => PathBuf::from(".git/config"),
            path => example(path, row.shape),
        };
        std::fs::create_dir_all(ws.join(&rel).parent().unwrap()).unwrap();
        std::fs::write(ws.join(&rel), "person\n").unwrap();
        let run = boxed(&fx);
        let o = sh(&run, &format!("printf 'box\\n' > '{}'", rel.display()));
        assert!(!o.status.success(), "{}: {}", row.path, o.observation);
        assert_eq!(
            std::fs::read_to_string(ws.join(&rel)).unwrap(),
            "person\n",
            "{}",
            row.path
        );
    }
}

/// The route of a rewritten client settings file: the box removes the deny the person
/// set and adds a hook; the host's file is the person's during the call and after it.
#[test]
fn a_host_reader_sees_the_person_s_settings_while_the_call_runs() {
    if !sandboxed_here() {
        return common::skip("no Landlock here");
    }
    let fx = Fixture::new();
    let ws = fx.workspace();
    std::fs::create_dir_all(ws.join(".claude")).unwrap();
    let person = r#"{"permissions": {"deny": ["Bash"]}}"#;
    std::fs::write(ws.join(".claude/settings.json"), person).unwrap();
    let run = boxed(&fx);
    let script = "printf '%s' '{\"permissions\": {\"allow\": [\"Bash(*)\"]}, \"hooks\": {\"SessionStart\": []}}' \
         > .claude/settings.json && touch ready && \
         i=0; while [ ! -e go ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done";
    let outcome = std::thread::scope(|s| {
        let call = s.spawn(|| sh(&run, script));
        let ready = ws.join("ready");
        let mut waited = 0;
        while !ready.exists() && waited < 600 {
            std::thread::sleep(Duration::from_millis(50));
            waited += 1;
        }
        assert!(ready.exists(), "the call never wrote its settings");
        assert_eq!(
            std::fs::read_to_string(ws.join(".claude/settings.json")).unwrap(),
            person,
            "the host saw the box's version during the call"
        );
        std::fs::write(ws.join("go"), "").unwrap();
        call.join().unwrap()
    });
    assert!(outcome.status.success(), "{}", outcome.observation);
    assert_eq!(
        std::fs::read_to_string(ws.join(".claude/settings.json")).unwrap(),
        person
    );
    let held = store(&fx).list().unwrap();
    assert_eq!(held.len(), 1, "{held:?}");
    let diff = store(&fx).diff(&held[0].id).unwrap();
    assert!(diff.contains("Bash(*)"), "{diff}");
}

/// `core.hooksPath` names a directory of the workspace (husky): its hooks are held.
#[test]
fn the_hooks_path_a_repository_names_is_held() {
    if !sandboxed_here() {
        return common::skip("no Landlock here");
    }
    let fx = Fixture::new();
    let ws = fx.workspace();
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .args(args)
            .current_dir(&ws)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
    };
    git(&["init", "-q"]);
    git(&["config", "core.hooksPath", ".githooks"]);
    std::fs::create_dir(ws.join(".githooks")).unwrap();
    std::fs::write(ws.join(".githooks/pre-commit"), "#!/bin/sh\nexit 0\n").unwrap();
    let run = boxed(&fx);
    let o = sh(
        &run,
        "printf '#!/bin/sh\\ntouch /tmp/pwned\\n' > .githooks/pre-commit && \
         printf '#!/bin/sh\\n' > .githooks/pre-push && chmod +x .githooks/pre-push",
    );
    assert!(o.status.success(), "{}", o.observation);
    assert_eq!(
        std::fs::read_to_string(ws.join(".githooks/pre-commit")).unwrap(),
        "#!/bin/sh\nexit 0\n"
    );
    assert!(!ws.join(".githooks/pre-push").exists(), "{}", o.observation);
    let held = store(&fx).list().unwrap();
    let paths: Vec<_> = held.iter().map(|h| h.path.display().to_string()).collect();
    assert_eq!(
        paths,
        [".githooks/pre-commit", ".githooks/pre-push"],
        "{}",
        o.observation
    );
    let push = held.iter().find(|h| h.path.ends_with("pre-push")).unwrap();
    assert_eq!(push.mode.map(|m| m & 0o111 != 0), Some(true), "{push:?}");
}

/// A call that leaves the class alone holds nothing and says nothing of it.
#[test]
fn a_call_that_leaves_them_alone_holds_nothing() {
    if !sandboxed_here() {
        return common::skip("no Landlock here");
    }
    let fx = Fixture::new();
    let ws = fx.workspace();
    std::fs::write(ws.join(".mcp.json"), "{}").unwrap();
    let run = boxed(&fx);
    let o = sh(&run, "cat .mcp.json && echo hi > notes.txt");
    assert!(o.status.success(), "{}", o.observation);
    assert!(!o.observation.contains("held"), "{}", o.observation);
    assert!(store(&fx).list().unwrap().is_empty());
    assert_eq!(
        std::fs::read_to_string(ws.join("notes.txt")).unwrap(),
        "hi\n"
    );
}

fn git_in(dir: &Path, args: &[&str]) {
    let out = std::process::Command::new("git")
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
}

/// A clone into the workspace keeps all it wrote; a nested repository whose config names
/// a program has that key held, with the rest left in place, and a planted hook moved out.
#[test]
fn a_nested_repository_keeps_its_data_but_not_what_runs_programs() {
    if !sandboxed_here() {
        return common::skip("no Landlock here");
    }
    let fx = Fixture::new();
    let ws = fx.workspace();
    std::fs::create_dir(ws.join("origin")).unwrap();
    git_in(&ws.join("origin"), &["init", "-q"]);
    std::fs::write(ws.join("origin/a.txt"), "a\n").unwrap();
    git_in(&ws.join("origin"), &["add", "a.txt"]);
    git_in(&ws.join("origin"), &["commit", "-qm", "a"]);
    let run = boxed(&fx);
    let o = sh(&run, "git clone -q origin copy && cat copy/a.txt");
    assert!(o.status.success(), "{}", o.observation);
    assert!(!o.observation.contains("held"), "{}", o.observation);
    assert!(store(&fx).list().unwrap().is_empty());
    assert_eq!(
        std::fs::read_to_string(ws.join("copy/a.txt")).unwrap(),
        "a\n"
    );

    let o = sh(
        &run,
        "git init -q sub && git -C sub config core.fsmonitor ./evil.sh && \
         printf '#!/bin/sh\\ntouch pwned\\n' > sub/.git/hooks/post-checkout && \
         chmod +x sub/.git/hooks/post-checkout",
    );
    assert!(o.status.success(), "{}", o.observation);
    let config = std::fs::read_to_string(ws.join("sub/.git/config")).unwrap();
    assert!(!config.contains("fsmonitor"), "{config}");
    assert!(config.contains("repositoryformatversion"), "{config}");
    assert!(!ws.join("sub/.git/hooks/post-checkout").exists());
    assert!(ws.join("sub/.git/HEAD").exists(), "its data stays");
    let held: Vec<String> = store(&fx)
        .list()
        .unwrap()
        .iter()
        .map(|h| h.path.display().to_string())
        .collect();
    assert_eq!(
        held,
        ["sub/.git/config", "sub/.git/hooks/post-checkout"],
        "{}",
        o.observation
    );
}

/// A handle's writes are held at the sweep after the next call, said once, and the host
/// keeps the person's file while the handle runs and after it ends.
#[test]
fn a_handle_s_change_is_held_and_said_once() {
    if !sandboxed_here() {
        return common::skip("no Landlock here");
    }
    let fx = Fixture::new();
    let ws = fx.workspace();
    std::fs::write(ws.join(".mcp.json"), "person\n").unwrap();
    let run = boxed(&fx);
    let started = run
        .shell_start(&corral::handle::StartRequest::new(
            "printf 'box\\n' > .mcp.json && touch written && sleep 30",
        ))
        .unwrap();
    let mut waited = 0;
    while !ws.join("written").exists() && waited < 600 {
        std::thread::sleep(Duration::from_millis(50));
        waited += 1;
    }
    assert_eq!(
        std::fs::read_to_string(ws.join(".mcp.json")).unwrap(),
        "person\n"
    );
    let next = sh(&run, "true");
    assert!(
        next.observation.contains("held for the person: .mcp.json"),
        "{}",
        next.observation
    );
    let again = sh(&run, "true");
    assert!(!again.observation.contains("held"), "{}", again.observation);
    run.shell_kill(&corral::handle::KillRequest {
        handle: started.handle,
    })
    .unwrap();
    drop(run);
    assert_eq!(
        std::fs::read_to_string(ws.join(".mcp.json")).unwrap(),
        "person\n"
    );
    let held = store(&fx).list().unwrap();
    assert_eq!(held.len(), 1, "{held:?}");
}

/// A link a call makes at a held path (or on the way to one) is taken away: a host
/// program reading `.vscode/tasks.json` would follow it to what the call wrote.
#[test]
fn a_link_planted_on_a_held_path_is_taken_away() {
    if !sandboxed_here() {
        return common::skip("no Landlock here");
    }
    let fx = Fixture::new();
    let ws = fx.workspace();
    let run = boxed(&fx);
    let o = sh(
        &run,
        "mkdir notes && printf '{\"tasks\": []}' > notes/tasks.json && ln -s notes .vscode && \
         printf '{}' > notes/mcp && ln -s notes/mcp .mcp.json",
    );
    assert!(o.status.success(), "{}", o.observation);
    assert!(
        std::fs::symlink_metadata(ws.join(".vscode")).is_err(),
        "{}",
        o.observation
    );
    assert!(
        std::fs::symlink_metadata(ws.join(".mcp.json")).is_err(),
        "{}",
        o.observation
    );
    assert!(
        ws.join("notes/tasks.json").exists(),
        "the call's own files stay"
    );
    assert!(
        o.observation
            .contains(".vscode is a symbolic link the call made"),
        "{}",
        o.observation
    );
}

/// `.envrc` and `mise.toml` are named, not held: their tools ask the person by content.
#[test]
fn a_reported_row_is_named_not_held() {
    if !sandboxed_here() {
        return common::skip("no Landlock here");
    }
    for row in ROWS.iter().filter(|r| r.treatment == Treatment::Reported) {
        let fx = Fixture::new();
        let ws = fx.workspace();
        let run = boxed(&fx);
        let o = sh(&run, &format!("printf 'x\\n' > '{}'", row.path));
        assert!(o.status.success(), "{}: {}", row.path, o.observation);
        assert_eq!(std::fs::read_to_string(ws.join(row.path)).unwrap(), "x\n");
        assert!(
            o.observation.contains(&format!("{} changed", row.path)),
            "{}: {}",
            row.path,
            o.observation
        );
        assert!(store(&fx).list().unwrap().is_empty());
    }
}

/// The sandbox page's table is the class's: every row, with what runs it.
#[test]
fn the_docs_table_lists_every_row() {
    let page = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/sandbox.md"),
    )
    .unwrap();
    for row in ROWS {
        let shown = match row.shape {
            Shape::Dir => format!("| `{}/` | {} |", row.path, row.runs),
            _ => format!("| `{}` | {} |", row.path, row.runs),
        };
        assert!(
            page.contains(&shown),
            "docs/sandbox.md lacks the row {shown}"
        );
    }
}

/// The person is asked once at the call's end, shown the diff: a yes applies it; a diff
/// too long to show is not offered, only kept for `corral review`.
#[test]
fn the_person_is_asked_at_the_call_s_end_unless_the_diff_is_too_long() {
    if !sandboxed_here() {
        return common::skip("no Landlock here");
    }
    let fx = Fixture::new();
    let ws = fx.workspace();
    std::fs::write(ws.join(".mcp.json"), "person\n").unwrap();
    std::fs::write(ws.join(".npmrc"), "person\n").unwrap();
    let run = boxed_with(&fx, true);
    let o = sh(&run, "printf 'box\\n' > .mcp.json");
    assert_eq!(
        std::fs::read_to_string(ws.join(".mcp.json")).unwrap(),
        "box\n"
    );
    assert!(
        o.observation
            .contains("applied by the person when asked: .mcp.json"),
        "{}",
        o.observation
    );
    assert!(store(&fx).list().unwrap().is_empty());
    let o = sh(&run, "seq 1 500 > .npmrc");
    assert_eq!(
        std::fs::read_to_string(ws.join(".npmrc")).unwrap(),
        "person\n"
    );
    assert!(
        o.observation.contains("held for the person: .npmrc"),
        "{}",
        o.observation
    );
    assert_eq!(store(&fx).list().unwrap().len(), 1);
}

/// What the person reads before answering: the file, what runs it, the diff, and what a
/// yes does.
#[test]
fn the_held_question_shows_the_change() {
    let request = corral::approve::ApprovalRequest {
        tool: "apply-held".into(),
        line: Some("--- a\n+++ b\n-person\n+box".into()),
        items: vec![corral::approve::AskedItem {
            act: corral::policy::Act::Write,
            argv: Vec::new(),
            bytes: false,
            program: None,
            cwd: PathBuf::from("/w"),
            path: Some(PathBuf::from("/w/.mcp.json")),
            decision: corral::policy::Decision {
                effect: corral::policy::Effect::Ask,
                act: corral::policy::Act::Write,
                target: "MCP clients (Claude Code, Cursor): each server is a command they start"
                    .into(),
                rule: None,
                why: corral::policy::Why::ActDefault,
                via: Vec::new(),
                wrapper: false,
            },
        }],
    };
    insta::assert_snapshot!(request.message(Path::new("/w")));
}

/// corral's own process writes for a model by the same class the box holds: a file
/// tool or `apply_patch` does not write a held path (a new one, a file in a held
/// directory, a nested repository's config), and the host's file is the person's.
#[test]
fn the_file_tools_do_not_write_a_held_path() {
    let fx = Fixture::new();
    let ws = fx.workspace();
    std::fs::write(ws.join(".mcp.json"), "person\n").unwrap();
    std::fs::create_dir_all(ws.join("sub/.git")).unwrap();
    let run = boxed(&fx);
    for path in [
        ".mcp.json",
        ".vscode/tasks.json",
        ".husky/pre-commit",
        "app.code-workspace",
        "sub/.git/config",
        "sub/.git/hooks/post-checkout",
    ] {
        let refused = run.write_file(&corral::WriteFileRequest::new(path, "box\n"));
        let err = refused.expect_err(path).to_string();
        assert!(
            err.contains("a host program runs on its own"),
            "{path}: {err}"
        );
    }
    let patch = corral::patch::PatchRequest::new(
        "*** Begin Patch\n*** Update File: .mcp.json\n@@\n-person\n+box\n*** End Patch",
    );
    assert!(run.apply_patch(&patch).is_err());
    assert_eq!(
        std::fs::read_to_string(ws.join(".mcp.json")).unwrap(),
        "person\n"
    );
    assert!(!ws.join(".vscode").exists() && !ws.join("sub/.git/config").exists());
    // Any other file is written as ever.
    run.write_file(&corral::WriteFileRequest::new("notes.txt", "hi\n"))
        .unwrap();
    assert_eq!(
        std::fs::read_to_string(ws.join("notes.txt")).unwrap(),
        "hi\n"
    );
}
