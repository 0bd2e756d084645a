//! corral knows a project's commands from its files, reads a gate from corral.toml, and
//! writes a commented corral.toml the policy loader accepts.

use std::path::Path;

use corral::task::Verification;
use corral::task::project::{default_gate, detect, gate_from_config, init_toml, parse_command};

fn touch(dir: &Path, files: &[(&str, &str)]) {
    for (name, text) in files {
        std::fs::write(dir.join(name), text).unwrap();
    }
}

fn test_of(files: &[(&str, &str)]) -> Option<String> {
    let dir = tempfile::tempdir().unwrap();
    touch(dir.path(), files);
    detect(dir.path()).test().map(|t| t.join(" "))
}

#[test]
fn each_ecosystem_has_its_test_command() {
    let pkg = r#"{"scripts": {"test": "jest", "build": "tsc"}}"#;
    for (files, test) in [
        (vec![("Cargo.toml", "")], Some("cargo test")),
        (vec![("package.json", pkg)], Some("npm test")),
        (
            vec![("package.json", pkg), ("pnpm-lock.yaml", "")],
            Some("pnpm test"),
        ),
        (
            vec![("package.json", pkg), ("yarn.lock", "")],
            Some("yarn test"),
        ),
        (
            vec![("package.json", pkg), ("bun.lock", "")],
            Some("bun run test"),
        ),
        (vec![("package.json", "{}")], None),
        (
            vec![("pyproject.toml", ""), ("uv.lock", "")],
            Some("uv run pytest"),
        ),
        (
            vec![("pyproject.toml", ""), ("poetry.lock", "")],
            Some("poetry run pytest"),
        ),
        (vec![("requirements.txt", "")], Some("python3 -m pytest")),
        (vec![("go.mod", "")], Some("go test ./...")),
        (
            vec![("Makefile", "all:\n\tcc x.c\ntest:\n\t./t\n")],
            Some("make test"),
        ),
        (vec![("Makefile", "all:\n")], None),
        (
            vec![("CMakeLists.txt", "")],
            Some("ctest --test-dir build --output-on-failure"),
        ),
        (
            vec![("gradlew", ""), ("build.gradle", "")],
            Some("./gradlew test"),
        ),
        (vec![("pom.xml", "")], Some("mvn -q test")),
        (vec![("README.md", "")], None),
    ] {
        assert_eq!(test_of(&files).as_deref(), test, "{files:?}");
    }
}

#[test]
fn the_gate_comes_from_corral_toml_first() {
    let dir = tempfile::tempdir().unwrap();
    touch(
        dir.path(),
        &[
            ("Cargo.toml", ""),
            (
                "corral.toml",
                "[exec]\nallow = [\"cargo*\"]\n\n[verify]\ncommands = [\"cargo build\", \"cargo test -p 'my app'\"]\n",
            ),
        ],
    );
    let gate = gate_from_config(dir.path()).unwrap().unwrap();
    assert_eq!(
        gate,
        [
            Verification::command(["cargo", "build"]),
            Verification::command(["cargo", "test", "-p", "my app"]),
        ]
    );
    assert_eq!(default_gate(dir.path()).unwrap(), gate);
    // Without [verify], the detected test command.
    touch(
        dir.path(),
        &[("corral.toml", "[exec]\nallow = [\"cargo*\"]\n")],
    );
    assert_eq!(
        default_gate(dir.path()).unwrap(),
        [Verification::command(["cargo", "test"])]
    );
    // With neither, an error that says what to do.
    let empty = tempfile::tempdir().unwrap();
    let err = default_gate(empty.path()).unwrap_err();
    assert!(err.to_string().contains("--verify"), "{err}");
}

#[test]
fn a_gate_phase_is_one_command() {
    assert_eq!(
        parse_command("npm test -- --runInBand").unwrap(),
        Verification::command(["npm", "test", "--", "--runInBand"])
    );
    for bad in [
        "make && make test",
        "cargo test | tail",
        "cargo test > log",
        "X=1 make",
        "",
        "echo $HOME",
    ] {
        let err = parse_command(bad).unwrap_err();
        assert!(err.to_string().contains("gate command"), "{bad}: {err}");
    }
}

#[test]
fn init_writes_a_policy_the_loader_accepts() {
    let dir = tempfile::tempdir().unwrap();
    touch(
        dir.path(),
        &[("Cargo.toml", ""), ("Makefile", "test:\n\tcargo test\n")],
    );
    let text = init_toml(&detect(dir.path()));
    insta::assert_snapshot!(text);
    let file = dir.path().join("corral.toml");
    std::fs::write(&file, &text).unwrap();
    // As `corral init` does: the person who wrote it trusts it.
    let trust = corral::TrustStore::at(dir.path().join("trusted-policies"));
    trust.trust(&file).unwrap();
    let files = corral::PolicyFiles::discover(dir.path(), &[]).unwrap();
    let policy = files
        .load_trusting(corral::Policy::default(), Some(&trust))
        .unwrap();
    let check = |argv: &str| policy.check(corral::policy::Act::Exec, argv).effect;
    assert_eq!(check("cargo test -p x"), corral::policy::Effect::Allow);
    assert_eq!(check("git push origin main"), corral::policy::Effect::Deny);
    assert_eq!(
        gate_from_config(dir.path()).unwrap().unwrap(),
        [Verification::command(["cargo", "test"])]
    );
}
