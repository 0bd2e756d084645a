//! The patches Codex's `apply_patch` applies that corral once refused or wrote
//! differently, through `corral patch` and through the MCP tool: a header padded with
//! spaces, a blank line between hunks, the shell here-document around a patch, a CRLF or
//! mixed file's line endings, U+205F read as a space, and a one-line hunk with a typo
//! pointed at its closest line. Also the differences corral keeps on purpose: a patch
//! applies whole or not at all, and never writes over a file it did not read.

use crate::common;
use crate::mcp_common;

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::process::Stdio;

use common::Scratch;
use mcp_common::{PERMISSIVE, Session};
use serde_json::json;

/// What a case expects: these files in its directory afterwards, or a refusal saying this
/// and its directory as it was.
enum Then {
    Files(&'static [(&'static str, &'static str)]),
    Refused(&'static str),
}

/// One case, its files in a directory of its own: `dir`, the files before, the patch
/// (its paths under `dir`), and what follows.
struct Case {
    dir: &'static str,
    before: &'static [(&'static str, &'static str)],
    patch: String,
    then: Then,
}

fn case(
    dir: &'static str,
    before: &'static [(&'static str, &'static str)],
    patch: &str,
    then: Then,
) -> Case {
    Case {
        dir,
        before,
        patch: patch.replace("DIR", dir),
        then,
    }
}

fn cases() -> Vec<Case> {
    use Then::*;
    let update = "*** Begin Patch\n*** Update File: DIR/h.txt\n@@\n-old\n+new\n*** End Patch";
    vec![
        case(
            "padded",
            &[("h.txt", "old\n")],
            "*** Begin Patch\n  *** Update File: DIR/h.txt\n@@\n-old\n+new\n*** End Patch",
            Files(&[("h.txt", "new\n")]),
        ),
        case(
            "blank",
            &[("b.txt", "x\ny\n")],
            "*** Begin Patch\n*** Update File: DIR/b.txt\n@@\n x\n-y\n+Y\n*** End of File\n\n@@\n+z\n*** End of File\n\n*** End Patch",
            Files(&[("b.txt", "x\nY\nz\n")]),
        ),
        case(
            "bare",
            &[("h.txt", "old\n")],
            &format!("<<EOF\n{update}\nEOF\n"),
            Files(&[("h.txt", "new\n")]),
        ),
        case(
            "single",
            &[("h.txt", "old\n")],
            &format!("<<'EOF'\n{update}\nEOF\n"),
            Files(&[("h.txt", "new\n")]),
        ),
        case(
            "double",
            &[("h.txt", "old\n")],
            &format!("<<\"EOF\"\n{update}\nEOF"),
            Files(&[("h.txt", "new\n")]),
        ),
        case(
            "command",
            &[("h.txt", "old\n")],
            &format!("apply_patch <<'EOF'\n{update}\nEOF\n"),
            Files(&[("h.txt", "new\n")]),
        ),
        case(
            "sub",
            &[("h.txt", "old\n")],
            "cd DIR && apply_patch <<'PATCH'\n*** Begin Patch\n*** Update File: h.txt\n@@\n-old\n+new\n*** End Patch\nPATCH\n",
            Files(&[("h.txt", "new\n")]),
        ),
        case(
            "crlf",
            &[("w.txt", "a\r\nb\r\n")],
            "*** Begin Patch\n*** Update File: DIR/w.txt\n@@\n a\n+between\n b\n*** End Patch",
            Files(&[("w.txt", "a\r\nbetween\r\nb\r\n")]),
        ),
        case(
            "mixed",
            &[("m.txt", "one\r\ntwo\nthree\r\nfour\n")],
            "*** Begin Patch\n*** Update File: DIR/m.txt\n@@\n two\n-three\n+THREE\n four\n*** End Patch",
            Files(&[("m.txt", "one\r\ntwo\nTHREE\r\nfour\n")]),
        ),
        case(
            "noeol",
            &[("n.txt", "one\r\ntwo")],
            "*** Begin Patch\n*** Update File: DIR/n.txt\n@@\n-one\n+ONE\n*** End Patch",
            Files(&[("n.txt", "ONE\r\ntwo\r\n")]),
        ),
        case(
            "mathspace",
            &[("s.txt", "a\u{205F}+\u{205F}b\n")],
            "*** Begin Patch\n*** Update File: DIR/s.txt\n@@\n-a + b\n+a+b\n*** End Patch",
            Files(&[("s.txt", "a+b\n")]),
        ),
        case(
            "typo",
            &[("t.py", "import os\nprint(os.getcwd())\n")],
            "*** Begin Patch\n*** Update File: DIR/t.py\n@@\n-print(os.getcdw())\n+print(os.getcwd(), flush=True)\n*** End Patch",
            Refused(
                "Nearest match: line 2 reads \"print(os.getcwd())\" where the hunk expects \"print(os.getcdw())\"",
            ),
        ),
        case(
            "addover",
            &[("a.txt", "precious\n")],
            "*** Begin Patch\n*** Add File: DIR/a.txt\n+replacement\n*** End Patch",
            Refused("`*** Add File` names a file that exists: use `*** Update File` to change it"),
        ),
        case(
            "moveover",
            &[("from.txt", "from\n"), ("to.txt", "to\n")],
            "*** Begin Patch\n*** Update File: DIR/from.txt\n*** Move to: DIR/to.txt\n@@\n-from\n+new\n*** End Patch",
            Refused("`*** Move to` names a file that exists: delete it first or move elsewhere"),
        ),
        case(
            "partial",
            &[],
            "*** Begin Patch\n*** Add File: DIR/made.txt\n+hello\n*** Update File: DIR/absent.txt\n@@\n-old\n+new\n*** End Patch",
            Refused("`*** Update File` names a file that does not exist"),
        ),
    ]
}

/// The files under `dir`, by name.
fn files(dir: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            out.insert(
                name,
                String::from_utf8(std::fs::read(&path).unwrap()).unwrap(),
            );
        }
    }
    out
}

fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(p, t)| (p.to_string(), t.to_string()))
        .collect()
}

fn lay_out(workspace: &Path, c: &Case) {
    let dir = workspace.join(c.dir);
    std::fs::create_dir_all(&dir).unwrap();
    for (name, text) in c.before {
        std::fs::write(dir.join(name), text).unwrap();
    }
}

/// `ok` and `said`: how the patch was answered; then the case's directory is checked.
fn check(workspace: &Path, c: &Case, ok: bool, said: &str) {
    let after = files(&workspace.join(c.dir));
    match &c.then {
        Then::Files(expected) => {
            assert!(ok, "{}: refused: {said}", c.dir);
            assert_eq!(after, map(expected), "{}", c.dir);
        }
        Then::Refused(says) => {
            assert!(!ok, "{}: applied: {said}", c.dir);
            assert!(said.contains(says), "{}: {says:?} not in: {said}", c.dir);
            assert!(said.contains("nothing was changed"), "{}: {said}", c.dir);
            assert_eq!(after, map(c.before), "{}", c.dir);
        }
    }
}

#[test]
fn corral_patch_applies_what_codex_applies() {
    let s = Scratch::new();
    for c in cases() {
        lay_out(&s.workspace(), &c);
        let mut child = s
            .corral(&["patch"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(c.patch.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        let said = common::text(&out.stdout) + &common::text(&out.stderr);
        let ok = out.status.code() == Some(0);
        if !ok {
            assert_eq!(out.status.code(), Some(2), "{}: {said}", c.dir);
        }
        check(&s.workspace(), &c, ok, &said);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_mcp_tool_applies_what_codex_applies() {
    let session = Session::start_with(Some(PERMISSIVE), None, &["--file-tools"]).await;
    for c in cases() {
        lay_out(&session.workspace(), &c);
        let answer = session.call("apply_patch", json!({"patch": c.patch})).await;
        let said = mcp_common::text(&answer);
        check(
            &session.workspace(),
            &c,
            answer.is_error == Some(false),
            &said,
        );
    }
    session.client.cancel().await.unwrap();
}
