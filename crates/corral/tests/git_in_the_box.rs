//! Git in the default sandboxed posture (issue 64): git writes its own data in the box,
//! `corral undo` puts refs and the index back byte for byte, the result says what
//! happened to git, and a config write is refused with the line to run on the host.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use corral::sandbox::{SandboxConfig, SandboxMode};
use corral::undo::UndoRequest;
use corral::{Config, ExecRequest, Outcome, Run, ShellRequest};

use crate::common::{self, Fixture};

fn git(ws: &Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new("git")
        .args(["-c", "user.email=t@example.org", "-c", "user.name=t"])
        .args(args)
        .current_dir(ws)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap()
}

/// A repository of two commits on `main`, a branch `topic`, and a change not staged.
fn repository(ws: &Path) {
    for args in [
        &["init", "-q", "-b", "main", "."][..],
        &["config", "branch.topic.description", "x"],
    ] {
        assert!(git(ws, args).status.success());
    }
    std::fs::write(ws.join("a.txt"), "one\n").unwrap();
    assert!(git(ws, &["add", "a.txt"]).status.success());
    assert!(git(ws, &["commit", "-q", "-m", "one"]).status.success());
    std::fs::write(ws.join("a.txt"), "two\n").unwrap();
    assert!(git(ws, &["commit", "-qam", "two"]).status.success());
    assert!(git(ws, &["branch", "topic"]).status.success());
    std::fs::write(ws.join("a.txt"), "three\n").unwrap();
}

/// The default sandboxed posture: workspace-write, `git_write` at its default; git with
/// an identity and none of the person's configuration.
fn run(fx: &Fixture) -> Run {
    let mut config = Config {
        sandbox: SandboxConfig::mode(SandboxMode::WorkspaceWrite),
        ..Config::default()
    };
    for (name, value) in [
        ("GIT_CONFIG_GLOBAL", "/dev/null"),
        ("GIT_AUTHOR_NAME", "t"),
        ("GIT_AUTHOR_EMAIL", "t@example.org"),
        ("GIT_COMMITTER_NAME", "t"),
        ("GIT_COMMITTER_EMAIL", "t@example.org"),
    ] {
        config.env.set.insert(name.into(), value.into());
    }
    fx.approving_run(config)
}

fn sh(run: &Run, line: &str) -> Outcome {
    run.shell(&ShellRequest::new(line).timeout(Duration::from_secs(60)))
        .unwrap()
}

/// Every file of `.git`'s refs, reflogs, `HEAD`, `packed-refs` and `index`, by path.
fn git_state(ws: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let git = ws.join(".git");
    let mut out = BTreeMap::new();
    let mut pending = vec![git.join("refs"), git.join("logs")];
    for name in ["HEAD", "ORIG_HEAD", "packed-refs", "index"] {
        if let Ok(bytes) = std::fs::read(git.join(name)) {
            out.insert(PathBuf::from(name), bytes);
        }
    }
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                pending.push(path);
            } else {
                let rel = path.strip_prefix(&git).unwrap().to_path_buf();
                out.insert(rel, std::fs::read(&path).unwrap());
            }
        }
    }
    out
}

/// `script` succeeds in the box, changes git's state, and `corral undo` of its step puts
/// the refs, reflogs and index back byte for byte.
fn undone(script: &str) {
    let fx = Fixture::new();
    let ws = fx.workspace();
    repository(&ws);
    let run = run(&fx);
    // A first call: the record holds the repository as it is.
    assert!(sh(&run, "true").status.success());
    let before = git_state(&ws);
    let r = sh(&run, script);
    assert!(r.status.success(), "{script}: {}", r.observation);
    assert_ne!(git_state(&ws), before, "{script} changed nothing of git's");
    run.undo(&UndoRequest {
        step: Some(r.step.seq),
        dry_run: None,
    })
    .unwrap_or_else(|e| panic!("{script}: undo: {e}"));
    assert_eq!(git_state(&ws), before, "{script}: not put back");
    assert!(git(&ws, &["status", "--short"]).status.success());
}

#[test]
fn a_commit_in_the_box_is_said_and_undone() {
    if !common::layer_enforced(corral::sandbox::Layer::ProtectedPaths) {
        return;
    }
    undone("git add -A && git commit -q -m x");
    let fx = Fixture::new();
    let ws = fx.workspace();
    repository(&ws);
    let run = run(&fx);
    let r = sh(&run, "git add -A && git commit -q -m x");
    assert!(r.status.success(), "{}", r.observation);
    let head = git(&ws, &["rev-parse", "--short=7", "HEAD"]);
    let short = String::from_utf8_lossy(&head.stdout).trim().to_string();
    assert!(
        r.observation
            .contains(&format!("git: committed {short} on main")),
        "{}",
        r.observation
    );
    assert!(!r.observation.contains("left running"), "{}", r.observation);
}

