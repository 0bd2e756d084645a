//! read_file, write_file and list_dir: confined to the workspace, honouring the sandbox's
//! protected paths and the policy's read/write rules, each a step in the trace.

use crate::common;

use common::Fixture;
use corral::policy::{Act, Effect};
use corral::trace::Store;
use corral::{
    ErrorKind, ListDirRequest, Policy, ReadFileRequest, Run, WriteFileRequest,
    sandbox::SandboxConfig, sandbox::SandboxMode,
};

fn open(fx: &Fixture, policy: Policy) -> Run {
    Run::builder(fx.workspace())
        .store(fx.store())
        .policy(policy)
        .open()
        .unwrap()
}

#[test]
fn read_shows_numbered_lines_and_where_to_read_on() {
    let fx = Fixture::new();
    let text: String = (1..=50).map(|i| format!("line {i}\n")).collect();
    std::fs::write(fx.workspace().join("f.txt"), &text).unwrap();
    let run = fx.run();
    let out = run
        .read_file(&ReadFileRequest::new("f.txt").lines(10, 3))
        .unwrap();
    insta::assert_snapshot!(out.observation, @r"
        10	line 10
        11	line 11
        12	line 12
    [f.txt: lines 10-12 of 50; read on with offset=13]
    ");
    let whole = run.read_file(&ReadFileRequest::new("f.txt")).unwrap();
    assert!(whole.observation.ends_with("    50\tline 50\n"));
}

#[test]
fn write_creates_directories_and_replaces_atomically() {
    let fx = Fixture::new();
    let run = fx.run();
    let out = run
        .write_file(&WriteFileRequest::new("src/deep/new.rs", "fn main() {}\n"))
        .unwrap();
    assert_eq!(
        out.observation,
        "created src/deep/new.rs (13 bytes, 1 lines)"
    );
    let again = run
        .write_file(&WriteFileRequest::new("src/deep/new.rs", "// two\n"))
        .unwrap();
    assert!(
        again.observation.starts_with("replaced"),
        "{}",
        again.observation
    );
    assert_eq!(
        std::fs::read_to_string(fx.workspace().join("src/deep/new.rs")).unwrap(),
        "// two\n"
    );
    // No temporary file is left beside it.
    let left: Vec<_> = std::fs::read_dir(fx.workspace().join("src/deep"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left.len(), 1, "{left:?}");
}

#[test]
fn list_dir_shows_the_tree_without_descending_into_git() {
    let fx = Fixture::new();
    let ws = fx.workspace();
    std::fs::create_dir_all(ws.join(".git/objects")).unwrap();
    std::fs::create_dir_all(ws.join("src")).unwrap();
    std::fs::write(ws.join("src/lib.rs"), "x").unwrap();
    std::fs::write(ws.join("README.md"), "hello").unwrap();
    let out = fx.run().list_dir(&ListDirRequest::default()).unwrap();
    insta::assert_snapshot!(out.observation, @r"
    ./
      .git/
      README.md (5 bytes)
      src/
        lib.rs (1 bytes)
    ");
}

#[test]
fn paths_outside_the_workspace_are_refused() {
    let fx = Fixture::new();
    std::fs::write(fx.dir.path().join("secret"), "s").unwrap();
    std::os::unix::fs::symlink(fx.dir.path().join("secret"), fx.workspace().join("link")).unwrap();
    let run = fx.run();
    for path in ["../secret", "link", "/etc/passwd", "a/../../secret"] {
        let err = run.read_file(&ReadFileRequest::new(path)).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Refused, "{path}: {err}");
        assert!(err.to_string().contains("outside the workspace"), "{err}");
    }
    let err = run
        .write_file(&WriteFileRequest::new("../escaped", "x"))
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Refused);
    assert!(!fx.dir.path().join("escaped").exists());
}

#[test]
fn protected_paths_stay_read_only_for_file_tools() {
    let fx = Fixture::new();
    let ws = fx.workspace();
    std::fs::create_dir_all(ws.join(".git/hooks")).unwrap();
    std::fs::write(ws.join("corral.toml"), "[exec]\n").unwrap();
    let run = fx.run();
    for path in [".git/hooks/pre-commit", ".git/config", "corral.toml"] {
        let err = run
            .write_file(&WriteFileRequest::new(path, "echo owned\n"))
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Refused, "{path}: {err}");
        assert!(err.to_string().contains("protected path"), "{err}");
    }
    assert!(!ws.join(".git/hooks/pre-commit").exists());
    assert_eq!(
        std::fs::read_to_string(ws.join("corral.toml")).unwrap(),
        "[exec]\n"
    );
    // Reading them is fine.
    run.read_file(&ReadFileRequest::new("corral.toml")).unwrap();
}

#[test]
fn a_read_only_sandbox_writes_nothing() {
    let fx = Fixture::new();
    let config = corral::Config {
        sandbox: SandboxConfig::mode(SandboxMode::ReadOnly),
        ..corral::Config::default()
    };
    let run = fx.run_with(config);
    let err = run
        .write_file(&WriteFileRequest::new("a.txt", "x"))
        .unwrap_err();
    assert!(err.to_string().contains("read-only"), "{err}");
    assert!(!fx.workspace().join("a.txt").exists());
}

