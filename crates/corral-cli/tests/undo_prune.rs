//! `corral trace prune` gives up the undo records of old runs, and removes the stored
//! content no kept record names; the last call can still be undone.

use std::path::Path;

use crate::common::{Scratch, text};

/// Whether any file under `dir` is `bytes`.
fn stored(dir: &Path, bytes: &[u8]) -> bool {
    std::fs::read_dir(dir).unwrap().flatten().any(|e| {
        let path = e.path();
        if path.is_dir() {
            stored(&path, bytes)
        } else {
            std::fs::read(&path).is_ok_and(|b| b == bytes)
        }
    })
}

#[test]
fn prune_gives_up_old_runs_records_and_what_only_they_named() {
    let s = Scratch::new();
    for text in ["one", "two", "three"] {
        let out = s.output(&["shell", &format!("echo {text} > a.txt")]);
        assert!(out.status.success(), "{}", crate::common::text(&out.stderr));
    }
    let blobs = s.dir.path().join("state/undo/blobs");
    assert!(stored(&blobs, b"one\n"));
    let out = s.output(&["trace", "prune", "--undo-keep-runs", "1"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("gave up the undo records of 2 runs"),
        "{}",
        text(&out.stdout)
    );
    assert!(!stored(&blobs, b"one\n"));
    assert!(stored(&blobs, b"two\n"));
    let out = s.output(&["undo"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        std::fs::read(s.workspace().join("a.txt")).unwrap(),
        b"two\n"
    );
}