#[test]
fn a_new_branch_is_undone() {
    if common::layer_enforced(corral::sandbox::Layer::ProtectedPaths) {
        undone("git switch -q -c b");
    }
}

#[test]
fn a_stash_is_undone() {
    if common::layer_enforced(corral::sandbox::Layer::ProtectedPaths) {
        undone("git stash -q");
    }
}

/// `git rebase -i` with the todo list's editor given as a program that needs no
/// terminal runs without one, and is undone.
#[test]
fn an_interactive_rebase_is_undone() {
    if common::layer_enforced(corral::sandbox::Layer::ProtectedPaths) {
        undone(
            "git stash -q && GIT_SEQUENCE_EDITOR='sed -i 2s/^pick/fixup/' git rebase -q -i --root",
        );
    }
}

/// The editor given in the call's environment (`ExecRequest` env) counts as one
/// written in front of the command: the rebase runs, and is undone.
#[test]
fn an_interactive_rebase_with_its_editor_in_the_calls_env_is_undone() {
    if !common::layer_enforced(corral::sandbox::Layer::ProtectedPaths) {
        return;
    }
    let fx = Fixture::new();
    let ws = fx.workspace();
    repository(&ws);
    let run = run(&fx);
    assert!(sh(&run, "git stash -q").status.success());
    let before = git_state(&ws);
    let rebase = ["git", "rebase", "-q", "-i", "--root"];
    // Without an editor given it needs a terminal, and is refused before it runs.
    assert!(run.exec(&ExecRequest::new(rebase)).is_err());
    let r = run
        .exec(&ExecRequest::new(rebase).env("GIT_SEQUENCE_EDITOR", "sed -i 2s/^pick/fixup/"))
        .unwrap();
    assert!(r.status.success(), "{}", r.observation);
    assert_ne!(git_state(&ws), before);
    run.undo(&UndoRequest {
        step: Some(r.step.seq),
        dry_run: None,
    })
    .unwrap();
    assert_eq!(git_state(&ws), before);
}

#[test]
fn a_deleted_branch_is_undone() {
    if common::layer_enforced(corral::sandbox::Layer::ProtectedPaths) {
        undone("git branch -q -D topic");
    }
}

#[test]
fn a_hard_reset_is_undone() {
    if common::layer_enforced(corral::sandbox::Layer::ProtectedPaths) {
        undone("git reset -q --hard HEAD~1");
    }
}

/// `config` is a read-only mount: the result names the command and the line to run on
/// the host; the config is as it was.
#[test]
fn a_config_write_names_the_line_to_run_on_the_host() {
    if !common::layer_enforced(corral::sandbox::Layer::ProtectedPaths) {
        return;
    }
    let fx = Fixture::new();
    let ws = fx.workspace();
    repository(&ws);
    let config = std::fs::read(ws.join(".git/config")).unwrap();
    let run = run(&fx);
    let r = sh(&run, "git config user.email x");
    assert!(!r.status.success(), "{}", r.observation);
    let host = format!(
        "run on the host: git -C {} config user.email x",
        ws.display()
    );
    assert!(r.observation.contains(&host), "{}", r.observation);
    assert!(
        r.observation.contains("`git config user.email x`"),
        "{}",
        r.observation
    );
    let renamed = sh(&run, "git branch -m topic t2");
    assert!(
        renamed
            .observation
            .contains("config --rename-section branch.topic branch.t2"),
        "{}",
        renamed.observation
    );
    assert_eq!(std::fs::read(ws.join(".git/config")).unwrap(), config);
}

/// `git_write = false` makes the whole `.git` read-only again; a hook stays read-only
/// with it on.
#[test]
fn git_write_false_keeps_the_whole_git_read_only_and_hooks_stay_either_way() {
    if !common::layer_enforced(corral::sandbox::Layer::ProtectedPaths) {
        return;
    }
    let fx = Fixture::new();
    let ws = fx.workspace();
    repository(&ws);
    let before = git_state(&ws);
    // Refused before it runs (a redirect corral opens) or by the mount.
    let hook = run(&fx).shell(&ShellRequest::new("echo evil > .git/hooks/pre-commit"));
    assert!(hook.is_err() || hook.is_ok_and(|o| !o.status.success()));
    assert!(!ws.join(".git/hooks/pre-commit").exists());
    let mut sandbox = SandboxConfig::mode(SandboxMode::WorkspaceWrite);
    sandbox.git_write = false;
    let off = fx.approving_run(Config {
        sandbox,
        ..Config::default()
    });
    let r = sh(&off, "git add -A && git commit -q -m x");
    assert!(!r.status.success(), "{}", r.observation);
    assert_eq!(git_state(&ws), before);
}
