//! A Python project's own `.venv`: `corral init` finds it, and `corral verify` runs the
//! gate with it activated, so a pytest installed only there is the one that runs.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{Scratch, text};

/// The site-packages of a venv holding pytest alone, made once in the tests' scratch root
/// (a boxed call sees it there); `None` where pip cannot install it.
fn pytest_site_packages() -> Option<PathBuf> {
    let made = corral_test_support::made_once("pytest", "pytest>=8", |dir| {
        let venv = dir.join("venv");
        let made = Command::new("python3")
            .args(["-m", "venv"])
            .arg(&venv)
            .status()
            .is_ok_and(|s| s.success());
        made && Command::new(venv.join("bin/python"))
            .args(["-m", "pip", "install", "--quiet", "pytest>=8"])
            .status()
            .is_ok_and(|s| s.success())
    })?;
    site_packages(&made.join("venv"))
}

fn site_packages(venv: &Path) -> Option<PathBuf> {
    std::fs::read_dir(venv.join("lib"))
        .ok()?
        .flatten()
        .map(|e| e.path().join("site-packages"))
        .find(|p| p.is_dir())
}

/// A real venv at `ws/.venv`, without pip, whose only package is pytest (through a `.pth`
/// naming `pytest_site`): nothing but this venv's python can import it.
fn project_venv(ws: &Path, pytest_site: &Path) {
    let made = Command::new("python3")
        .args(["-m", "venv", "--without-pip"])
        .arg(ws.join(".venv"))
        .status()
        .unwrap();
    assert!(
        made.success(),
        "python3 -m venv failed: install python3-venv"
    );
    let site = site_packages(&ws.join(".venv")).expect("the venv has a site-packages");
    std::fs::write(
        site.join("pytest-fixture.pth"),
        format!("{}\n", pytest_site.display()),
    )
    .unwrap();
}

#[test]
fn init_and_verify_use_the_projects_venv() {
    let Some(pytest_site) = pytest_site_packages() else {
        eprintln!("skipped: pip could not install pytest from the package registry");
        return;
    };
    let s = Scratch::new();
    let ws = s.workspace();
    project_venv(&ws, &pytest_site);
    std::fs::write(ws.join("pyproject.toml"), "[project]\nname = \"p\"\n").unwrap();
    std::fs::create_dir(ws.join("tests")).unwrap();
    let test = ws.join("tests/test_add.py");
    std::fs::write(&test, "def test_add():\n    assert 1 + 1 == 3\n").unwrap();

    let init = s.output(&["init"]);
    let said = text(&init.stderr);
    assert_eq!(init.status.code(), Some(0), "{said}");
    assert!(
        said.contains("found venv (.venv) · gate: python3 -m pytest"),
        "{said}"
    );

    // The venv's pytest ran, and found the failure.
    let failed = s.output(&["verify"]);
    let said = text(&failed.stderr);
    assert_eq!(failed.status.code(), Some(1), "{said}");
    assert!(said.contains("1 failed"), "{said}");
    assert!(!said.contains("No module named pytest"), "{said}");

    std::fs::write(&test, "def test_add():\n    assert 1 + 1 == 2\n").unwrap();
    let passed = s.output(&["verify"]);
    let said = text(&passed.stderr);
    assert_eq!(passed.status.code(), Some(0), "{said}");
    assert!(said.contains("corral: gate passed (1 phase)"), "{said}");
}
