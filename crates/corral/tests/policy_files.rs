//! Policy files stack as layers; each rule remembers its file and line; a malformed file
//! is a clear error naming where.

mod common;

use common::Fixture;
use corral::{ErrorKind, ExecRequest, Policy, PolicyFiles, Run};

#[test]
fn a_project_file_denies_and_the_refusal_names_its_line() {
    let fx = Fixture::new();
    std::fs::write(
        fx.workspace().join("corral.toml"),
        "[exec]\nallow = [\"cargo test*\"]\ndeny = [\"touch\"]\n",
    )
    .unwrap();
    let files = PolicyFiles::discover(&fx.workspace(), &[]).unwrap();
    assert_eq!(files.files.len(), 1);
    let policy = files.load_onto(Policy::permissive()).unwrap();
    let run = Run::builder(fx.workspace())
        .store(fx.store())
        .policy(policy)
        .open()
        .unwrap();
    let err = run.exec(&ExecRequest::new(["touch", "x"])).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Refused);
    assert!(err.to_string().contains("corral.toml:3"), "{err}");
}

#[test]
fn a_malformed_file_names_file_line_and_column() {
    let fx = Fixture::new();
    std::fs::write(
        fx.workspace().join("corral.toml"),
        "[exec]\ndeny = [\"rm\"\n",
    )
    .unwrap();
    let files = PolicyFiles::discover(&fx.workspace(), &[]).unwrap();
    let err = files.load_onto(Policy::permissive()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidRequest);
    let text = err.to_string();
    assert!(
        text.contains("corral.toml:2:"),
        "file, line and column: {text}"
    );
}

#[test]
fn an_unknown_effect_is_named() {
    let fx = Fixture::new();
    let file = fx.dir.path().join("extra.toml");
    std::fs::write(
        &file,
        "[[rule]]\nact = \"exec\"\npattern = \"ls\"\neffect = \"maybe\"\n",
    )
    .unwrap();
    let files = PolicyFiles::discover(&fx.workspace(), &[file]).unwrap();
    let err = files.load_onto(Policy::permissive()).unwrap_err();
    assert!(err.to_string().contains("maybe"), "{err}");
}
