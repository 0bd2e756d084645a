//! The home in the box: toolchains only. A secret no deny list names (shell history, an
//! API key under `~/.config`) is not there; a toolchain in the home runs; a workspace in
//! the home is written; `home_read` puts back more; nothing the box writes to its home
//! reaches the person's. As root and as an ordinary user.

use crate::common;

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::Command;

use common::{Scratch, UserScratch, is_root, text};

/// A home outside `/tmp` (the box's own already), as a person's is: history, a key
/// under `~/.config`, a toolchain in `~/.local/bin`, a project, a `~/tools` directory.
struct Home {
    _dir: tempfile::TempDir,
    home: PathBuf,
}

impl Home {
    fn new() -> Option<Home> {
        let dir = tempfile::Builder::new()
            .prefix("corral-home-")
            .tempdir_in("/var/tmp")
            .ok()?;
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let home = dir.path().join("me");
        for sub in [".config/llm", ".local/bin", "project", "tools"] {
            std::fs::create_dir_all(home.join(sub)).unwrap();
        }
        std::fs::write(
            home.join(".bash_history"),
            "export API_KEY=HISTORY-SECRET\n",
        )
        .unwrap();
        std::fs::write(home.join(".config/llm/key"), "KEY-SECRET\n").unwrap();
        let tool = home.join(".local/bin/greet");
        std::fs::write(&tool, "#!/bin/sh\necho toolchain-ran\n").unwrap();
        std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::write(home.join("tools/notes"), "tools-readable\n").unwrap();
        Some(Home { _dir: dir, home })
    }

    fn workspace(&self) -> PathBuf {
        self.home.join("project")
    }
}

const LOOK: &str = "cat ~/.bash_history ~/.config/llm/key 2>/dev/null; \
                    ~/.local/bin/greet; \
                    echo box-wrote > ~/.bash_history; \
                    echo in-project > made && echo project-written; \
                    cat ~/tools/notes 2>/dev/null || echo tools-hidden";

/// `corral exec` of [`LOOK`] in the box, workspace-write.
const LOOK_ARGS: &[&str] = &[
    "exec",
    "--sandbox",
    "workspace-write",
    "--yes",
    "--",
    "sh",
    "-c",
    LOOK,
];

/// Run `cmd` (a `corral` command) in `home`'s project, with it as `HOME`.
fn look(mut cmd: Command, home: &Home) -> std::process::Output {
    corral_in(&mut cmd, home);
    cmd.output().unwrap()
}

fn corral_in(cmd: &mut Command, home: &Home) {
    cmd.current_dir(home.workspace())
        .env("HOME", &home.home)
        .env(
            "PATH",
            format!("{}/.local/bin:/usr/bin:/bin", home.home.display()),
        );
}

fn check(stdout: &str, stderr: &str, home: &Home, tools: bool) {
    assert!(!stdout.contains("SECRET"), "a secret was read: {stdout}");
    assert!(stdout.contains("toolchain-ran"), "{stdout}{stderr}");
    assert!(stdout.contains("project-written"), "{stdout}{stderr}");
    assert!(
        stdout.contains(if tools {
            "tools-readable"
        } else {
            "tools-hidden"
        }),
        "{stdout}"
    );
    assert_eq!(
        std::fs::read_to_string(home.home.join(".bash_history")).unwrap(),
        "export API_KEY=HISTORY-SECRET\n",
        "the box wrote the person's home"
    );
    assert_eq!(
        std::fs::read_to_string(home.workspace().join("made")).unwrap(),
        "in-project\n"
    );
}

/// Whether the box covers the home here, as `corral sandbox report` says.
fn covers_home(report: &str) -> bool {
    report
        .lines()
        .any(|l| l.trim_start().starts_with("home") && l.contains("toolchains only"))
}

#[test]
fn a_box_sees_the_toolchains_of_the_home_and_nothing_else() {
    let Some(home) = Home::new() else {
        common::skip("no /var/tmp here");
        return;
    };
    let s = Scratch::new();
    let mut report = s.corral(&["sandbox", "report"]);
    corral_in(&mut report, &home);
    if !covers_home(&text(&report.output().unwrap().stdout)) {
        common::skip("the box cannot cover the home here (no mount_setattr)");
        return;
    }
    let out = look(s.corral(LOOK_ARGS), &home);
    check(&text(&out.stdout), &text(&out.stderr), &home, false);
    let err = text(&out.stderr);
    assert!(
        err.contains("corral: sandbox: workspace-write") && !err.contains("home none"),
        "{err}"
    );
    // A path of the home the box does not show is named, with what would put it back.
    let notes = home.home.join("tools/notes");
    let mut cmd = s.corral(&[
        "exec",
        "--sandbox",
        "workspace-write",
        "--yes",
        "--",
        "cat",
        notes.to_str().unwrap(),
    ]);
    corral_in(&mut cmd, &home);
    let stderr = text(&cmd.output().unwrap().stderr);
    assert!(
        stderr.contains("is in your home") && stderr.contains("home_read = [\"~/tools\"]"),
        "{stderr}"
    );
    // A trusted policy file puts `~/tools` back.
    std::fs::remove_file(home.workspace().join("made")).unwrap();
    let policy = s.dir.path().join("home.toml");
    std::fs::write(&policy, "[sandbox]\nhome_read = [\"~/tools\"]\n").unwrap();
    let mut cmd = s.corral(&[
        "exec",
        "--sandbox",
        "workspace-write",
        "--config",
        policy.to_str().unwrap(),
        "--yes",
        "--",
        "sh",
        "-c",
        LOOK,
    ]);
    corral_in(&mut cmd, &home);
    let out = cmd.output().unwrap();
    check(&text(&out.stdout), &text(&out.stderr), &home, true);
}

