//! The box gets the person's configuration without its credentials, and a root box does
//! not read root's secrets outside the home. Checked by their effect: each credential
//! canary planted in a home (issue 67's eleven) is not read in the box, while what a build
//! reads of the same files still is (`git config user.name`, cargo's `[build]`); a root
//! box reads neither a 0600 file of root's under `/var/lib` nor one in a 0700 directory,
//! and still reads a world-readable file beside them. As root and as an ordinary user
//! (run the binary as one: the home is the process's own).

use crate::common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{Scratch, is_root, text};

/// The canaries: (path below the home, its text). Each holds `CANARY`; the toolchain's
/// install beside it (a directory) is made too, so the toolchain is put back.
const CANARIES: &[(&str, &str)] = &[
    (
        ".cabal/config",
        "repository hackage.haskell.org\n  url: http://hackage.haskell.org/\n\
         username: ada\npassword: CANARY-cabal\njobs: 2\n",
    ),
    (
        ".nuget/NuGet/NuGet.Config",
        "<configuration><packageSourceCredentials><corp>\
         <add key=\"ClearTextPassword\" value=\"CANARY-nuget\" />\
         </corp></packageSourceCredentials></configuration>\n",
    ),
    (
        ".stack/upload/credentials.json",
        "{\"password\":\"CANARY-stack\"}\n",
    ),
    (".rye/credentials", "[corp]\ntoken = \"CANARY-rye\"\n"),
    (
        ".julia/servers/juliahub.com/auth.toml",
        "access_token = \"CANARY-juliahub\"\n",
    ),
    (
        ".pub-cache/credentials.json",
        "{\"accessToken\":\"CANARY-dart\"}\n",
    ),
    (
        ".cargo/config.toml",
        "[registry]\ntoken = \"CANARY-cargo\"\n[registries.corp]\ntoken = \"CANARY-cargo2\"\n",
    ),
    (
        ".gitconfig",
        "[user]\n\tname = Ada Canary\n[url \"https://CANARY-gitconfig@github.com/\"]\n\
         \tinsteadOf = https://github.com/\n[include]\n\tpath = ~/.config/git/config\n",
    ),
    (
        ".config/git/config",
        "[http]\n\textraheader = AUTHORIZATION: bearer CANARY-xdg-git\n",
    ),
    (
        ".local/share/uv/credentials/credentials.toml",
        "[[credential]]\nservice = \"https://pypi.corp/\"\npassword = \"CANARY-uv\"\n",
    ),
    (
        ".gradle/init.gradle",
        "allprojects { repositories { maven { credentials { password 'CANARY-gradle' } } } }\n",
    ),
];

/// The toolchains' installs beside the canaries.
const INSTALLS: &[&str] = &[
    ".cabal/bin",
    ".nuget/packages",
    ".stack/programs",
    ".rye/shims",
    ".julia/packages",
    ".pub-cache/bin",
    ".cargo/bin",
    ".local/share/uv/python",
    ".gradle/caches",
];

struct Home {
    _dir: tempfile::TempDir,
    home: PathBuf,
}

impl Home {
    fn new() -> Option<Home> {
        let dir = tempfile::Builder::new()
            .prefix("corral-creds-")
            .tempdir_in("/var/tmp")
            .ok()?;
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let home = dir.path().join("me");
        std::fs::create_dir_all(home.join("project/src")).unwrap();
        for (path, content) in CANARIES {
            let file = home.join(path);
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(&file, content).unwrap();
        }
        for dir in INSTALLS {
            std::fs::create_dir_all(home.join(dir)).unwrap();
            std::fs::write(home.join(dir).join("installed"), "install-readable\n").unwrap();
        }
        Some(Home { _dir: dir, home })
    }

    fn workspace(&self) -> PathBuf {
        self.home.join("project")
    }

    /// `corral exec` of `line` in the box, in the project, with this home.
    fn exec(&self, s: &Scratch, line: &str, env: &[(&str, String)]) -> (String, String) {
        let mut cmd = s.corral(&[
            "exec",
            "--sandbox",
            "workspace-write",
            "--yes",
            "--",
            "sh",
            "-c",
            line,
        ]);
        in_home(&mut cmd, self);
        cmd.envs(env.iter().map(|(k, v)| (k, v)));
        let out = cmd.output().unwrap();
        (text(&out.stdout), text(&out.stderr))
    }
}

fn in_home(cmd: &mut Command, home: &Home) {
    cmd.current_dir(home.workspace())
        .env("HOME", &home.home)
        .env_remove("CARGO_HOME")
        .env_remove("GIT_CONFIG_GLOBAL");
}

/// Whether the box covers the home here, as `corral sandbox report` says; the report too.
fn covers_home(s: &Scratch, home: &Home) -> Option<String> {
    let mut report = s.corral(&["sandbox", "report"]);
    in_home(&mut report, home);
    let report = text(&report.output().unwrap().stdout);
    report
        .lines()
        .any(|l| l.trim_start().starts_with("home") && l.contains("toolchains only"))
        .then_some(report)
}

