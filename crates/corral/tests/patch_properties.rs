//! Properties of the patch parser and applier: no input makes them panic, and a patch
//! made from an edit applies to reproduce the edit.

use corral::patch::{FileOp, apply_hunks, parse};
use proptest::prelude::*;

fn line() -> impl Strategy<Value = String> {
    "[a-z ]{0,12}"
}

proptest! {
    #[test]
    fn parsing_anything_never_panics(text in "(\\*\\*\\* (Begin|End) Patch|\\*\\*\\* (Add|Update|Delete) File: [a-z]{1,3}|@@[a-z ]{0,5}|[ +-][a-z]{0,4}|\\*\\*\\* End of File|<<'?EOF'?|EOF|cd [a-z]{1,2} && apply_patch <<EOF|[^\\n]{0,8})(\\n(\\*\\*\\* (Begin|End) Patch|\\*\\*\\* (Add|Update|Delete) File: [a-z]{1,3}|@@[a-z ]{0,5}|[ +-][a-z]{0,4}|\\*\\*\\* End of File|<<'?EOF'?|EOF|cd [a-z]{1,2} && apply_patch <<EOF|[^\\n]{0,8})){0,12}") {
        if let Ok(patch) = parse(&text) {
            for op in &patch.ops {
                if let FileOp::Update { hunks, .. } = op {
                    let _ = apply_hunks("a\nb\n\nc\n", hunks);
                }
            }
        }
    }

    #[test]
    fn a_patch_made_from_an_edit_reproduces_it(
        lines in prop::collection::vec(line(), 1..30),
        at in any::<prop::sample::Index>(),
        replacement in prop::collection::vec(line(), 0..4),
    ) {
        let i = at.index(lines.len());
        // Context: the line before and after, when there are any.
        let mut body = String::new();
        if i > 0 {
            body.push_str(&format!(" {}\n", lines[i - 1]));
        }
        body.push_str(&format!("-{}\n", lines[i]));
        for r in &replacement {
            body.push_str(&format!("+{r}\n"));
        }
        if i + 1 < lines.len() {
            body.push_str(&format!(" {}\n", lines[i + 1]));
        }
        let text = format!("*** Begin Patch\n*** Update File: f\n{body}*** End Patch\n");
        let patch = parse(&text).unwrap();
        let FileOp::Update { hunks, .. } = &patch.ops[0] else { panic!() };
        let original = lines.join("\n") + "\n";
        let applied = apply_hunks(&original, hunks).unwrap();
        // The hunk may match an earlier identical stretch; it must still be an edit of
        // one occurrence that leaves the rest of the file alone, so compare line counts
        // and that the replacement is present where it matched.
        let mut expected = lines.clone();
        expected.splice(i..=i, replacement.clone());
        let got: Vec<&str> = applied.text.lines().collect();
        prop_assert_eq!(got.len(), expected.len());
        if lines.iter().filter(|l| **l == lines[i]).count() == 1 {
            let expected_text = if expected.is_empty() { String::new() } else { expected.join("\n") + "\n" };
            prop_assert_eq!(applied.text.clone(), expected_text);
        }
        prop_assert_eq!(applied.removed, 1);
        prop_assert_eq!(applied.added, replacement.len());

        // The same edit of the file with CRLF endings gives the edited file with CRLF
        // endings: every line, kept or added, ends as the others do.
        let crlf = applies_to(&original.replace('\n', "\r\n"), hunks);
        prop_assert_eq!(crlf.replace("\r\n", "\n"), applied.text.clone());
        prop_assert!(!crlf.replace("\r\n", "").contains('\n'), "{:?}", crlf);
    }
}

fn applies_to(text: &str, hunks: &[corral::patch::Hunk]) -> String {
    apply_hunks(text, hunks).unwrap().text
}
