//! apply_patch: Codex's format, every path checked as a write first, all or nothing, and
//! a hunk that does not apply reported with its nearest match.

use crate::common;

use common::Fixture;
use corral::patch::{FileOp, parse};
use corral::policy::{Act, Effect};
use corral::{ErrorKind, Policy, Run, patch::PatchRequest};

fn write(fx: &Fixture, path: &str, text: &str) {
    let p = fx.workspace().join(path);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

fn read(fx: &Fixture, path: &str) -> Option<String> {
    std::fs::read_to_string(fx.workspace().join(path)).ok()
}

const SOURCE: &str = "def add(a, b):\n    return a - b\n\n\ndef greet():\n    print(\"Hi\")\n";

#[test]
fn add_update_move_and_delete_in_one_patch() {
    let fx = Fixture::new();
    write(&fx, "src/app.py", SOURCE);
    write(&fx, "obsolete.txt", "old\n");
    let patch = "*** Begin Patch
*** Add File: hello.txt
+Hello, world!
*** Update File: src/app.py
*** Move to: src/main.py
@@ def add(a, b):
-    return a - b
+    return a + b
@@ def greet():
-    print(\"Hi\")
+    print(\"Hello, world!\")
*** Delete File: obsolete.txt
*** End Patch";
    let out = fx.run().apply_patch(&PatchRequest::new(patch)).unwrap();
    insta::assert_snapshot!(out.observation, @r"
    applied the patch: 3 files changed
    A hello.txt (+1 -0)
    R src/app.py -> src/main.py (+2 -2)
    D obsolete.txt
    ");
    assert_eq!(read(&fx, "hello.txt").unwrap(), "Hello, world!\n");
    assert_eq!(
        read(&fx, "src/main.py").unwrap(),
        SOURCE
            .replace("a - b", "a + b")
            .replace("\"Hi\"", "\"Hello, world!\"")
    );
    assert_eq!(read(&fx, "src/app.py"), None);
    assert_eq!(read(&fx, "obsolete.txt"), None);
}

#[test]
fn a_hunk_that_does_not_apply_changes_nothing_and_shows_the_nearest_match() {
    let fx = Fixture::new();
    write(&fx, "src/app.py", SOURCE);
    let patch = "*** Begin Patch
*** Add File: new.txt
+x
*** Update File: src/app.py
@@
 def add(a, b):
-    return a * b
+    return a + b
*** End Patch";
    let err = fx.run().apply_patch(&PatchRequest::new(patch)).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidRequest);
    insta::assert_snapshot!(err.to_string(), @r#"
    the patch does not apply, and nothing was changed:
    - src/app.py: hunk 1 (patch line 5) did not apply: its 2 lines of context and removals were not found after line 0. Nearest match: line 1 (1 of 2 lines agree); line 2 there reads "    return a - b" where the hunk expects "    return a * b"
    Read the files again and send a corrected patch.
    "#);
    assert_eq!(read(&fx, "src/app.py").unwrap(), SOURCE);
    assert_eq!(
        read(&fx, "new.txt"),
        None,
        "the add in the same patch did not happen"
    );
}

#[test]
fn a_one_line_hunk_with_a_typo_points_to_the_closest_line() {
    let fx = Fixture::new();
    write(&fx, "src/app.py", SOURCE);
    let patch = "*** Begin Patch\n*** Update File: src/app.py\n@@\n-    retrun a - b\n+    return a + b\n*** End Patch";
    let err = fx.run().apply_patch(&PatchRequest::new(patch)).unwrap_err();
    insta::assert_snapshot!(err.to_string(), @r#"
    the patch does not apply, and nothing was changed:
    - src/app.py: hunk 1 (patch line 3) did not apply: its 1 line of context and removals was not found after line 0. Nearest match: line 2 reads "    return a - b" where the hunk expects "    retrun a - b"
    Read the files again and send a corrected patch.
    "#);
    // An `@@` line with a typo, the same.
    let patch = "*** Begin Patch\n*** Update File: src/app.py\n@@ def greet_():\n-    print(\"Hi\")\n+    print(\"Hello\")\n*** End Patch";
    let err = fx.run().apply_patch(&PatchRequest::new(patch)).unwrap_err();
    assert!(
        err.to_string().contains(
            "Nearest match: line 5 reads \"def greet():\" where the hunk expects \"def greet_():\""
        ),
        "{err}"
    );
    // Nothing alike: the file's first line, to read from.
    let patch = "*** Begin Patch\n*** Update File: src/app.py\n@@\n-zzz qqq\n+x\n*** End Patch";
    let err = fx.run().apply_patch(&PatchRequest::new(patch)).unwrap_err();
    assert!(
        err.to_string()
            .contains("No line of the file matches any of them"),
        "{err}"
    );
    assert_eq!(read(&fx, "src/app.py").unwrap(), SOURCE);
}

#[test]
fn whitespace_differences_still_apply() {
    let fx = Fixture::new();
    write(&fx, "a.txt", "one  \n  two\nthree\n");
    let patch =
        "*** Begin Patch\n*** Update File: a.txt\n one\n-two\n+TWO\n three\n*** End Patch\n";
    fx.run().apply_patch(&PatchRequest::new(patch)).unwrap();
    assert_eq!(read(&fx, "a.txt").unwrap(), "one  \nTWO\nthree\n");
}

#[test]
fn end_of_file_anchors_to_the_last_match() {
    let fx = Fixture::new();
    write(&fx, "a.txt", "x\ny\nx\ny\n");
    let patch =
        "*** Begin Patch\n*** Update File: a.txt\n x\n-y\n+z\n*** End of File\n*** End Patch";
    fx.run().apply_patch(&PatchRequest::new(patch)).unwrap();
    assert_eq!(read(&fx, "a.txt").unwrap(), "x\ny\nx\nz\n");
}

#[test]
fn a_patch_touching_a_denied_path_changes_nothing() {
    let fx = Fixture::new();
    write(&fx, "src/app.py", SOURCE);
    let policy =
        Policy::permissive()
            .layer("project")
            .rule(Act::Write, "**/secrets/**", Effect::Deny);
    let run = Run::builder(fx.workspace())
        .store(fx.store())
        .policy(policy)
        .open()
        .unwrap();
    let patch = "*** Begin Patch
*** Update File: src/app.py
-    return a - b
+    return a + b
*** Add File: secrets/key.pem
+-----BEGIN KEY-----
*** End Patch";
    let err = run.apply_patch(&PatchRequest::new(patch)).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Refused);
    assert!(err.to_string().contains("**/secrets/**"), "{err}");
    assert_eq!(read(&fx, "src/app.py").unwrap(), SOURCE);
    assert!(!fx.workspace().join("secrets").exists());
}

#[test]
fn protected_and_outside_paths_are_refused_before_anything_changes() {
    let fx = Fixture::new();
    write(&fx, "a.txt", "a\n");
    for target in [".git/hooks/post-checkout", "../outside.txt", "corral.toml"] {
        let patch = format!(
            "*** Begin Patch\n*** Update File: a.txt\n-a\n+b\n*** Add File: {target}\n+x\n*** End Patch"
        );
        let err = fx.run().apply_patch(&PatchRequest::new(patch)).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Refused, "{target}: {err}");
        assert_eq!(read(&fx, "a.txt").unwrap(), "a\n");
    }
    assert!(!fx.dir.path().join("outside.txt").exists());
}

#[test]
fn malformed_patches_name_their_line() {
    let fx = Fixture::new();
    let run = fx.run();
    for (patch, says) in [
        ("", "the patch is empty"),
        ("*** Update File: a\n", "starts with `*** Begin Patch`"),
        (
            "*** Begin Patch\n*** Frobnicate: a\n*** End Patch",
            "patch line 2",
        ),
        (
            "*** Begin Patch\n*** Add File: a\nno plus\n*** End Patch",
            "starts with `+`",
        ),
        (
            "*** Begin Patch\n*** Update File: a\n context only\n*** End Patch",
            "no `-` or `+`",
        ),
        (
            "*** Begin Patch\n*** Add File: a\n+x\n",
            "ends with `*** End Patch`",
        ),
    ] {
        let err = run.apply_patch(&PatchRequest::new(patch)).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidRequest);
        assert!(err.to_string().contains(says), "{patch:?}: {err}");
    }
}

#[test]
fn adding_an_existing_file_or_updating_a_missing_one_is_refused() {
    let fx = Fixture::new();
    write(&fx, "a.txt", "a\n");
    let run = fx.run();
    let err = run
        .apply_patch(&PatchRequest::new(
            "*** Begin Patch\n*** Add File: a.txt\n+b\n*** End Patch",
        ))
        .unwrap_err();
    assert!(err.to_string().contains("use `*** Update File`"), "{err}");
    let err = run
        .apply_patch(&PatchRequest::new(
            "*** Begin Patch\n*** Update File: b.txt\n-a\n+b\n*** End Patch",
        ))
        .unwrap_err();
    assert!(err.to_string().contains("does not exist"), "{err}");
    assert_eq!(read(&fx, "a.txt").unwrap(), "a\n");
}

#[test]
fn consecutive_anchors_narrow_down_to_the_right_place() {
    let fx = Fixture::new();
    write(
        &fx,
        "a.py",
        "class A:\n    def f(self):\n        pass\n\nclass B:\n    def f(self):\n        pass\n",
    );
    let patch = "*** Begin Patch\n*** Update File: a.py\n@@ class B:\n@@     def f(self):\n-        pass\n+        return 1\n*** End Patch";
    let parsed = parse(patch).unwrap();
    let [FileOp::Update { hunks, .. }] = parsed.ops.as_slice() else {
        panic!("{parsed:?}");
    };
    assert_eq!(hunks[0].anchors, ["class B:", "def f(self):"]);
    fx.run().apply_patch(&PatchRequest::new(patch)).unwrap();
    assert_eq!(
        read(&fx, "a.py").unwrap(),
        "class A:\n    def f(self):\n        pass\n\nclass B:\n    def f(self):\n        return 1\n"
    );
}

/// A patch reads each file it changes into memory, several times over: a file past the
/// limit (a model can make one of gigabytes in a second) is refused before it is read,
/// the refusal says what to do instead, and the run goes on.
#[test]
fn a_file_too_large_to_patch_is_refused_before_it_is_read() {
    let fx = Fixture::new();
    let big = std::fs::File::create(fx.workspace().join("big.txt")).unwrap();
    big.set_len(1 << 30).unwrap();
    drop(big);
    let run = fx.run();
    for patch in [
        "*** Begin Patch\n*** Update File: big.txt\n@@\n-x\n+y\n*** End Patch",
        "*** Begin Patch\n*** Delete File: big.txt\n*** End Patch",
    ] {
        let err = run.apply_patch(&PatchRequest::new(patch)).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidRequest, "{err}");
        let said = err.to_string();
        assert!(said.contains("big.txt is too large for a patch"), "{said}");
        assert!(said.contains("16 MiB") && said.contains("sed -i"), "{said}");
    }
    assert_eq!(
        std::fs::metadata(fx.workspace().join("big.txt"))
            .unwrap()
            .len(),
        1 << 30
    );
    write(&fx, "a.txt", "a\n");
    run.apply_patch(&PatchRequest::new(
        "*** Begin Patch\n*** Update File: a.txt\n-a\n+b\n*** End Patch",
    ))
    .unwrap();
    assert_eq!(read(&fx, "a.txt").unwrap(), "b\n");
}

/// A patch changes files, not symlinks: deleting or moving a link would take the file it
/// leads to with it, so it is refused, saying how to remove the link itself; nothing is
/// changed, and an update still writes through a link inside the workspace.
#[test]
fn a_patch_does_not_delete_or_move_through_a_symlink() {
    let fx = Fixture::new();
    write(&fx, "real.txt", "a\n");
    let ws = fx.workspace();
    std::os::unix::fs::symlink("real.txt", ws.join("link.txt")).unwrap();
    std::os::unix::fs::symlink("nothere", ws.join("dangling")).unwrap();
    let run = fx.run();
    for (patch, says) in [
        (
            "*** Begin Patch\n*** Delete File: link.txt\n*** End Patch",
            "rm link.txt",
        ),
        (
            "*** Begin Patch\n*** Update File: link.txt\n*** Move to: moved.txt\n@@\n-a\n+b\n*** End Patch",
            "rm link.txt",
        ),
        (
            "*** Begin Patch\n*** Delete File: dangling\n*** End Patch",
            "rm dangling",
        ),
        (
            "*** Begin Patch\n*** Add File: dangling\n+x\n*** End Patch",
            "rm dangling",
        ),
        (
            "*** Begin Patch\n*** Update File: real.txt\n*** Move to: dangling\n@@\n-a\n+b\n*** End Patch",
            "rm dangling",
        ),
    ] {
        let err = run.apply_patch(&PatchRequest::new(patch)).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidRequest, "{patch}: {err}");
        assert!(err.to_string().contains(says), "{patch}: {err}");
        assert!(err.to_string().contains("is a symlink"), "{err}");
        assert_eq!(read(&fx, "real.txt").unwrap(), "a\n", "{patch}");
        assert!(std::fs::symlink_metadata(ws.join("link.txt")).is_ok());
        assert!(!ws.join("moved.txt").exists());
    }
    run.apply_patch(&PatchRequest::new(
        "*** Begin Patch\n*** Update File: link.txt\n@@\n-a\n+b\n*** End Patch",
    ))
    .unwrap();
    assert_eq!(read(&fx, "real.txt").unwrap(), "b\n");
}