#[test]
fn no_credential_canary_is_read_in_the_box_and_builds_get_their_configuration() {
    let Some(home) = Home::new() else {
        common::skip("no /var/tmp here");
        return;
    };
    let s = Scratch::new();
    let Some(report) = covers_home(&s, &home) else {
        common::skip("the box cannot cover the home here (no mount_setattr)");
        return;
    };
    assert!(
        report.contains("derived copies without credentials"),
        "{report}"
    );
    let reads: Vec<String> = CANARIES
        .iter()
        .map(|(path, _)| format!("cat ~/{path} 2>/dev/null;"))
        .collect();
    let line = format!(
        "{} grep -rs CANARY ~ ; git config --global user.name; git config --get-all url.https://github.com/.insteadof; \
         cat ~/.cabal/bin/installed ~/.gradle/caches/installed; grep -c jobs ~/.cabal/config",
        reads.join(" ")
    );
    let (stdout, stderr) = home.exec(&s, &line, &[]);
    assert!(
        !stdout.contains("CANARY"),
        "a credential was read: {stdout}"
    );
    assert!(stdout.contains("Ada Canary"), "{stdout}{stderr}");
    // The toolchains' installs are still there, and what cabal builds read.
    assert_eq!(
        stdout.matches("install-readable").count(),
        2,
        "{stdout}{stderr}"
    );
    assert!(stdout.trim_end().ends_with('1'), "{stdout}{stderr}");
    // The person's files are as they were.
    for (path, content) in CANARIES {
        assert_eq!(
            std::fs::read_to_string(home.home.join(path)).unwrap(),
            *content
        );
    }
}

/// A `cargo build` in the box takes its `[build]` settings from the derived
/// `~/.cargo/config.toml`.
#[test]
fn cargo_build_takes_build_settings_from_the_derived_config() {
    let Some(home) = Home::new() else {
        common::skip("no /var/tmp here");
        return;
    };
    let Some(cargo) = std::env::var_os("CARGO").map(PathBuf::from) else {
        common::skip("no CARGO in the environment");
        return;
    };
    let rustc = cargo.with_file_name("rustc");
    if !rustc.exists() {
        common::skip("no rustc beside cargo");
        return;
    }
    let s = Scratch::new();
    if covers_home(&s, &home).is_none() {
        common::skip("the box cannot cover the home here (no mount_setattr)");
        return;
    }
    let target = home.workspace().join("derived-target");
    std::fs::write(
        home.home.join(".cargo/config.toml"),
        format!(
            "[build]\ntarget-dir = \"{}\"\n[registry]\ntoken = \"CANARY-cargo\"\n",
            target.display()
        ),
    )
    .unwrap();
    std::fs::write(
        home.workspace().join("Cargo.toml"),
        "[package]\nname = \"canary\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    )
    .unwrap();
    std::fs::write(home.workspace().join("src/main.rs"), "fn main() {}\n").unwrap();
    let bin = cargo.parent().unwrap();
    let env = [
        ("RUSTC", rustc.display().to_string()),
        ("PATH", format!("{}:/usr/bin:/bin", bin.display())),
    ];
    let line = format!("{} build --offline -q && echo built", cargo.display());
    let (stdout, stderr) = home.exec(&s, &line, &env);
    if stderr.contains("No such file or directory") && !stdout.contains("built") {
        common::skip(&format!("the toolchain is not in the box here: {stderr}"));
        return;
    }
    assert!(stdout.contains("built"), "{stdout}{stderr}");
    assert!(
        target.join("debug").is_dir(),
        "the build did not take target-dir from the derived config: {stderr}"
    );
}

/// Removed however the test ends.
struct Planted(PathBuf);

impl Drop for Planted {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A root box reads neither a 0600 file of root's under `/var/lib` nor a file in a 0700
/// directory there; a world-readable file beside them stays readable; the report counts
/// the mounts.
#[test]
fn a_root_box_does_not_read_roots_files_by_mode() {
    if !is_root() {
        common::skip("only root has root's files to hide");
        return;
    }
    let dir = Planted(PathBuf::from(format!(
        "/var/lib/corral-test-{}",
        std::process::id()
    )));
    std::fs::create_dir_all(dir.0.join("private")).unwrap();
    std::fs::set_permissions(&dir.0, std::fs::Permissions::from_mode(0o755)).unwrap();
    let key = dir.0.join("service.key");
    std::fs::write(&key, "ROOT-CANARY-0600\n").unwrap();
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
    let tls = dir.0.join("private/tls.key");
    std::fs::write(&tls, "ROOT-CANARY-0700\n").unwrap();
    std::fs::set_permissions(
        dir.0.join("private"),
        std::fs::Permissions::from_mode(0o700),
    )
    .unwrap();
    let open = dir.0.join("public.txt");
    std::fs::write(&open, "world-readable\n").unwrap();
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o644)).unwrap();
    let s = Scratch::new();
    let report = text(&s.output(&["sandbox", "report"]).stdout);
    if !report.contains("root's files: hidden by mode") {
        assert!(
            report.contains("no mount namespace"),
            "no root's files in the report: {report}"
        );
        common::skip("no mount namespace here");
        return;
    }
    let line = format!(
        "cat {} {} {} 2>&1; ls -1 {} 2>/dev/null",
        key.display(),
        tls.display(),
        open.display(),
        dir.0.join("private").display()
    );
    let out = s.output(&[
        "exec",
        "--sandbox",
        "workspace-write",
        "--yes",
        "--",
        "sh",
        "-c",
        &line,
    ]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(
        !stdout.contains("ROOT-CANARY"),
        "root's file was read: {stdout}"
    );
    assert!(stdout.contains("world-readable"), "{stdout}{stderr}");
    assert!(
        !stdout.lines().any(|l| l == "tls.key"),
        "the 0700 directory was listed: {stdout}"
    );
    assert!(Path::new(&key).exists());
}
