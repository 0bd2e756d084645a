//! apply_patch applies the patches Codex's own `apply_patch` applies, to the same files,
//! and refuses the ones it refuses. Each test here is one of Codex's cases (a scenario of
//! `codex-rs/apply-patch/tests/fixtures/scenarios`, or a test of its suite, parser and
//! matcher), named in a comment and written anew: a workspace before, a patch, and the
//! whole workspace after. Where corral deliberately differs (a patch applies all of it or
//! none; it does not write over a file it was not told to replace), the test says so.

use std::collections::BTreeMap;
use std::path::Path;

use crate::common;

use common::Fixture;
use corral::patch::PatchRequest;
use corral::{Error, ErrorKind};

/// Every file under `root`, by its path relative to it, with its bytes as text.
fn files(root: &Path) -> BTreeMap<String, String> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, String>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(root, &path, out);
            } else {
                let rel = path
                    .strip_prefix(root)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                out.insert(
                    rel,
                    String::from_utf8(std::fs::read(&path).unwrap()).unwrap(),
                );
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(p, t)| (p.to_string(), t.to_string()))
        .collect()
}

/// A workspace holding `before`, `patch` applied to it: the answer, and the fixture.
fn apply(before: &[(&str, &str)], patch: &str) -> (Result<String, Error>, Fixture) {
    let fx = Fixture::new();
    for (path, text) in before {
        let p = fx.workspace().join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    let answer = fx
        .run()
        .apply_patch(&PatchRequest::new(patch))
        .map(|o| o.observation);
    (answer, fx)
}

/// `patch` applies to `before`, leaving exactly `after`.
fn applies(before: &[(&str, &str)], patch: &str, after: &[(&str, &str)]) -> String {
    let (answer, fx) = apply(before, patch);
    let said = answer.unwrap_or_else(|e| panic!("refused: {e}\npatch:\n{patch}"));
    assert_eq!(files(&fx.workspace()), map(after), "patch:\n{patch}");
    said
}

/// `patch` is refused with a message containing `says`, and the workspace is untouched.
fn refused(before: &[(&str, &str)], patch: &str, says: &str) -> String {
    let (answer, fx) = apply(before, patch);
    let err = answer.expect_err(patch);
    assert_eq!(err.kind(), ErrorKind::InvalidRequest, "{err}");
    let message = err.to_string();
    assert!(message.contains(says), "{says:?} not in: {message}");
    assert_eq!(files(&fx.workspace()), map(before), "patch:\n{patch}");
    message
}

// Scenarios 001, 002, 003, 004 and 020, the suite's add/update/delete/move tests, and the
// library's hunk tests: the four operations, alone and together.

#[test]
fn a_file_is_added_with_its_lines() {
    applies(
        &[("keep.md", "kept\n")],
        "*** Begin Patch\n*** Add File: docs/intro.md\n+# Intro\n+\n+Welcome.\n*** End Patch\n",
        &[
            ("keep.md", "kept\n"),
            ("docs/intro.md", "# Intro\n\nWelcome.\n"),
        ],
    );
}

#[test]
fn add_delete_and_update_in_one_patch() {
    let said = applies(
        &[("gone.txt", "bye\n"), ("list.txt", "apple\nbanana\n")],
        "*** Begin Patch\n*** Add File: deep/er/made.txt\n+made\n*** Delete File: gone.txt\n*** Update File: list.txt\n@@\n-banana\n+cherry\n*** End Patch",
        &[
            ("deep/er/made.txt", "made\n"),
            ("list.txt", "apple\ncherry\n"),
        ],
    );
    insta::assert_snapshot!(said, @r"
    applied the patch: 3 files changed
    A deep/er/made.txt (+1 -0)
    D gone.txt
    M list.txt (+1 -1)
    ");
}

#[test]
fn several_hunks_change_one_file_in_order() {
    applies(
        &[("n.txt", "one\ntwo\nthree\nfour\nfive\n")],
        "*** Begin Patch\n*** Update File: n.txt\n@@\n-two\n+TWO\n@@\n four\n-five\n+FIVE\n*** End Patch",
        &[("n.txt", "one\nTWO\nthree\nfour\nFIVE\n")],
    );
}

#[test]
fn a_file_moves_into_a_directory_that_does_not_exist_yet() {
    applies(
        &[("a/old.txt", "draft\n"), ("a/other.txt", "stays\n")],
        "*** Begin Patch\n*** Update File: a/old.txt\n*** Move to: b/c/new.txt\n@@\n-draft\n+final\n*** End Patch",
        &[("a/other.txt", "stays\n"), ("b/c/new.txt", "final\n")],
    );
}

#[test]
fn a_file_is_deleted() {
    applies(
        &[("old.log", "x\n"), ("new.log", "y\n")],
        "*** Begin Patch\n*** Delete File: old.log\n*** End Patch",
        &[("new.log", "y\n")],
    );
}

#[test]
fn context_and_removals_interleave_and_a_last_hunk_appends_at_the_end() {
    // The library's interleaved-changes test, and its pure addition before a removal.
    applies(
        &[("t.txt", "p\nq\nr\ns\nt\nu\n")],
        "*** Begin Patch\n*** Update File: t.txt\n@@\n p\n-q\n+Q\n@@\n r\n s\n-t\n+T\n@@\n u\n+v\n*** End of File\n*** End Patch",
        &[("t.txt", "p\nQ\nr\ns\nT\nu\nv\n")],
    );
    applies(
        &[("t.txt", "m1\nm2\nm3\n")],
        "*** Begin Patch\n*** Update File: t.txt\n@@\n+tail-1\n+tail-2\n@@\n m1\n-m2\n-m3\n+m2-new\n*** End Patch",
        &[("t.txt", "m1\nm2-new\ntail-1\ntail-2\n")],
    );
}

#[test]
fn two_sections_for_one_file_apply_in_turn_and_overlapping_ones_are_refused() {
    // Codex's two-hunks and conflict tests.
    applies(
        &[("f.txt", "l1\nl2\nl3\nl4\nl5\n")],
        "*** Begin Patch\n*** Update File: f.txt\n@@\n-l2\n+two\n*** Update File: f.txt\n@@\n-l4\n+four\n*** End Patch",
        &[("f.txt", "l1\ntwo\nl3\nfour\nl5\n")],
    );
    refused(
        &[("f.txt", "A\nB\nC\n")],
        "*** Begin Patch\n*** Update File: f.txt\n@@\n-B\n+X\n*** Update File: f.txt\n@@\n-B\n+Y\n*** End Patch",
        "hunk 1 (patch line 7) did not apply",
    );
}

#[test]
fn paths_may_be_absolute_inside_the_workspace() {
    // The parser's absolute-path test; outside the workspace corral refuses (a file tool
    // reaches only the workspace), where Codex would write.
    let fx = Fixture::new();
    std::fs::write(fx.workspace().join("in.txt"), "old\n").unwrap();
    let abs = fx.workspace().join("in.txt");
    let patch = format!(
        "*** Begin Patch\n*** Update File: {}\n@@\n-old\n+new\n*** End Patch",
        abs.display()
    );
    fx.run().apply_patch(&PatchRequest::new(patch)).unwrap();
    assert_eq!(std::fs::read_to_string(&abs).unwrap(), "new\n");
}

// Scenarios 014, 016, 019, 021 and 022; the library's unicode-dash and unified-diff tests.

#[test]
fn an_update_gives_a_file_its_missing_final_newline() {
    applies(
        &[("x.txt", "no end")],
        "*** Begin Patch\n*** Update File: x.txt\n@@\n-no end\n+an end\n+and more\n*** End Patch",
        &[("x.txt", "an end\nand more\n")],
    );
}

#[test]
fn a_hunk_of_only_additions_appends_to_the_file() {
    applies(
        &[("x.txt", "first\nsecond\n")],
        "*** Begin Patch\n*** Update File: x.txt\n@@\n+third\n+fourth\n*** End Patch",
        &[("x.txt", "first\nsecond\nthird\nfourth\n")],
    );
    // Before a last empty line, as Codex puts it.
    applies(
        &[("x.txt", "first\n\n")],
        "*** Begin Patch\n*** Update File: x.txt\n@@\n+second\n*** End Patch",
        &[("x.txt", "first\nsecond\n\n")],
    );
}

#[test]
fn text_beyond_ascii_is_matched_and_written_as_it_is() {
    applies(
        &[("u.txt", "début\nœuvre naïve\nfin\n")],
        "*** Begin Patch\n*** Update File: u.txt\n@@\n début\n-œuvre naïve\n+œuvre naïve ✔\n*** End Patch",
        &[("u.txt", "début\nœuvre naïve ✔\nfin\n")],
    );
}

#[test]
fn typographic_punctuation_in_the_file_matches_ascii_in_the_hunk() {
    // En dash, non-breaking hyphen, curly quotes, and U+205F (medium mathematical space).
    applies(
        &[(
            "p.py",
            "x = 1  # a \u{2013} b, non\u{2011}blocking, \u{201C}q\u{201D}\u{205F}end\n",
        )],
        "*** Begin Patch\n*** Update File: p.py\n@@\n-x = 1  # a - b, non-blocking, \"q\" end\n+x = 2\n*** End Patch",
        &[("p.py", "x = 2\n")],
    );
}

#[test]
fn a_hunk_of_context_and_removals_only_deletes_lines() {
    applies(
        &[("d.txt", "keep1\ndrop\nkeep2\n")],
        "*** Begin Patch\n*** Update File: d.txt\n@@\n keep1\n-drop\n keep2\n*** End Patch",
        &[("d.txt", "keep1\nkeep2\n")],
    );
}

#[test]
fn end_of_file_anchors_the_hunk_to_the_last_lines() {
    applies(
        &[("e.txt", "head\ntail\n")],
        "*** Begin Patch\n*** Update File: e.txt\n@@\n head\n-tail\n+tail, changed\n*** End of File\n*** End Patch",
        &[("e.txt", "head\ntail, changed\n")],
    );
}

#[test]
fn a_trailing_empty_context_line_the_file_lacks_still_applies() {
    // The unified-diff tests' patches end with an empty line before `*** End Patch`.
    applies(
        &[("r.txt", "alpha\nbeta\ngamma\n")],
        "*** Begin Patch\n*** Update File: r.txt\n@@\n-alpha\n+ALPHA\n beta\n\n*** End Patch",
        &[("r.txt", "ALPHA\nbeta\ngamma\n")],
    );
    applies(
        &[("r.txt", "alpha\nbeta\ngamma\n")],
        "*** Begin Patch\n*** Update File: r.txt\n@@\n alpha\n beta\n-gamma\n+GAMMA\n\n*** End Patch",
        &[("r.txt", "alpha\nbeta\nGAMMA\n")],
    );
    // Two of them, the same.
    applies(
        &[("r.txt", "alpha\nbeta\n")],
        "*** Begin Patch\n*** Update File: r.txt\n@@\n-alpha\n+ALPHA\n beta\n\n\n*** End Patch",
        &[("r.txt", "ALPHA\nbeta\n")],
    );
}

#[test]
fn lines_are_found_however_their_whitespace_differs() {
    // The matcher's tests: exact, then trailing whitespace, then surrounding whitespace.
    applies(
        &[("w.txt", "a   \n\tb\t\n    c  \n")],
        "*** Begin Patch\n*** Update File: w.txt\n@@\n a\n-b\n+B\n c\n*** End of File\n*** End Patch",
        &[("w.txt", "a   \nB\n    c  \n")],
    );
    // A hunk longer than the file is not found (and does not crash).
    refused(
        &[("w.txt", "only\n")],
        "*** Begin Patch\n*** Update File: w.txt\n@@\n only\n-too\n-many\n*** End Patch",
        "were not found",
    );
}

// Scenarios 017, 018 and the two 020s; the parser's padded-marker and blank-line cases.

#[test]
fn markers_and_headers_padded_with_spaces_are_read() {
    for patch in [
        "*** Begin Patch\n  *** Update File: s.txt\n@@\n-old\n+new\n*** End Patch",
        " *** Begin Patch\n*** Update File: s.txt\n@@\n-old\n+new\n*** End Patch ",
        "*** Begin Patch \n*** Update File: s.txt\n@@\n-old\n+new\n *** End Patch\n",
        "*** Begin Patch\n*** Update File: s.txt  \n  *** Move to: t.txt \n@@\n-old\n+new\n*** End Patch",
    ] {
        let (answer, fx) = apply(&[("s.txt", "old\n")], patch);
        answer.unwrap_or_else(|e| panic!("{patch:?}: {e}"));
        let after = files(&fx.workspace());
        assert_eq!(after.values().collect::<Vec<_>>(), ["new\n"], "{patch:?}");
    }
}

#[test]
fn blank_lines_between_hunks_and_sections_are_skipped() {
    // The library's insert-at-end-of-file test: a blank line after `*** End of File`.
    applies(
        &[("b.txt", "x\ny\nz\n"), ("c.txt", "c\n")],
        "*** Begin Patch\n*** Update File: b.txt\n\n@@\n-x\n+X\n@@\n z\n+w\n*** End of File\n\n\n*** Delete File: c.txt\n\n*** End Patch",
        &[("b.txt", "X\ny\nz\nw\n")],
    );
}

#[test]
fn an_empty_line_in_a_hunk_is_an_empty_context_line() {
    // The parser's chunk test: an `@@` line, then an empty line, context, a change.
    applies(
        &[("c.rs", "fn f() {\n\n    ctx\n    remove\n    ctx2\n}\n")],
        "*** Begin Patch\n*** Update File: c.rs\n@@ fn f() {\n\n     ctx\n-    remove\n+    add\n     ctx2\n*** End Patch",
        &[("c.rs", "fn f() {\n\n    ctx\n    add\n    ctx2\n}\n")],
    );
}

#[test]
fn a_first_hunk_may_leave_out_its_at_at_line() {
    applies(
        &[("m.py", "import os\n")],
        "*** Begin Patch\n*** Update File: m.py\n import os\n+import sys\n*** End Patch",
        &[("m.py", "import os\nimport sys\n")],
    );
}

#[test]
fn an_update_section_may_be_followed_by_an_add() {
    applies(
        &[("u.py", "a\n")],
        "*** Begin Patch\n*** Update File: u.py\n@@\n+b\n*** Add File: v.py\n+v\n*** End Patch",
        &[("u.py", "a\nb\n"), ("v.py", "v\n")],
    );
}

// Scenarios 005, 006, 007, 008, 009, 012 and 013, and the parser's malformed patches:
// refused, the workspace untouched, the message saying what to do.

#[test]
fn what_codex_refuses_is_refused() {
    let before = [("f.txt", "line\n"), ("dir/in.txt", "in\n")];
    for (patch, says) in [
        (
            "*** Begin Patch\n*** End Patch",
            "the patch changes nothing",
        ),
        (
            "*** Begin Patch\n*** Update File: f.txt\n@@\n-absent\n+present\n*** End Patch",
            "was not found",
        ),
        (
            "*** Begin Patch\n*** Delete File: nowhere.txt\n*** End Patch",
            "names a file that does not exist",
        ),
        (
            "*** Begin Patch\n*** Update File: f.txt\n*** End Patch",
            "has no hunks",
        ),
        (
            "*** Begin Patch\n*** Update File: nowhere.txt\n@@\n-a\n+b\n*** End Patch",
            "use `*** Add File` to create it",
        ),
        (
            "*** Begin Patch\n*** Delete File: dir\n*** End Patch",
            "is a directory",
        ),
        (
            "*** Begin Patch\n*** Rename File: f.txt\n*** End Patch",
            "patch line 2: expected `*** Add File: PATH`",
        ),
        ("bad", "a patch starts with `*** Begin Patch`"),
        ("*** Begin Patch\nbad", "a patch ends with `*** End Patch`"),
        (
            "*** Begin Patch\n*** Update File: f.txt\n@@\n-line\n+LINE\n@@\n*** End Patch",
            "this hunk has no `-` or `+` lines",
        ),
        (
            "*** Begin Patch\n*** Update File: f.txt\n@@\n-line\n+LINE\n*** End of File\n-more\n*** End Patch",
            "a hunk starts with `@@`",
        ),
        (
            "*** Begin Patch\n*** Update File: f.txt\n@@\nbad\n*** End Patch",
            "a hunk line starts with ` ` (context), `-` (remove) or `+` (add)",
        ),
        (
            "*** Begin Patch\n*** Update File: f.txt\n@@\n*** End of File\n*** End Patch",
            "this hunk has no `-` or `+` lines",
        ),
    ] {
        refused(&before, patch, says);
    }
}

// The parser's lenient mode and the library's here-document tests: the shell wrapping a
// model writes around a patch.

#[test]
fn a_patch_in_a_here_document_is_the_patch_inside_it() {
    const INNER: &str = "*** Begin Patch\n*** Update File: h.py\n import foo\n+bar\n*** End Patch";
    for wrapped in [
        format!("<<EOF\n{INNER}\nEOF\n"),
        format!("<<'EOF'\n{INNER}\nEOF\n"),
        format!("<<\"EOF\"\n{INNER}\nEOF"),
        format!("apply_patch <<'EOF'\n{INNER}\nEOF\n"),
        format!("\napplypatch <<'PATCH'\n\n{INNER}\n\nPATCH\n\n"),
    ] {
        let (answer, fx) = apply(&[("h.py", "import foo\n")], &wrapped);
        answer.unwrap_or_else(|e| panic!("{wrapped:?}: {e}"));
        assert_eq!(
            files(&fx.workspace()),
            map(&[("h.py", "import foo\nbar\n")]),
            "{wrapped:?}"
        );
    }
}

#[test]
fn only_the_word_alone_on_its_line_closes_a_here_document() {
    // A context line reading `EOF` is the patch's, as in a shell; an indented last line
    // closes it all the same.
    applies(
        &[("doc.sh", "cat <<EOF\nhi\nEOF\n")],
        "apply_patch <<EOF\n*** Begin Patch\n*** Update File: doc.sh\n@@\n-hi\n+hello\n EOF\n*** End Patch\n  EOF\n",
        &[("doc.sh", "cat <<EOF\nhello\nEOF\n")],
    );
}

#[test]
fn cd_before_apply_patch_starts_the_paths_in_that_directory() {
    // The library's leading-`cd` tests, its quoted paths, and its move resolved there.
    applies(
        &[("alt dir/old.txt", "before\n")],
        "cd 'alt dir' && apply_patch <<'PATCH'\n*** Begin Patch\n*** Update File: old.txt\n*** Move to: renamed.txt\n@@\n-before\n+after\n*** End Patch\nPATCH",
        &[("alt dir/renamed.txt", "after\n")],
    );
    applies(
        &[("sub/a.txt", "a\n")],
        "cd sub && apply_patch <<EOF\n*** Begin Patch\n*** Add File: b.txt\n+b\n*** End Patch\nEOF",
        &[("sub/a.txt", "a\n"), ("sub/b.txt", "b\n")],
    );
    // Confinement still holds: the directory is inside the workspace or nothing happens.
    let (answer, _fx) = apply(
        &[],
        "cd .. && apply_patch <<EOF\n*** Begin Patch\n*** Add File: out.txt\n+x\n*** End Patch\nEOF",
    );
    assert_eq!(answer.unwrap_err().kind(), ErrorKind::Refused);
}

#[test]
fn shell_wrappings_a_shell_would_run_more_of_are_refused() {
    let body = "*** Begin Patch\n*** Add File: foo\n+hi\n*** End Patch";
    for wrapped in [
        format!("<<\"EOF'\n{body}\nEOF\n"),
        format!("cd foo; apply_patch <<'PATCH'\n{body}\nPATCH"),
        format!("cd bar || apply_patch <<'PATCH'\n{body}\nPATCH"),
        format!("cd bar | apply_patch <<'PATCH'\n{body}\nPATCH"),
        format!("echo foo && apply_patch <<'PATCH'\n{body}\nPATCH"),
        format!("apply_patch foo <<'PATCH'\n{body}\nPATCH"),
        format!("cd foo && cd bar && apply_patch <<'PATCH'\n{body}\nPATCH"),
        format!("cd foo bar && apply_patch <<'PATCH'\n{body}\nPATCH"),
        format!("echo foo; cd bar && apply_patch <<'PATCH'\n{body}\nPATCH"),
    ] {
        refused(&[], &wrapped, "a patch starts with `*** Begin Patch`");
    }
    let message = refused(
        &[],
        &format!("cd bar && apply_patch <<'PATCH'\n{body}\nPATCH && echo done"),
        "is not closed",
    );
    insta::assert_snapshot!(message, @"the patch is malformed: patch line 6: the here-document opened on line 1 is not closed: end it with a line `PATCH` (or send the patch alone, from `*** Begin Patch` to `*** End Patch`). Nothing was changed.");
    refused(
        &[],
        &format!("apply_patch <<'EOF'\n{body}\nEOF\necho done\n"),
        "the here-document ends on line 6, but more follows it",
    );
    refused(
        &[],
        "<<EOF\n*** Begin Patch\n*** Update File: file2.py\nEOF\n",
        "a patch ends with `*** End Patch`",
    );
}

// The suite's line-ending tests and the library's CRLF tests.

#[test]
fn lines_added_to_a_crlf_file_end_with_crlf() {
    applies(
        &[("w.txt", "one\r\ntwo\r\nthree\r\n")],
        "*** Begin Patch\n*** Update File: w.txt\n@@\n-one\n+uno\n@@\n two\n+\n+between\n three\n*** End Patch",
        &[("w.txt", "uno\r\ntwo\r\n\r\nbetween\r\nthree\r\n")],
    );
    applies(
        &[("w.txt", "a\r\nb\r\nc\r\n")],
        "*** Begin Patch\n*** Update File: w.txt\n@@\n a\n-b\n+B\n@@\n c\n+d\n*** End of File\n*** End Patch",
        &[("w.txt", "a\r\nB\r\nc\r\nd\r\n")],
    );
    // A carriage return inside a line is text, and stays.
    applies(
        &[("w.txt", "foo\r\r\nbar\r\n")],
        "*** Begin Patch\n*** Update File: w.txt\n@@\n+BAZ\n*** End of File\n*** End Patch",
        &[("w.txt", "foo\r\r\nbar\r\nBAZ\r\n")],
    );
}

#[test]
fn a_mixed_file_keeps_each_lines_ending() {
    applies(
        &[("m.txt", "one\r\ntwo\nthree\r\nfour\n")],
        "*** Begin Patch\n*** Update File: m.txt\n@@\n one\n two\n-three\n+THREE\n four\n*** End Patch",
        &[("m.txt", "one\r\ntwo\nTHREE\r\nfour\n")],
    );
    // A kept line keeps its own ending, even where it repeats a removed one.
    applies(
        &[("m.txt", "same\r\nsame\n")],
        "*** Begin Patch\n*** Update File: m.txt\n@@\n-same\n same\n*** End Patch",
        &[("m.txt", "same\n")],
    );
}

#[test]
fn a_new_final_newline_is_in_the_files_style() {
    applies(
        &[("n.txt", "one\r\ntwo")],
        "*** Begin Patch\n*** Update File: n.txt\n@@\n-one\n+ONE\n*** End Patch",
        &[("n.txt", "ONE\r\ntwo\r\n")],
    );
}

#[test]
fn repeated_lines_are_replaced_in_the_order_written() {
    applies(
        &[("r.txt", "a\nb\n")],
        "*** Begin Patch\n*** Update File: r.txt\n@@\n-a\n-b\n+b\n+b\n+a\n*** End Patch",
        &[("r.txt", "b\nb\na\n")],
    );
}

// The library's write-error test: a file that cannot be written is not changed.

#[test]
fn a_read_only_file_is_not_changed() {
    use std::os::unix::fs::PermissionsExt;
    let fx = Fixture::new();
    let path = fx.workspace().join("ro.txt");
    std::fs::write(&path, "before\n").unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o444)).unwrap();
    let err = fx
        .run()
        .apply_patch(&PatchRequest::new(
            "*** Begin Patch\n*** Update File: ro.txt\n@@\n-before\n+after\n*** End Patch",
        ))
        .unwrap_err();
    insta::assert_snapshot!(err.to_string(), @r"
    the patch does not apply, and nothing was changed:
    - ro.txt: the file is read-only, and a patch does not write through its mode: make it writable first or leave it out
    Read the files again and send a corrected patch.
    ");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "before\n");
}

// Where corral deliberately differs. Scenario 015: Codex leaves the changes made before a
// failing section; corral checks the whole patch first and changes nothing. Scenarios 011
// and 010: Codex writes over an existing file with `*** Add File` or `*** Move to`;
// corral refuses, since the model did not read what it would destroy.

#[test]
fn a_failing_section_leaves_the_sections_before_it_undone() {
    refused(
        &[],
        "*** Begin Patch\n*** Add File: made.txt\n+hello\n*** Update File: absent.txt\n@@\n-old\n+new\n*** End Patch",
        "absent.txt: `*** Update File` names a file that does not exist",
    );
}

#[test]
fn add_file_over_an_existing_file_is_refused() {
    refused(
        &[("dup.txt", "precious\n")],
        "*** Begin Patch\n*** Add File: dup.txt\n+replacement\n*** End Patch",
        "`*** Add File` names a file that exists: use `*** Update File` to change it",
    );
}

#[test]
fn move_to_an_existing_file_is_refused() {
    refused(
        &[("from/a.txt", "from\n"), ("to/a.txt", "existing\n")],
        "*** Begin Patch\n*** Update File: from/a.txt\n*** Move to: to/a.txt\n@@\n-from\n+new\n*** End Patch",
        "to/a.txt: `*** Move to` names a file that exists: delete it first or move elsewhere",
    );
}
