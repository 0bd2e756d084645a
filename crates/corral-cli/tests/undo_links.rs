//! Symlinks and empty directories in the record: a link is recorded as its text, never
//! followed (a link out of the workspace is never read into the store), and comes back
//! as a link; undo never writes through one a call put in a file's or a directory's
//! place; an empty directory a call removed comes back.

use crate::common::{Scratch, text};
use crate::undo_common::stored_anywhere;

#[test]
fn links_come_back_as_links_and_undo_never_writes_through_one() {
    let s = Scratch::new();
    let ws = s.workspace();
    let outside = s.dir.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    let secret = outside.join("secret");
    std::fs::write(&secret, "SECRET-7f3a outside the workspace\n").unwrap();
    std::fs::create_dir_all(ws.join("src")).unwrap();
    std::fs::write(ws.join("src/lib.rs"), "pub fn a() {}\n").unwrap();
    std::fs::write(ws.join("notes.txt"), "mine\n").unwrap();
    std::fs::create_dir(ws.join("empty")).unwrap();
    std::os::unix::fs::symlink(&secret, ws.join("escape")).unwrap();

    let line = format!(
        "rm escape && rmdir empty && rm notes.txt && ln -s {secret} notes.txt && \
         ln -s {secret} fresh && rm -r src && ln -s {outside} src",
        secret = secret.display(),
        outside = outside.display()
    );
    let out = s.output(&["shell", &line]);
    assert!(
        out.status.success(),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    assert!(!ws.join("empty").exists());
    let undo_store = s.dir.path().join("state/undo");
    assert!(undo_store.is_dir());
    assert!(
        !stored_anywhere(&undo_store, b"SECRET-7f3a"),
        "a link's target was read into the store"
    );

    let out = s.output(&["undo"]);
    assert!(
        out.status.success(),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    // The link is a link again, to the same text.
    assert_eq!(std::fs::read_link(ws.join("escape")).unwrap(), secret);
    // What the call made links is as it was, and nothing was written through them.
    assert!(
        std::fs::symlink_metadata(ws.join("notes.txt"))
            .unwrap()
            .is_file()
    );
    assert_eq!(std::fs::read(ws.join("notes.txt")).unwrap(), b"mine\n");
    assert!(std::fs::symlink_metadata(ws.join("src")).unwrap().is_dir());
    assert_eq!(
        std::fs::read(ws.join("src/lib.rs")).unwrap(),
        b"pub fn a() {}\n"
    );
    assert_eq!(
        std::fs::read(&secret).unwrap(),
        b"SECRET-7f3a outside the workspace\n"
    );
    let names: Vec<_> = std::fs::read_dir(&outside)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["secret"], "undo wrote outside the workspace");
    // A link the call made is removed, not what it points at.
    assert!(std::fs::symlink_metadata(ws.join("fresh")).is_err());
    assert!(secret.exists());
    // The empty directory it removed is back.
    assert!(
        std::fs::symlink_metadata(ws.join("empty"))
            .unwrap()
            .is_dir()
    );
}

#[test]
fn an_empty_directory_a_call_made_is_removed_and_one_it_filled_is_kept() {
    let s = Scratch::new();
    let ws = s.workspace();
    std::fs::create_dir(ws.join("hollow")).unwrap();
    std::fs::write(ws.join("keep.txt"), "keep\n").unwrap();
    let out = s.output(&["shell", "mkdir made && echo in > hollow/file"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = s.output(&["undo"]);
    assert!(
        out.status.success(),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    assert!(!ws.join("made").exists());
    assert!(!ws.join("hollow/file").exists());
    assert!(
        std::fs::symlink_metadata(ws.join("hollow"))
            .unwrap()
            .is_dir()
    );
}
