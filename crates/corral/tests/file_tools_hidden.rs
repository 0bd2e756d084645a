//! The file tools honour the box's hidden set, judged from the attacker's side: with the
//! workspace a person's home (`--workspace ~`) and with an operator's `deny_read` on a
//! workspace directory, `read_file`, `list_dir`, `write_file` and `apply_patch` (update,
//! move, delete, and a hunk's nearest-match error) neither show the canary nor change a
//! hidden file; the box and the file tools answer from one set (`sandbox::sets`).

use crate::common;

use std::path::{Path, PathBuf};

use common::Fixture;
use corral::patch::PatchRequest;
use corral::policy::{Act, Effect};
use corral::{
    Config, ErrorKind, ListDirRequest, Policy, ReadFileRequest, Run, WriteFileRequest,
    sandbox::SandboxConfig, sandbox::SandboxMode,
};

const CANARY: &str = "CANARY-7f3a9c-ed25519-private-key";

/// A workspace with a hidden directory holding a canary file, and a run over it.
struct Scene {
    fx: Fixture,
    run: Run,
    /// The hidden directory, relative to the workspace.
    dir: &'static str,
    /// The canary file in it.
    file: String,
}

impl Scene {
    /// `--workspace ~`: the workspace is a scratch home with the default read denies made
    /// under it (`~/.ssh`, `~/.aws`, …), and `~/.ssh/id_ed25519` the canary.
    fn home() -> Scene {
        Scene::home_in(SandboxMode::WorkspaceWrite)
    }

    fn home_in(mode: SandboxMode) -> Scene {
        let fx = Fixture::new();
        let home = fx.workspace();
        plant(&home.join(".ssh/id_ed25519"));
        let deny = corral::sandbox::DEFAULT_DENY_READ
            .iter()
            .map(|p| {
                home.join(p.strip_prefix("~/").unwrap())
                    .display()
                    .to_string()
            })
            .collect();
        let run = open(&fx, mode, deny);
        Scene {
            fx,
            run,
            dir: ".ssh",
            file: ".ssh/id_ed25519".into(),
        }
    }

    /// An operator's `[sandbox] deny_read` on the workspace's `secrets/`.
    fn operator() -> Scene {
        let fx = Fixture::new();
        let ws = fx.workspace();
        plant(&ws.join("secrets/token"));
        let deny = vec![ws.join("secrets").display().to_string()];
        let run = open(&fx, SandboxMode::WorkspaceWrite, deny);
        Scene {
            fx,
            run,
            dir: "secrets",
            file: "secrets/token".into(),
        }
    }

    fn both() -> [Scene; 2] {
        [Scene::home(), Scene::operator()]
    }

    fn ws(&self) -> PathBuf {
        self.fx.workspace()
    }

    /// The canary file is as planted.
    fn canary_intact(&self) {
        assert_eq!(
            std::fs::read_to_string(self.ws().join(&self.file)).unwrap(),
            format!("{CANARY}\n"),
            "{}",
            self.file
        );
    }

    /// A file the model may touch, beside the hidden directory.
    fn notes(&self) -> &'static str {
        std::fs::write(self.ws().join("notes.txt"), "a note\n").unwrap();
        "notes.txt"
    }
}

fn plant(file: &Path) {
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(file, format!("{CANARY}\n")).unwrap();
}

fn open(fx: &Fixture, mode: SandboxMode, deny_read: Vec<String>) -> Run {
    let mut sandbox = SandboxConfig::mode(mode);
    sandbox.deny_read = deny_read;
    Run::builder(fx.workspace())
        .store(fx.store())
        .config(Config {
            sandbox,
            ..Config::default()
        })
        .policy(Policy::permissive())
        .open()
        .unwrap()
}

/// A refusal from the box's hidden set: refused, naming the path, the canary nowhere.
fn hidden_refusal(result: corral::Result<impl std::fmt::Debug>, path: &str) -> String {
    let err = result.expect_err(path);
    let text = err.to_string();
    assert_eq!(err.kind(), ErrorKind::Refused, "{path}: {text}");
    assert!(text.contains(path), "{path}: {text}");
    assert!(text.contains("out of reach"), "{path}: {text}");
    assert!(!text.contains(CANARY), "{path}: {text}");
    let denial = err.denial().expect("a refusal's fields");
    assert_eq!(denial.layer.as_deref(), Some("sandbox"), "{denial:?}");
    text
}

fn patch(body: &str) -> PatchRequest {
    PatchRequest::new(format!("*** Begin Patch\n{body}\n*** End Patch"))
}