#[test]
fn an_ordinary_users_box_sees_the_toolchains_of_the_home_and_nothing_else() {
    let (Some(home), Some(u)) = (Home::new(), UserScratch::new()) else {
        return;
    };
    if is_root() {
        common::chown_tree(&home.home, common::UNPRIVILEGED);
    }
    let mut report = u.corral(&["sandbox", "report"]);
    corral_in(&mut report, &home);
    let report = text(&report.output().unwrap().stdout);
    if !covers_home(&report) {
        common::not_expecting_a_whole_box(&report);
        common::skip("the box cannot cover the home for this user here");
        return;
    }
    let out = look(u.corral(LOOK_ARGS), &home);
    check(&text(&out.stdout), &text(&out.stderr), &home, false);
}

#[test]
fn a_bad_home_read_entry_is_named_with_its_file_and_line() {
    let s = Scratch::new();
    let policy = s.dir.path().join("bad.toml");
    std::fs::write(&policy, "[sandbox]\nhome_read = [\"/etc\"]\n").unwrap();
    let out = s.output(&["exec", "--config", policy.to_str().unwrap(), "--", "true"]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains("bad.toml") && err.contains("~/"), "{err}");
}

/// Root's home, when it is not the home (root with `HOME` elsewhere, as a CI job sets it),
/// is covered as the home is: a key kept there is not read or written, and its toolchains
/// still run.
#[test]
fn roots_home_elsewhere_shows_its_toolchains_and_nothing_else() {
    if !is_root() {
        common::skip("only root keeps a home in /root");
        return;
    }
    let Some(home) = Home::new() else {
        common::skip("no /var/tmp here");
        return;
    };
    let s = Scratch::new();
    let mut report = s.corral(&["sandbox", "report"]);
    corral_in(&mut report, &home);
    let report = text(&report.output().unwrap().stdout);
    if !covers_home(&report) {
        common::skip("the box cannot cover the home here (no mount_setattr)");
        return;
    }
    assert!(report.contains("/root (root's) likewise"), "{report}");
    /// Removed however the test ends.
    struct Planted(PathBuf);
    impl Drop for Planted {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }
    let secret = Planted(PathBuf::from(format!(
        "/root/.corral-test-key-{}",
        std::process::id()
    )));
    std::fs::write(&secret.0, "ROOT-SECRET\n").unwrap();
    std::fs::set_permissions(&secret.0, std::fs::Permissions::from_mode(0o600)).unwrap();
    let key = secret.0.display().to_string();
    // A toolchain of root's: rustup's, where it is, else whatever `.cargo` holds.
    let toolchain = if std::path::Path::new("/root/.rustup").is_dir() {
        "RUSTUP_HOME=/root/.rustup /root/.cargo/bin/rustc --version >/dev/null && echo toolchain-ran"
    } else {
        "echo toolchain-ran"
    };
    let line = format!("cat {key} 2>/dev/null; echo box-wrote > {key}; ls -a /root; {toolchain}");
    let mut cmd = s.corral(&[
        "exec",
        "--sandbox",
        "workspace-write",
        "--yes",
        "--",
        "sh",
        "-c",
        &line,
    ]);
    corral_in(&mut cmd, &home);
    let out = cmd.output().unwrap();
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(
        !stdout.contains("ROOT-SECRET"),
        "root's key was read: {stdout}"
    );
    assert!(stdout.contains("toolchain-ran"), "{stdout}{stderr}");
    // Its configuration comes as derived copies (`~/.npmrc` without its tokens), its
    // shell's files not at all.
    assert!(
        !stdout.contains(".bashrc") && !stdout.contains(".bash_history"),
        "more than the toolchains of /root is seen: {stdout}"
    );
    assert_eq!(
        std::fs::read_to_string(&secret.0).unwrap(),
        "ROOT-SECRET\n",
        "the box wrote root's home"
    );
}
