//! Toolchains from what the person runs: a venv in `~/.cache` first on `PATH` runs in the
//! box; a program the box hides says which path and the `home_read` entry that shows it;
//! `PATH` entries that would put back too much (`/`, the home, `.`, a world-writable
//! directory) are not put back, and the report says why. As root and as an ordinary user.

use crate::common;

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::Command;

use common::{Scratch, UserScratch, is_root, text};

/// A home outside `/tmp` (the box's own already) with a venv in `~/.cache/venvs/x`, a
/// project, and a world-writable directory in it.
struct Home {
    _dir: tempfile::TempDir,
    home: PathBuf,
}

impl Home {
    fn new() -> Option<Home> {
        let dir = tempfile::Builder::new()
            .prefix("corral-path-")
            .tempdir_in("/var/tmp")
            .ok()?;
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let home = dir.path().canonicalize().unwrap().join("me");
        std::fs::create_dir_all(home.join("project")).unwrap();
        let made = Command::new("python3")
            .args(["-m", "venv", "--without-pip"])
            .arg(home.join(".cache/venvs/x"))
            .status()
            .ok()?;
        if !made.success() {
            return None;
        }
        let open = home.join("open");
        std::fs::create_dir_all(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
        Some(Home { _dir: dir, home })
    }

    fn venv(&self) -> PathBuf {
        self.home.join(".cache/venvs/x")
    }

    fn open(&self) -> PathBuf {
        self.home.join("open")
    }

    /// The venv's `bin` first on `PATH`, then what must not be put back.
    fn path(&self) -> String {
        format!(
            "{}/bin:/:{}:.:{}:/usr/bin:/bin",
            self.venv().display(),
            self.home.display(),
            self.open().display()
        )
    }

    /// `cmd` in the project, with this home as `HOME` and [`Self::path`] as `PATH`.
    fn run(&self, mut cmd: Command) -> std::process::Output {
        cmd.current_dir(self.home.join("project"))
            .env("HOME", &self.home)
            .env("PATH", self.path())
            .env_remove("VIRTUAL_ENV")
            .env_remove("CONDA_PREFIX");
        cmd.output().unwrap()
    }
}

/// The home layer's line of `corral sandbox report`, when the box covers the home.
fn home_line(report: &str) -> Option<String> {
    report
        .lines()
        .find(|l| l.trim_start().starts_with("home") && l.contains("toolchains only"))
        .map(str::to_string)
}

fn check(home: &Home, corral: &dyn Fn(&[&str]) -> Command) {
    let report = text(&home.run(corral(&["sandbox", "report"])).stdout);
    let Some(line) = home_line(&report) else {
        common::not_expecting_a_whole_box(&report);
        common::skip("the box cannot cover the home here");
        return;
    };
    // What is put back, and why; what is not, and why.
    let venv = home.venv();
    assert!(
        line.contains(&format!("{} (a venv on PATH)", venv.display())),
        "{line}"
    );
    for (path, why) in [
        ("/".to_string(), "the root or a home"),
        (home.home.display().to_string(), "the root or a home"),
        (".".to_string(), "relative"),
        (home.open().display().to_string(), "world-writable"),
    ] {
        assert!(line.contains(&format!("{path} ({why}")), "{path}: {line}");
    }

    // The venv's python runs in the box, as the venv.
    let out = home.run(corral(&[
        "exec",
        "--sandbox",
        "workspace-write",
        "--yes",
        "--",
        "python",
        "-c",
        "import sys; print(sys.prefix)",
    ]));
    assert_eq!(
        text(&out.stdout).trim(),
        venv.display().to_string(),
        "{}",
        text(&out.stderr)
    );

    // A program in a hidden directory of the home, not on PATH, whose interpreter lies
    // there too: the result names the interpreter and the entry that shows it.
    let tools = home.home.join(".cache/tools");
    std::fs::create_dir_all(tools.join("bin")).unwrap();
    std::fs::copy("/bin/true", tools.join("bin/interp")).unwrap();
    let tool = tools.join("bin/tool");
    std::fs::write(&tool, format!("#!{}/bin/interp\n", tools.display())).unwrap();
    std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = home.run(corral(&[
        "exec",
        "--sandbox",
        "workspace-write",
        "--yes",
        "--",
        tool.to_str().unwrap(),
    ]));
    let err = text(&out.stderr);
    assert!(
        err.contains(&format!("{}/bin/interp", tools.display()))
            && err.contains("the box does not show")
            && err.contains("home_read = [\"~/.cache/tools\"]"),
        "{err}"
    );
}

#[test]
fn a_venv_in_the_homes_cache_on_path_runs_in_the_box() {
    let Some(home) = Home::new() else {
        common::skip("no python3 -m venv or /var/tmp here");
        return;
    };
    let s = Scratch::new();
    check(&home, &|args| s.corral(args));
}

#[test]
fn an_ordinary_users_venv_on_path_runs_in_the_box() {
    let (Some(home), Some(u)) = (Home::new(), UserScratch::new()) else {
        return;
    };
    if is_root() {
        common::chown_tree(&home.home, common::UNPRIVILEGED);
        // The venv's interpreter is the host's python3, which may lie where that user
        // cannot reach (a pyenv under a private /root).
        let id = common::UNPRIVILEGED.to_string();
        let runs = Command::new("setpriv")
            .args(["--reuid", &id, "--regid", &id, "--clear-groups", "--"])
            .args(["test", "-x"])
            .arg(home.venv().join("bin/python"))
            .status()
            .is_ok_and(|s| s.success());
        if !runs {
            common::skip("the venv's interpreter is out of that user's reach");
            return;
        }
    }
    check(&home, &|args| u.corral(args));
}