#[test]
fn read_file_refuses_a_hidden_file_and_says_which_rule() {
    for s in Scene::both() {
        let text = hidden_refusal(s.run.read_file(&ReadFileRequest::new(&s.file)), &s.file);
        assert!(text.contains("read deny"), "{text}");
        assert!(text.contains("nothing was read"), "{text}");
        // Through a symlink in the workspace, too: the path it resolves to is checked.
        std::os::unix::fs::symlink(s.ws().join(&s.file), s.ws().join("innocent")).unwrap();
        hidden_refusal(
            s.run.read_file(&ReadFileRequest::new("innocent")),
            "innocent",
        );
    }
}

#[test]
fn the_refusal_reads_as_a_model_would_need_it() {
    let s = Scene::home();
    let err = s
        .run
        .read_file(&ReadFileRequest::new(".ssh/id_ed25519"))
        .unwrap_err();
    let home = s.ws().canonicalize().unwrap();
    let text = err.to_string().replace(&home.display().to_string(), "~");
    insta::assert_snapshot!(
        text,
        @".ssh/id_ed25519 is out of reach: ~/.ssh is hidden by the sandbox's read deny `~/.ssh`. A command in the sandbox cannot read it either, so the file tools do not read, list or write it; nothing was read or changed. Work without it: the read denies hold for every sandboxed call and for the file tools; a person who wants it read does so outside corral's sandbox."
    );
}

#[test]
fn list_dir_does_not_list_a_hidden_directory() {
    for s in Scene::both() {
        hidden_refusal(s.run.list_dir(&ListDirRequest::new(s.dir)), s.dir);
        // The workspace's listing names it, as the box does, and goes no further.
        let out = s.run.list_dir(&ListDirRequest::default()).unwrap();
        let name = Path::new(&s.file).file_name().unwrap().to_str().unwrap();
        assert!(!out.observation.contains(name), "{}", out.observation);
        assert!(
            out.observation
                .contains(&format!("{}/ (hidden by the sandbox)", s.dir)),
            "{}",
            out.observation
        );
    }
}

#[test]
fn write_file_writes_nothing_hidden() {
    for s in Scene::both() {
        let new = format!("{}/authorized_keys", s.dir);
        hidden_refusal(
            s.run
                .write_file(&WriteFileRequest::new(&new, "ssh-ed25519 AAAA attacker\n")),
            &new,
        );
        assert!(!s.ws().join(&new).exists(), "{new}");
        hidden_refusal(
            s.run
                .write_file(&WriteFileRequest::new(&s.file, "replaced\n")),
            &s.file,
        );
        s.canary_intact();
    }
}

#[test]
fn apply_patch_update_changes_nothing_hidden() {
    for s in Scene::both() {
        let p = patch(&format!(
            "*** Update File: {}\n@@\n-{CANARY}\n+owned",
            s.file
        ));
        hidden_refusal(s.run.apply_patch(&p), &s.file);
        s.canary_intact();
    }
}

#[test]
fn apply_patch_move_takes_nothing_out_and_puts_nothing_in() {
    for s in Scene::both() {
        // Out: the canary moved to where the model reads it.
        let p = patch(&format!(
            "*** Update File: {}\n*** Move to: stolen.txt",
            s.file
        ));
        hidden_refusal(s.run.apply_patch(&p), &s.file);
        assert!(!s.ws().join("stolen.txt").exists());
        s.canary_intact();
        // In: a file moved into the hidden directory.
        let notes = s.notes();
        let into = format!("{}/authorized_keys", s.dir);
        let p = patch(&format!("*** Update File: {notes}\n*** Move to: {into}"));
        hidden_refusal(s.run.apply_patch(&p), &into);
        assert!(!s.ws().join(&into).exists());
        assert!(s.ws().join(notes).exists());
    }
}

#[test]
fn apply_patch_delete_leaves_a_hidden_file() {
    for s in Scene::both() {
        let p = patch(&format!("*** Delete File: {}", s.file));
        hidden_refusal(s.run.apply_patch(&p), &s.file);
        s.canary_intact();
    }
}

/// A hunk that does not apply quotes the nearest lines of its file: for a hidden file
/// that would be the secret, so it is refused before the file is read.
#[test]
fn a_hunk_that_misses_a_hidden_file_quotes_nothing_of_it() {
    for s in Scene::both() {
        let p = patch(&format!(
            "*** Update File: {}\n@@\n-CANARY-7f3a9c-ed25519-private-kez\n+x",
            s.file
        ));
        let text = hidden_refusal(s.run.apply_patch(&p), &s.file);
        assert!(!text.contains("Nearest match"), "{text}");
        s.canary_intact();
    }
}

