//! The prelude every integration test shares: a fresh workspace and store, and the
//! hermetic helper program.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use corral::{Config, Run};

/// A workspace and a trace store in a temporary directory, removed when dropped.
pub struct Fixture {
    pub dir: tempfile::TempDir,
}

impl Fixture {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("ws")).unwrap();
        Self { dir }
    }

    pub fn workspace(&self) -> PathBuf {
        self.dir.path().join("ws")
    }

    pub fn store(&self) -> PathBuf {
        self.dir.path().join("state").join("trace.db")
    }

    pub fn run(&self) -> Run {
        self.run_with(Config::default())
    }

    /// A run that allows whatever no rule denies: these tests are about running.
    pub fn run_with(&self, config: Config) -> Run {
        Run::builder(self.workspace())
            .store(self.store())
            .config(config)
            .policy(corral::Policy::permissive())
            .open()
            .unwrap()
    }
}

/// The path of `corral-testbin`, built on first use when this test runs without the rest
/// of the workspace (e.g. `cargo test -p corral`).
pub fn testbin() -> String {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        // tests run from target/<profile>/deps/; the helper lives in target/<profile>/.
        let exe = std::env::current_exe().unwrap();
        let profile_dir = exe.parent().and_then(Path::parent).unwrap().to_path_buf();
        let bin = profile_dir.join("corral-testbin");
        if !bin.exists() {
            let status = std::process::Command::new(env!("CARGO"))
                .args(["build", "-p", "test-bins", "--bin", "corral-testbin"])
                .status()
                .unwrap();
            assert!(status.success(), "building corral-testbin failed");
        }
        bin
    })
    .display()
    .to_string()
}

/// A marker unique to this test, for finding its processes from outside.
pub fn marker(name: &str) -> String {
    format!(
        "corral-test-{name}-{}-{}",
        std::process::id(),
        corral_nanos()
    )
}

fn corral_nanos() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos()
}

/// Pids of live (non-zombie) processes whose command line contains `marker`.
pub fn processes_with(marker: &str) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
            continue;
        };
        if !String::from_utf8_lossy(&cmdline).contains(marker) {
            continue;
        }
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let state = stat
            .rsplit_once(')')
            .and_then(|(_, r)| r.split_whitespace().next())
            .unwrap_or("");
        if state != "Z" && state != "X" {
            found.push(pid);
        }
    }
    found
}

/// Wait up to `limit` for no process to carry `marker`; return the survivors.
pub fn survivors_after(marker: &str, limit: Duration) -> Vec<u32> {
    let until = Instant::now() + limit;
    loop {
        let left = processes_with(marker);
        if left.is_empty() || Instant::now() > until {
            return left;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Kill whatever carries `marker`, so a failing test leaves nothing behind.
pub fn cleanup(marker: &str) {
    for pid in processes_with(marker) {
        let _ = std::process::Command::new("kill")
            .args(["-9", &pid.to_string()])
            .status();
    }
}
