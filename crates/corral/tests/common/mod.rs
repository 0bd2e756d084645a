//! The prelude every integration test shares: a fresh workspace and store, and the
//! hermetic helper program.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

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

#[allow(unused_imports)]
pub use corral_test_support::{cleanup, marker, processes_with, survivors_after, wait_for};
