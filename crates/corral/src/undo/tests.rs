use std::path::Path;

use super::walk::{Budget, Options};

const OPTIONS: Options = Options {
    budget: walk::BUDGET,
    git_refs: false,
};
use super::*;

fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn paths(tree: &Tree) -> Vec<String> {
    tree.keys()
        .map(|p| String::from_utf8_lossy(p).into_owned())
        .collect()
}

#[test]
fn a_plain_directory_leaves_out_build_output() {
    let (ws, state) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    write(ws.path(), "src/a.rs", "a");
    write(ws.path(), "target/debug/x", "x");
    write(ws.path(), "web/node_modules/p/i.js", "p");
    let recorder = Recorder::new(state.path(), ws.path(), false);
    let tree = recorder.record().unwrap();
    assert_eq!(paths(&tree), ["src/a.rs"]);
}

#[test]
fn a_gitignore_planted_after_the_first_record_does_not_empty_the_next() {
    let (ws, state) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    std::fs::create_dir(ws.path().join(".git")).unwrap();
    write(ws.path(), ".gitignore", "*.log\n");
    write(ws.path(), "src/a.rs", "a");
    write(ws.path(), "run.log", "log");
    let recorder = Recorder::new(state.path(), ws.path(), false);
    assert_eq!(
        paths(&recorder.record().unwrap()),
        [".gitignore", "src/a.rs"]
    );
    write(ws.path(), ".gitignore", "*\n");
    write(ws.path(), "src/b.rs", "b");
    assert_eq!(
        paths(&recorder.record().unwrap()),
        [".gitignore", "src/a.rs", "src/b.rs"]
    );
    // A new run reads the planted rules, but what was recorded stays recorded.
    let next = Recorder::new(state.path(), ws.path(), false);
    assert_eq!(
        paths(&next.record().unwrap()),
        [".gitignore", "src/a.rs", "src/b.rs"]
    );
}

#[test]
fn an_unchanged_workspace_reads_no_file_and_a_changed_one_only_what_changed() {
    let (ws, state) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    for i in 0..20 {
        write(ws.path(), &format!("f{i}"), &format!("{i}"));
    }
    let recorder = Recorder::new(state.path(), ws.path(), false);
    let first = recorder.record().unwrap();
    let mut rules = rules::Rules::new(ws.path());
    let blobs = store::Blobs::new(state.path().join("blobs"));
    let sets = crate::sandbox::sets::Sets::default();
    let scope = walk::Scope {
        root: ws.path(),
        sets: &sets,
    };
    let again = walk::walk(scope, &mut rules, None, &first, &blobs, OPTIONS).unwrap();
    assert_eq!(again.read, 0);
    write(ws.path(), "f3", "changed, and longer");
    let changed = walk::walk(scope, &mut rules, None, &first, &blobs, OPTIONS).unwrap();
    assert_eq!(changed.read, 1);
    let rows = step_files(&first, &Arc::new(changed.tree));
    assert_eq!(rows.len(), 1);
    assert_eq!(
        (rows[0].path.as_slice(), rows[0].change.as_str()),
        (&b"f3"[..], "modified")
    );
    assert!(blobs.has(&rows[0].before.as_ref().unwrap().0));
}

#[test]
fn a_workspace_over_budget_is_said_once_and_nothing_is_stored() {
    let (ws, state) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    for i in 0..5 {
        write(ws.path(), &format!("f{i}"), "x");
    }
    let recorder = Recorder::new(state.path(), ws.path(), false).with_budget(Budget {
        files: 3,
        bytes: 1 << 20,
        store_bytes: None,
    });
    assert!(recorder.record().is_none());
    assert!(recorder.untold().unwrap().contains("cannot be undone"));
    assert!(recorder.untold().is_none());
    assert!(!state.path().join("blobs").exists());
}

#[test]
fn a_record_with_nothing_changed_since_is_the_last_one_and_a_change_is_seen() {
    let (ws, state) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    write(ws.path(), "src/deep/a.rs", "a");
    let recorder = Recorder::new(state.path(), ws.path(), false);
    let first = recorder.record().unwrap();
    let again = recorder.record().unwrap();
    assert!(
        Arc::ptr_eq(&first, &again),
        "nothing changed, nothing walked"
    );
    write(ws.path(), "src/deep/a.rs", "changed deep down");
    let changed = recorder.record().unwrap();
    assert!(!Arc::ptr_eq(&first, &changed));
    assert_ne!(
        changed[b"src/deep/a.rs".as_slice()].hash,
        first[b"src/deep/a.rs".as_slice()].hash
    );
}

