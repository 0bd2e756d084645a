//! Shared by the CLI tests: a scratch workspace and store, and ways to run `corral`.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub struct Scratch {
    pub dir: tempfile::TempDir,
}

impl Scratch {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("ws")).unwrap();
        Self { dir }
    }

    pub fn workspace(&self) -> PathBuf {
        self.dir.path().join("ws")
    }

    pub fn store(&self) -> PathBuf {
        self.dir.path().join("state/trace.db")
    }

    /// `corral ARGS` in the workspace with this scratch's store and trust store.
    pub fn corral(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_corral"));
        cmd.args(args)
            .current_dir(self.workspace())
            .env("CORRAL_STORE", self.store())
            .env(
                "CORRAL_TRUST_STORE",
                self.dir.path().join("state/trusted-policies"),
            )
            .env("XDG_CACHE_HOME", self.dir.path().join("cache"));
        cmd
    }

    pub fn output(&self, args: &[&str]) -> Output {
        self.corral(args).output().unwrap()
    }
}

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `corral-testbin`, built beside `corral` in the same target directory.
pub fn testbin() -> String {
    let corral = Path::new(env!("CARGO_BIN_EXE_corral"));
    let bin = corral.with_file_name("corral-testbin");
    if !bin.exists() {
        let status = Command::new(env!("CARGO"))
            .args(["build", "-p", "test-bins", "--bin", "corral-testbin"])
            .status()
            .unwrap();
        assert!(status.success());
    }
    // Boxed calls see neither a checkout in a home (the tests give corral a HOME of their
    // own) nor one under /tmp (the box has its own): a copy in the scratch root.
    static COPY: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    COPY.get_or_init(|| corral_test_support::runnable_copy(&bin))
        .display()
        .to_string()
}

/// The unprivileged user the tests run corral as when they run as root: `nobody`.
pub const UNPRIVILEGED: u32 = 65534;

/// A scratch for corral run as an ordinary user, as most people run it: as root, its
/// directories are handed to [`UNPRIVILEGED`] and `corral` is started through
/// `setpriv --reuid --regid --clear-groups`; as anyone else, as that user. Either way
/// `HOME` and the XDG directories are the scratch's own.
pub struct UserScratch {
    pub s: Scratch,
}

impl UserScratch {
    /// `None` (with the reason printed) where this root cannot become another user.
    pub fn new() -> Option<Self> {
        let s = Scratch::new();
        for dir in ["home", "state", "cache", "config"] {
            std::fs::create_dir_all(s.dir.path().join(dir)).unwrap();
        }
        if is_root() {
            let setpriv = Command::new("setpriv").arg("--version").output();
            if !setpriv.is_ok_and(|o| o.status.success()) {
                eprintln!("skipped: no setpriv to become an ordinary user");
                return None;
            }
            // The build must be reachable by that user (`.ci/run` sees to it; a checkout
            // under a private home is not).
            let id = UNPRIVILEGED.to_string();
            let reachable = Command::new("setpriv")
                .args(["--reuid", &id, "--regid", &id, "--clear-groups", "--"])
                .args(["test", "-x", env!("CARGO_BIN_EXE_corral")])
                .status()
                .is_ok_and(|s| s.success());
            if !reachable {
                eprintln!(
                    "skipped: uid {UNPRIVILEGED} cannot reach {}",
                    env!("CARGO_BIN_EXE_corral")
                );
                return None;
            }
            chown_tree(s.dir.path(), UNPRIVILEGED);
        }
        Some(Self { s })
    }

    pub fn workspace(&self) -> PathBuf {
        self.s.workspace()
    }

