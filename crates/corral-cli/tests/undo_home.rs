//! A person serving their home (`--workspace ~`): the record before a call leaves out
//! every path the box hides, so the undo store never holds a copy of `~/.ssh` or `~/.aws`
//! (issue 59), and an undo of a record that held one writes nothing there.

use std::path::Path;
use std::process::{Command, Output};

use crate::common::text;
use crate::mcp_common;
use crate::undo_common::{stored, stored_anywhere};

const KEY: &[u8] = b"canary-59-home: -----BEGIN OPENSSH PRIVATE KEY-----";
const AWS: &[u8] = b"canary-59-home: aws_secret_access_key";

/// `corral ARGS` with `home` as `$HOME` and the workspace, its state in `state`.
fn corral_at_home(home: &Path, state: &Path, args: &[&str]) -> Output {
    Command::new(mcp_common::corral_bin())
        .args(args)
        .current_dir(home)
        .env("HOME", home)
        .env("CORRAL_STORE", state.join("trace.db"))
        .env("CORRAL_TRUST_STORE", state.join("trusted-policies"))
        .env_remove("CORRAL_POLICY")
        .env("XDG_CONFIG_HOME", state.join("config"))
        .env("XDG_CACHE_HOME", state.join("cache"))
        .env("XDG_STATE_HOME", state.join("xdg-state"))
        .output()
        .unwrap()
}

#[test]
fn a_home_served_as_the_workspace_keeps_its_keys_out_of_the_undo_store() {
    let scratch = tempfile::tempdir().unwrap();
    let root = scratch.path().canonicalize().unwrap();
    let (home, state) = (root.join("home"), root.join("state"));
    for (rel, bytes) in [
        (".ssh/id_ed25519", KEY),
        (".aws/credentials", AWS),
        ("src/a.rs", b"fn a() {}\n".as_slice()),
    ] {
        std::fs::create_dir_all(home.join(rel).parent().unwrap()).unwrap();
        std::fs::write(home.join(rel), bytes).unwrap();
    }
    // `mkdir` is not known-safe: the call is recorded before it runs, and after.
    let ws = home.to_str().unwrap();
    let out = corral_at_home(
        &home,
        &state,
        &[
            "exec",
            "--sandbox",
            "workspace-write",
            "--workspace",
            ws,
            "-y",
            "--",
            "mkdir",
            "-p",
            "made",
        ],
    );
    let blobs = state.join("undo/blobs");
    assert!(
        stored(&blobs, b"fn a() {}\n"),
        "the workspace was recorded: {}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    assert!(!stored_anywhere(&blobs, KEY), "~/.ssh is in the undo store");
    assert!(!stored_anywhere(&blobs, AWS), "~/.aws is in the undo store");
}