/// The same for the policy's read rules: an update reads its file, so a path the policy
/// keeps from reads is not quoted by a hunk's error, even where writes are allowed.
#[test]
fn a_hunk_that_misses_an_unreadable_file_quotes_nothing_of_it() {
    let fx = Fixture::new();
    plant(&fx.workspace().join("private.txt"));
    let policy =
        Policy::permissive()
            .layer("project")
            .rule(Act::Read, "**/private.txt", Effect::Deny);
    let run = Run::builder(fx.workspace())
        .store(fx.store())
        .policy(policy)
        .open()
        .unwrap();
    let p = patch("*** Update File: private.txt\n@@\n-CANARY-7f3a9c-ed25519-private-kez\n+x");
    let err = run.apply_patch(&p).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Refused, "{err}");
    assert!(!err.to_string().contains(CANARY), "{err}");
    assert!(err.to_string().contains("private.txt"), "{err}");
}

/// A hidden path made after the run opened is refused by the pattern that names it (the
/// box hides it from its next call on).
#[test]
fn a_hidden_path_made_after_the_run_opened_is_refused_by_its_pattern() {
    let s = Scene::home();
    // `~/.aws` did not exist when the run opened.
    plant(&s.ws().join(".aws/credentials"));
    hidden_refusal(
        s.run.read_file(&ReadFileRequest::new(".aws/credentials")),
        ".aws/credentials",
    );
    // `~/.cargo/credentials*` names a file no one has made yet.
    let made = ".cargo/credentials.toml";
    hidden_refusal(s.run.write_file(&WriteFileRequest::new(made, "x")), made);
    assert!(!s.ws().join(made).exists());
}

/// The box reads a hard link in the workspace as its file (a mount hides a path, not an
/// inode; docs/sandbox.md says so), and the file tools answer the same.
#[test]
fn a_hard_link_reads_as_its_file_as_in_the_box() {
    let s = Scene::operator();
    std::fs::hard_link(s.ws().join(&s.file), s.ws().join("linked")).unwrap();
    let out = s.run.read_file(&ReadFileRequest::new("linked")).unwrap();
    assert!(out.observation.contains(CANARY), "{}", out.observation);
}

/// Outside a box of corral's, nothing is hidden from a command, nor from the file tools.
#[test]
fn without_a_sandbox_nothing_is_hidden() {
    let s = Scene::home_in(SandboxMode::Full);
    let out = s.run.read_file(&ReadFileRequest::new(&s.file)).unwrap();
    assert!(out.observation.contains(CANARY), "{}", out.observation);
}

/// The box's own answer, from inside it: the same file is out of its reach too.
#[test]
fn the_box_hides_what_the_file_tools_refuse() {
    if !corral_sys::sandbox::host_support().namespaces {
        eprintln!("skipped: no namespaces here, so the box hides nothing");
        return;
    }
    for s in Scene::both() {
        let o = s
            .run
            .exec(
                &corral::ExecRequest::new(["cat", s.file.as_str()])
                    .timeout(std::time::Duration::from_secs(60)),
            )
            .unwrap();
        assert!(!o.status.success(), "{}", s.file);
        let seen = format!("{}{}", o.stdout.window.head, o.stdout.window.tail);
        assert!(!seen.contains(CANARY), "{seen}");
    }
}

/// A pattern is expanded in corral's own process, before the box runs the line: it lists
/// no name the box hides (`echo .ssh/*` printed the keys' names), and matches the word as
/// written instead, as where nothing matches.
#[test]
fn a_pattern_lists_no_hidden_name() {
    for s in Scene::both() {
        let name = Path::new(&s.file).file_name().unwrap().to_str().unwrap();
        for line in [
            format!("echo {}/*", s.dir),
            format!("echo {}*/*", &s.dir[..2]),
        ] {
            let o = s
                .run
                .shell(
                    &corral::ShellRequest::new(&line).timeout(std::time::Duration::from_secs(60)),
                )
                .unwrap();
            let seen = format!("{}{}", o.stdout.window.head, o.stdout.window.tail);
            assert!(!seen.contains(name), "{line}: {seen}");
        }
    }
    // Without a box, nothing is hidden and the pattern matches as bash's would.
    let s = Scene::home_in(SandboxMode::Full);
    let o = s
        .run
        .shell(&corral::ShellRequest::new("echo .ssh/*"))
        .unwrap();
    let seen = format!("{}{}", o.stdout.window.head, o.stdout.window.tail);
    assert!(seen.contains("id_ed25519"), "{seen}");
}