#[test]
fn a_record_of_the_directories_that_changed_is_the_record_of_the_whole() {
    let (ws, state) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    for rel in [
        "top",
        "a/one",
        "a/b/two",
        "a/b/c/three",
        "d/four",
        "d/e/five",
    ] {
        write(ws.path(), rel, rel);
    }
    std::fs::create_dir_all(ws.path().join("d/hollow")).unwrap();
    std::fs::create_dir_all(ws.path().join("a/gone")).unwrap();
    let recorder = Recorder::new(state.path(), ws.path(), false);
    let first = recorder.record().unwrap();
    assert_eq!(first[b"d/hollow".as_slice()].hash, kind::DIR_HASH);
    write(ws.path(), "d/hollow/filled", "no longer empty");
    std::fs::remove_dir(ws.path().join("a/gone")).unwrap();
    std::fs::create_dir_all(ws.path().join("a/b/made")).unwrap();
    std::os::unix::fs::symlink("../top", ws.path().join("a/link")).unwrap();
    write(ws.path(), "a/b/new", "new");
    write(ws.path(), "top", "changed");
    std::fs::remove_file(ws.path().join("a/one")).unwrap();
    std::fs::remove_dir_all(ws.path().join("d/e")).unwrap();
    std::fs::rename(ws.path().join("a/b/c"), ws.path().join("moved")).unwrap();
    write(ws.path(), "moved/later", "later");
    let partial = recorder.record().unwrap();
    let whole = Recorder::new(tempfile::tempdir().unwrap().path(), ws.path(), false)
        .record()
        .unwrap();
    assert_eq!(paths(&partial), paths(&whole));
    for (p, e) in whole.iter() {
        assert_eq!((&partial[p].hash, partial[p].mode), (&e.hash, e.mode));
    }
    assert!(partial.contains_key(b"a/b/made".as_slice()));
    assert!(!partial.contains_key(b"d/hollow".as_slice()));
    // And a change inside the moved directory is seen where it now is.
    write(ws.path(), "moved/three", "rewritten");
    let again = recorder.record().unwrap();
    assert_ne!(
        again[b"moved/three".as_slice()].hash,
        partial[b"moved/three".as_slice()].hash
    );
}

#[test]
fn a_symlink_is_recorded_as_its_text_never_what_it_points_at() {
    let (ws, state) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("secret");
    std::fs::write(&secret, "the secret outside").unwrap();
    std::os::unix::fs::symlink(&secret, ws.path().join("escape")).unwrap();
    std::os::unix::fs::symlink(outside.path(), ws.path().join("into")).unwrap();
    std::fs::create_dir(ws.path().join("empty")).unwrap();
    let recorder = Recorder::new(state.path(), ws.path(), false);
    let tree = recorder.record().unwrap();
    // The link to a directory is not entered: nothing under it is recorded.
    assert_eq!(paths(&tree), ["empty", "escape", "into"]);
    let escape = &tree[b"escape".as_slice()];
    assert_eq!(kind::Kind::of(escape.mode), kind::Kind::Link);
    assert_eq!(
        kind::Kind::of(tree[b"empty".as_slice()].mode),
        kind::Kind::Dir
    );
    let blobs = store::Blobs::new(state.path().join("blobs"));
    assert_eq!(
        blobs.get(&escape.hash).unwrap(),
        secret.as_os_str().as_encoded_bytes()
    );
    // No blob holds what the link points at.
    let mut stack = vec![state.path().join("blobs")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                assert_ne!(std::fs::read(&path).unwrap(), b"the secret outside");
            }
        }
    }
}

#[test]
fn a_prune_cannot_take_the_store_while_a_record_holds_it() {
    let state = tempfile::tempdir().unwrap();
    let record = super::store::Held::take(state.path(), false, true).unwrap();
    assert!(record.is_some());
    // Another record may walk beside it; a prune may not sweep under either.
    let other = super::store::Held::take(state.path(), false, false).unwrap();
    assert!(other.is_some());
    assert!(
        super::store::Held::take(state.path(), true, false)
            .unwrap()
            .is_none()
    );
    drop((record, other));
    assert!(
        super::store::Held::take(state.path(), true, false)
            .unwrap()
            .is_some()
    );
}

