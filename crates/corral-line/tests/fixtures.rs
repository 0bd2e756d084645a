//! Every fixture line through `parse`: the AST for `ok/`, the refusal text
//! for `err/`. An `err/` fixture's file name starts with the construct it
//! must be refused as.

use std::fs;
use std::path::Path;

/// A fixture file holds one line; the newline that ends the file is not part
/// of it.
fn read_line(path: &Path) -> String {
    let text = fs::read_to_string(path).expect("fixture is readable UTF-8");
    text.strip_suffix('\n').unwrap_or(&text).to_owned()
}

#[test]
fn admitted_lines() {
    insta::glob!("fixtures/ok/*.line", |path| {
        let src = read_line(path);
        let line = corral_line::parse(&src)
            .unwrap_or_else(|e| panic!("{} was refused: {e}", path.display()));
        insta::with_settings!({ description => src.as_str(), omit_expression => true }, {
            insta::assert_yaml_snapshot!(line);
        });
    });
}

#[test]
fn refused_lines() {
    insta::glob!("fixtures/err/*.line", |path| {
        let src = read_line(path);
        let refusal = match corral_line::parse(&src) {
            Ok(line) => panic!("{} was admitted: {line:?}", path.display()),
            Err(refusal) => refusal,
        };
        let stem = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or_default();
        assert!(
            stem.starts_with(refusal.construct_name()),
            "{stem} was refused as {}: {refusal}",
            refusal.construct_name()
        );
        insta::with_settings!({ description => src.as_str(), omit_expression => true }, {
            insta::assert_snapshot!(refusal.to_string());
        });
    });
}