/// A file is deleted whatever it holds: bytes that are not UTF-8 are no reason to keep it.
#[test]
fn a_file_that_is_not_text_can_be_deleted() {
    let fx = Fixture::new();
    std::fs::write(fx.workspace().join("blob.bin"), b"\x00\xff\xfe\n").unwrap();
    let out = fx
        .run()
        .apply_patch(&PatchRequest::new(
            "*** Begin Patch\n*** Delete File: blob.bin\n*** End Patch",
        ))
        .unwrap();
    assert!(
        out.observation.contains("D blob.bin"),
        "{}",
        out.observation
    );
    assert!(!fx.workspace().join("blob.bin").exists());
}

/// A model taught to edit through a shell sends `apply_patch <<'EOF'` to the shell tool:
/// no program of that name runs here, so the call says which tool takes the same text
/// (with a `$` in the patch too, which would send the line to a host shell), and nothing
/// is written.
#[test]
fn a_patch_sent_to_the_shell_points_to_the_apply_patch_tool() {
    let fx = Fixture::new();
    let run = fx.run();
    let heredoc = "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: n.txt\n+costs $5\n*** End Patch\nEOF\n";
    for line in [heredoc.to_string(), format!("cd . && {heredoc}")] {
        let err = run.shell(&corral::ShellRequest::new(&line)).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidRequest, "{err}");
        assert!(err.to_string().contains("`apply_patch` tool"), "{err}");
        assert!(!fx.workspace().join("n.txt").exists());
    }
    let unavailable = run
        .exec(&corral::ExecRequest::new([
            "apply_patch",
            "*** Begin Patch",
        ]))
        .unwrap();
    assert!(
        unavailable.observation.contains("`apply_patch` tool"),
        "{}",
        unavailable.observation
    );
    // The same text to the tool applies.
    run.apply_patch(&PatchRequest::new(heredoc)).unwrap();
    assert_eq!(read(&fx, "n.txt").unwrap(), "costs $5\n");
}

/// A file two sections name (updated twice, deleted then added again) is counted once.
#[test]
fn a_file_named_twice_is_one_file_changed() {
    let fx = Fixture::new();
    write(&fx, "a.txt", "one\ntwo\n");
    let out = fx
        .run()
        .apply_patch(&PatchRequest::new(
            "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+uno\n*** Update File: a.txt\n@@\n-two\n+dos\n*** End Patch",
        ))
        .unwrap();
    assert!(
        out.observation
            .starts_with("applied the patch: 1 file changed\n"),
        "{}",
        out.observation
    );
    assert_eq!(read(&fx, "a.txt").unwrap(), "uno\ndos\n");
}