#[test]
fn corrals_own_files_in_the_workspace_are_neither_recorded_nor_a_change() {
    let ws = tempfile::tempdir().unwrap();
    let root = ws.path().canonicalize().unwrap();
    write(&root, "src/a.rs", "a");
    // The trace, its log and its undo store beside the workspace's files.
    let own = [
        root.join("trace.db"),
        root.join("trace.db-wal"),
        root.join("undo"),
    ];
    write(&root, "trace.db", "sqlite");
    let recorder = Recorder::new(&root.join("undo"), &root, false).leaving_out(&own);
    let first = recorder.record().unwrap();
    assert_eq!(paths(&first), ["src/a.rs"]);
    // The trace's log written (as at every call), a record made: the same record.
    write(&root, "trace.db-wal", "a frame");
    write(&root, "trace.db", "sqlite, grown");
    let again = recorder.record().unwrap();
    assert!(Arc::ptr_eq(&first, &again), "{:?}", paths(&again));
    // A real change beside them is still seen.
    write(&root, "b.txt", "b");
    assert_eq!(paths(&recorder.record().unwrap()), ["b.txt", "src/a.rs"]);
}

/// With git's data recorded (`git_write`), a change under `.git` walks only the
/// directories of `refs/` and `logs/` that changed, and what it records is what a whole
/// walk records; an `index` rewritten with the same content (a `git status` stat
/// refresh: a new inode and times, the same checksum) is no change (issue 64).
#[test]
fn a_record_of_the_git_directories_that_changed_is_the_record_of_the_whole() {
    let (ws, state) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let root = ws.path();
    write(root, "src/a.rs", "a");
    write(root, ".git/HEAD", "ref: refs/heads/main\n");
    write(root, ".git/refs/heads/main", "1111\n");
    for i in 0..10 {
        write(root, &format!(".git/refs/heads/many/b{i}"), "1111\n");
    }
    write(root, ".git/logs/HEAD", "one\n");
    write(root, ".git/logs/refs/heads/main", "one\n");
    write(root, ".git/objects/ab/cdef", "object");
    let index: Vec<u8> = b"DIRC".iter().copied().chain(1..=40u8).collect();
    std::fs::write(root.join(".git/index"), &index).unwrap();
    let recorder = Recorder::new(state.path(), root, true);
    let first = recorder.record().unwrap();
    assert!(first.contains_key(b".git/refs/heads/many/b3".as_slice()));
    assert!(first.contains_key(b".git/index".as_slice()));
    assert!(!first.contains_key(b".git/objects/ab/cdef".as_slice()));
    // The same index, a new file.
    std::fs::write(root.join(".git/index.tmp"), &index).unwrap();
    std::fs::rename(root.join(".git/index.tmp"), root.join(".git/index")).unwrap();
    let refreshed = recorder.record().unwrap();
    assert!(
        Arc::ptr_eq(&first, &refreshed),
        "a stat refresh is no change"
    );
    // Refs moved, made in a new directory, deleted; a reflog appended; HEAD moved.
    write(root, ".git/refs/heads/many/b1", "2222\n");
    write(root, ".git/refs/heads/new/x", "2222\n");
    std::fs::remove_file(root.join(".git/refs/heads/many/b2")).unwrap();
    write(root, ".git/logs/refs/heads/main", "one\ntwo\n");
    write(root, ".git/HEAD", "ref: refs/heads/new/x\n");
    write(root, ".git/objects/12/3456", "another object");
    let partial = recorder.record().unwrap();
    let whole = Recorder::new(tempfile::tempdir().unwrap().path(), root, true)
        .record()
        .unwrap();
    assert_eq!(paths(&partial), paths(&whole));
    for (p, e) in whole.iter() {
        assert_eq!(&partial[p].hash, &e.hash, "{}", String::from_utf8_lossy(p));
    }
    assert!(partial.contains_key(b".git/refs/heads/new/x".as_slice()));
    assert!(!partial.contains_key(b".git/refs/heads/many/b2".as_slice()));
    // A changed index is stored again.
    let mut changed = index.clone();
    *changed.last_mut().unwrap() = 99;
    std::fs::write(root.join(".git/index"), &changed).unwrap();
    let again = recorder.record().unwrap();
    assert_ne!(
        again[b".git/index".as_slice()].hash,
        partial[b".git/index".as_slice()].hash
    );
}