#[test]
fn the_policy_decides_reads_and_writes_and_its_refusals_are_recorded() {
    let fx = Fixture::new();
    std::fs::write(fx.workspace().join(".env"), "KEY=1").unwrap();
    let policy = Policy::permissive()
        .layer("project")
        .rule(Act::Read, "**/.env", Effect::Deny)
        .rule(Act::Write, "**/*.lock", Effect::Deny);
    let run = open(&fx, policy);
    let err = run.read_file(&ReadFileRequest::new(".env")).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Refused);
    assert!(err.to_string().contains("refused by policy"), "{err}");
    let err = run
        .write_file(&WriteFileRequest::new("Cargo.lock", "x"))
        .unwrap_err();
    assert!(err.to_string().contains("**/*.lock"), "{err}");
    assert!(!fx.workspace().join("Cargo.lock").exists());
    let id = run.id().to_string();
    run.close().unwrap();

    let store = Store::open(&fx.store()).unwrap();
    let steps = store.steps(Some(&id), 10).unwrap();
    let tools: Vec<(&str, Option<&str>)> = steps
        .iter()
        .rev()
        .map(|s| (s.tool.as_str(), s.outcome.as_deref()))
        .collect();
    assert_eq!(
        tools,
        [
            ("read_file", Some("refused")),
            ("write_file", Some("refused"))
        ]
    );
    let events = store.policy_events(Some(&id), false, 10).unwrap();
    assert_eq!(events.len(), 2, "{events:?}");
    assert!(events.iter().all(|e| e.decision == "refused"));
}

#[test]
fn without_an_approver_an_ask_is_a_refusal_that_says_why() {
    let fx = Fixture::new();
    // Policy::default() asks about everything; the run has nobody to ask.
    let run = open(&fx, Policy::default());
    let err = run
        .write_file(&WriteFileRequest::new("a.txt", "x"))
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Refused);
    assert!(err.to_string().contains("not approved"), "{err}");
    assert!(!fx.workspace().join("a.txt").exists());
}

/// Counts the questions it is asked and answers "yes, for the run".
#[derive(Debug, Clone, Default)]
struct ForRun(std::sync::Arc<std::sync::atomic::AtomicUsize>);

impl corral::approve::Approver for ForRun {
    fn name(&self) -> &str {
        "for-run"
    }
    fn approve(
        &self,
        _: &corral::approve::ApprovalRequest,
        _: &std::path::Path,
    ) -> corral::approve::Approval {
        self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        corral::approve::Approval::ApproveForRun
    }
}

#[test]
fn an_approval_for_the_run_covers_the_same_write_again() {
    let fx = Fixture::new();
    let approver = ForRun::default();
    let run = Run::builder(fx.workspace())
        .store(fx.store())
        .policy(
            Policy::permissive()
                .layer("p")
                .rule(Act::Write, "**/*.md", Effect::Ask),
        )
        .approver(approver.clone())
        .open()
        .unwrap();
    for text in ["one", "two"] {
        run.write_file(&WriteFileRequest::new("NOTES.md", text))
            .unwrap();
    }
    assert_eq!(approver.0.load(std::sync::atomic::Ordering::SeqCst), 1);
    let id = run.id().to_string();
    run.close().unwrap();
    let store = Store::open(&fx.store()).unwrap();
    let decisions: Vec<String> = store
        .policy_events(Some(&id), false, 10)
        .unwrap()
        .into_iter()
        .rev()
        .map(|e| e.decision)
        .collect();
    assert_eq!(decisions, ["approved_for_run", "approved_cached"]);
}

/// A file written over a symlink (dangling, or leading anywhere) is a new file: it gets
/// a new file's mode, not the link's own 0777 that would let anyone rewrite it and run it.
#[test]
fn a_file_written_over_a_symlink_gets_a_new_file_s_mode() {
    use std::os::unix::fs::PermissionsExt;
    let fx = Fixture::new();
    let run = fx.run();
    run.write_file(&WriteFileRequest::new("plain.txt", "x\n"))
        .unwrap();
    let fresh = std::fs::metadata(fx.workspace().join("plain.txt"))
        .unwrap()
        .permissions()
        .mode()
        & 0o7777;
    std::os::unix::fs::symlink("nothere", fx.workspace().join("dang")).unwrap();
    std::fs::write(fx.workspace().join("kept.sh"), "echo\n").unwrap();
    std::fs::set_permissions(
        fx.workspace().join("kept.sh"),
        std::fs::Permissions::from_mode(0o750),
    )
    .unwrap();
    run.write_file(&WriteFileRequest::new("dang", "echo hi\n"))
        .unwrap();
    run.write_file(&WriteFileRequest::new("kept.sh", "echo two\n"))
        .unwrap();
    let meta = std::fs::symlink_metadata(fx.workspace().join("dang")).unwrap();
    assert!(meta.file_type().is_file());
    assert_eq!(meta.permissions().mode() & 0o7777, fresh);
    assert_eq!(meta.permissions().mode() & 0o022, 0, "writable by others");
    // A regular file keeps its own mode.
    let kept = std::fs::metadata(fx.workspace().join("kept.sh")).unwrap();
    assert_eq!(kept.permissions().mode() & 0o7777, 0o750);
}
