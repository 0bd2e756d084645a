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
            );
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
    bin.display().to_string()
}
