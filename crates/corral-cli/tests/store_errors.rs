//! An unreadable or corrupt store is a clear error naming its path, never a silent new
//! database.

use crate::common;

use common::{Scratch, text};

#[test]
fn a_corrupt_store_is_named_and_left_alone() {
    let s = Scratch::new();
    std::fs::create_dir_all(s.store().parent().unwrap()).unwrap();
    let garbage = b"this is not a database, it is a grocery list\n".repeat(200);
    std::fs::write(s.store(), &garbage).unwrap();

    let out = s.output(&["exec", "--", "true"]);
    assert_eq!(out.status.code(), Some(125));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(&s.store().display().to_string()),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read(s.store()).unwrap(),
        garbage,
        "the file must not be touched"
    );

    let out = s.output(&["trace", "runs"]);
    assert_eq!(out.status.code(), Some(125));
}

#[test]
fn reading_a_missing_store_says_where_it_looked() {
    let s = Scratch::new();
    let out = s.output(&["trace", "runs"]);
    // The request named a store that is not there: its fault (2), not corral's (125).
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains(&s.store().display().to_string()),
        "{}",
        text(&out.stderr)
    );
    assert!(!s.store().exists(), "reading must not create a store");
}