    /// `corral ARGS` as the ordinary user, in the workspace, with the scratch's home,
    /// store and trust store.
    pub fn corral(&self, args: &[&str]) -> Command {
        let root = self.s.dir.path();
        let mut cmd = if is_root() {
            let id = UNPRIVILEGED.to_string();
            let mut cmd = Command::new("setpriv");
            cmd.args(["--reuid", &id, "--regid", &id, "--clear-groups", "--"])
                .arg(env!("CARGO_BIN_EXE_corral"));
            cmd
        } else {
            Command::new(env!("CARGO_BIN_EXE_corral"))
        };
        cmd.args(args)
            .current_dir(self.workspace())
            .env("HOME", root.join("home"))
            .env("XDG_STATE_HOME", root.join("state"))
            .env("XDG_CACHE_HOME", root.join("cache"))
            .env("XDG_CONFIG_HOME", root.join("config"))
            .env("CORRAL_STORE", root.join("state/trace.db"))
            .env("CORRAL_TRUST_STORE", root.join("state/trusted-policies"));
        cmd
    }
}

pub fn is_root() -> bool {
    // The real uid, as a test process started by root has it.
    std::fs::read_to_string("/proc/self/status").is_ok_and(|s| {
        s.lines()
            .find_map(|l| l.strip_prefix("Uid:"))
            .and_then(|ids| ids.split_whitespace().next().map(|id| id == "0"))
            .unwrap_or(false)
    })
}

pub fn chown_tree(path: &Path, uid: u32) {
    std::os::unix::fs::lchown(path, Some(uid), Some(uid)).unwrap();
    if path.is_dir() && !path.is_symlink() {
        for entry in std::fs::read_dir(path).unwrap() {
            chown_tree(&entry.unwrap().path(), uid);
        }
    }
}

/// Wait for `child` until `within`, killing it and failing the test if it is still there
/// then: a bound on a hang, not a measure of speed.
pub fn wait_bounded(
    child: &mut std::process::Child,
    within: std::time::Duration,
    what: &str,
) -> std::process::ExitStatus {
    let until = std::time::Instant::now() + within;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if std::time::Instant::now() > until {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what} did not end within {within:?}: it hung");
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// Skip a test this host cannot run, saying why, or fail it where `.ci/run` said the host
/// has what it needs (`CORRAL_TEST_EXPECT_CONTAINMENT=1`, as root with cgroups and PID
/// namespaces).
pub fn skip(why: &str) {
    if std::env::var_os("CORRAL_TEST_EXPECT_CONTAINMENT").is_some_and(|v| v == "1") {
        panic!("{why}, but CORRAL_TEST_EXPECT_CONTAINMENT=1 says this host has it");
    }
    eprintln!("skipped: {why}");
}

/// Whether a call's processes get a cgroup or a PID namespace here, through which the next
/// corral ends what a SIGKILLed one left: as root, or in a delegated cgroup. Where they
/// do not (an ordinary user), a grandchild that outlives a killed corral's direct child
/// is beyond reach, and the test is skipped through [`skip`].
pub fn leftovers_of_a_killed_corral_are_reachable(s: &Scratch) -> bool {
    let out = s.output(&["exec", "--json", "--", "true"]);
    let outcome: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    let containment = outcome["containment"].as_str().unwrap_or_default();
    if containment.contains("cgroup") || containment.contains("pid-ns") {
        return true;
    }
    skip(&format!(
        "needs root or a delegated cgroup: containment here is {containment:?}, and a \
         killed corral's grandchildren are beyond the next corral's reach"
    ));
    false
}

/// A server said the box is not whole here (`instructions`, its first words): a failure
/// where `.ci/run` found the namespaces this process's user may make (root's, or a user
/// namespace for anyone else), since then it is.
pub fn not_expecting_a_whole_box(instructions: &str) {
    for expected in [
        "CORRAL_TEST_EXPECT_CONTAINMENT",
        "CORRAL_TEST_EXPECT_USERNS",
    ] {
        assert!(
            std::env::var_os(expected).is_none_or(|v| v != "1"),
            "{expected}=1, yet the server asks: {instructions}"
        );
    }
}
