//! A box leaves no set-user-ID or set-group-ID file for the host: a root box's set-ID copy
//! of a shell is a root shell for every other user of the machine (an ordinary user's, a
//! shell as that user). Judged by the file's mode from outside the box, as root and as an
//! ordinary user; ordinary modes, copies, archives and git still work.

use crate::common;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::Duration;

use common::Fixture;
use corral::{Config, ExecRequest, Outcome, Run, sandbox::SandboxConfig, sandbox::SandboxMode};

const SET_ID: u32 = 0o6000;

fn boxed(fx: &Fixture) -> Run {
    fx.approving_run(Config {
        sandbox: SandboxConfig::mode(SandboxMode::WorkspaceWrite),
        ..Config::default()
    })
}

fn sh(run: &Run, script: &str) -> Outcome {
    run.exec(&ExecRequest::new(["sh", "-c", script]).timeout(Duration::from_secs(60)))
        .unwrap()
}

/// The permission bits of `path`, not following a link; `None` when it is not there.
fn mode(path: &Path) -> Option<u32> {
    std::fs::symlink_metadata(path)
        .ok()
        .map(|m| m.permissions().mode() & 0o7777)
}

fn set_mode(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// A set-ID file the person has, which a call may read: made by the test, outside the box.
fn theirs(ws: &Path) -> std::path::PathBuf {
    let dir = ws.join("theirs");
    std::fs::create_dir_all(&dir).unwrap();
    let tool = dir.join("tool");
    std::fs::copy("/bin/sh", &tool).unwrap();
    set_mode(&tool, 0o6755);
    assert_eq!(
        mode(&tool),
        Some(0o6755),
        "the test could not make its set-ID file"
    );
    tool
}

#[test]
fn set_id_modes_leave_no_set_id_file() {
    if !common::layer_enforced(corral::sandbox::Layer::Seccomp) {
        return;
    }
    let fx = Fixture::new();
    let ws = fx.workspace();
    let tool = theirs(&ws);
    // An archive holding a set-ID entry, made outside the box.
    let status = std::process::Command::new("tar")
        .args(["cf", "setid.tar", "-C", "theirs", "tool"])
        .current_dir(&ws)
        .status()
        .unwrap();
    assert!(status.success());
    let run = boxed(&fx);
    let python = Path::new("/usr/bin/python3").exists();
    // Each script, the path it would leave set-ID, and whether the path is left at all
    // (the file is made, then its mode refused), which shows the script ran in the box.
    let cases: &[(&str, &str, bool)] = &[
        ("a", "cp /bin/sh a && chmod 4755 a", true),
        ("b", "cp /bin/sh b && chmod 4755,g+s b", true),
        ("c", "cp /bin/sh c && chmod u+s c", true),
        ("d", "cp /bin/sh d && chmod g+s d", true),
        ("e", "install -m 4755 /bin/sh e", true),
        ("f", "cp -p theirs/tool f", true),
        ("g", "cp -a theirs/tool g", true),
        ("h", "mkdir -m 2755 h", false),
        ("i", "mkdir i && chmod 2755 i", true),
        ("j/tool", "mkdir j && tar xpf setid.tar -C j", true),
        (
            "k",
            "/usr/bin/python3 -c 'import os; os.close(os.open(\"k\", os.O_CREAT|os.O_WRONLY, 0o4755))'",
            false,
        ),
        (
            "l",
            "/usr/bin/python3 -c 'import os; fd = os.open(\"l\", os.O_CREAT|os.O_WRONLY, 0o755); \
             os.fchmod(fd, 0o6755)'",
            true,
        ),
    ];
    for (path, script, made) in cases {
        if script.starts_with("/usr/bin/python3") && !python {
            continue;
        }
        let r = sh(&run, script);
        let left = mode(&ws.join(path));
        assert!(
            left.is_none_or(|m| m & SET_ID == 0),
            "`{script}` left {path} with mode {:o}: {}",
            left.unwrap_or_default(),
            r.observation
        );
        assert_eq!(left.is_some(), *made, "`{script}`: {}", r.observation);
        assert!(
            !r.status.success(),
            "`{script}` succeeded: {}",
            r.observation
        );
        if path.starts_with('a') {
            let report = r.sandbox.clone().unwrap();
            let seccomp = report
                .layers
                .iter()
                .find(|l| l.layer == corral::sandbox::Layer::Seccomp)
                .unwrap();
            assert!(seccomp.detail.contains("set-ID modes"), "{seccomp:?}");
        }
    }
    // The person's own set-ID file is theirs: the box read it and left it as it was.
    assert_eq!(mode(&tool), Some(0o6755));
}

#[test]
fn ordinary_modes_archives_and_git_still_work() {
    if !common::layer_enforced(corral::sandbox::Layer::Seccomp) {
        return;
    }
    let fx = Fixture::new();
    let ws = fx.workspace();
    std::fs::create_dir(ws.join("tree")).unwrap();
    std::fs::write(ws.join("tree/file"), "x").unwrap();
    set_mode(&ws.join("tree/file"), 0o640);
    let made = |args: &[&str]| {
        let status = std::process::Command::new(args[0])
            .args(&args[1..])
            .current_dir(&ws)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .status()
            .unwrap();
        assert!(status.success(), "{args:?}");
    };
    made(&["tar", "cf", "tree.tar", "tree"]);
    made(&["git", "init", "-q", "origin"]);
    std::fs::write(ws.join("origin/README"), "hello").unwrap();
    made(&["git", "-C", "origin", "add", "README"]);
    made(&[
        "git",
        "-C",
        "origin",
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@example.com",
        "commit",
        "-qm",
        "first",
    ]);
    let run = boxed(&fx);
    let cases: &[(&str, &str, u32)] = &[
        ("a", "cp /bin/sh a && chmod 755 a", 0o755),
        ("b", "printf x > b && chmod +x b", 0o755),
        ("c", "cp tree/file c", 0o640),
        ("d", "cp -p tree/file d", 0o640),
        ("e", "install -m 755 /bin/sh e", 0o755),
        ("f/g/h", "mkdir -p f/g/h && chmod 755 f/g/h", 0o755),
        ("x/tree/file", "mkdir x && tar xf tree.tar -C x", 0o640),
        ("y/.git/HEAD", "git init -q y", 0o644),
        ("z/README", "git clone -q origin z", 0o644),
        ("w", "printf x > w && chmod 1777 w", 0o1777),
    ];
    for (path, script, want) in cases {
        let r = sh(&run, script);
        assert!(r.status.success(), "`{script}` failed: {}", r.observation);
        assert_eq!(mode(&ws.join(path)), Some(*want), "`{script}`");
    }
}
