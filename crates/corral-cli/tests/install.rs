//! corral installed as a user installs it, into a scratch home whose `PATH` does not hold
//! the build tree, and the installed `corral mcp`, started by name with a client's reduced
//! environment, answering `tools/list` through an official client: `cargo install --locked
//! --path crates/corral-cli` without `.cargo/config.toml`'s SQLite flags (as from
//! crates.io), the Python wheel through pydantic-ai and the OpenAI Agents SDK, and the npm
//! packages through `npx corral-mcp`.
//!
//! They take minutes, so they are left out of a plain `cargo test`; `.ci/run` runs them
//! (`cargo test -p corral-cli --test install -- --ignored`) but the crates.io one, a whole
//! build of its own (`target/install`), which runs when named.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use rmcp::ServiceExt;
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};

/// The repository's root.
fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The tools `corral mcp --workspace .`, found on `path` and started from `home/ws` with
/// only `HOME` and `PATH`, lists.
async fn tools_listed(home: &Path, path: &str) -> Vec<String> {
    std::fs::create_dir_all(home.join("ws")).unwrap();
    let command = tokio::process::Command::new("corral").configure(|cmd| {
        cmd.args(["mcp", "--workspace", "."])
            .current_dir(home.join("ws"))
            .env_clear()
            .env("PATH", path)
            .env("HOME", home);
    });
    let (transport, _) = TokioChildProcess::builder(command)
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let client = ().serve(transport).await.unwrap();
    let tools = client.list_all_tools().await.unwrap();
    client.cancel().await.unwrap();
    tools.into_iter().map(|t| t.name.to_string()).collect()
}

fn serves_the_tools(tools: &[String]) {
    for name in ["exec", "shell", "shell_start", "output"] {
        assert!(tools.iter().any(|t| t == name), "{name} missing: {tools:?}");
    }
}

/// Whether an ELF binary names a loader (`PT_INTERP`): linked dynamically.
fn names_a_loader(binary: &[u8]) -> bool {
    let u16_at = |at: usize| u16::from_le_bytes(binary[at..at + 2].try_into().unwrap()) as usize;
    let phoff = u64::from_le_bytes(binary[0x20..0x28].try_into().unwrap()) as usize;
    let (size, count) = (u16_at(0x36), u16_at(0x38));
    (0..count).any(|i| {
        let at = phoff + i * size;
        u32::from_le_bytes(binary[at..at + 4].try_into().unwrap()) == 3
    })
}

/// An ELF binary's sections (`.text`, `.symtab`, `.debug_line`, …), each with whether it is
/// loaded at run time (`SHF_ALLOC`).
fn sections(binary: &[u8]) -> Vec<(String, bool)> {
    let u16_at = |at: usize| u16::from_le_bytes(binary[at..at + 2].try_into().unwrap()) as usize;
    let u32_at = |at: usize| u32::from_le_bytes(binary[at..at + 4].try_into().unwrap()) as usize;
    let u64_at = |at: usize| u64::from_le_bytes(binary[at..at + 8].try_into().unwrap()) as usize;
    let (shoff, size, count, names) = (u64_at(0x28), u16_at(0x3A), u16_at(0x3C), u16_at(0x3E));
    let header = |i: usize| shoff + i * size;
    let strings = u64_at(header(names) + 0x18);
    (0..count)
        .map(|i| {
            let at = strings + u32_at(header(i));
            let end = at + binary[at..].iter().position(|&b| b == 0).unwrap();
            let name = String::from_utf8_lossy(&binary[at..end]).into_owned();
            (name, u64_at(header(i) + 0x08) & 0x2 != 0)
        })
        .collect()
}

/// Stripped as the wheel's binary is (maturin's `strip = true`) and the npm package's
/// (`pack.sh`): no symbol table, no debug information (a loaded section such as
/// `.debug_gdb_scripts` is part of the program, and stays).
fn assert_stripped(binary: &Path) {
    let sections = sections(&std::fs::read(binary).unwrap());
    assert!(
        sections.iter().any(|(name, _)| name == ".text"),
        "not read as ELF: {sections:?}"
    );
    let kept: Vec<&String> = sections
        .iter()
        .filter(|(name, loaded)| name == ".symtab" || (name.starts_with(".debug") && !loaded))
        .map(|(name, _)| name)
        .collect();
    assert!(
        kept.is_empty(),
        "{} is not stripped: {kept:?}",
        binary.display()
    );
}

/// `cargo install --locked --debug --path crates/corral-cli --root ROOT`, building in
/// `target_dir`, with `LIBSQLITE3_FLAGS` set to `sqlite_flags` when given; the installed
/// binary.
fn cargo_install(root: &Path, target_dir: &Path, sqlite_flags: Option<&str>) -> PathBuf {
    let mut install = Command::new(env!("CARGO"));
    install
        .args(["install", "--locked", "--debug", "--path"])
        .arg(repository().join("crates/corral-cli"))
        .arg("--root")
        .arg(root)
        .env("CARGO_TARGET_DIR", target_dir)
        .stdin(Stdio::null());
    if let Some(flags) = sqlite_flags {
        install.env("LIBSQLITE3_FLAGS", flags);
    }
    let out = install.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    root.join("bin/corral")
}

/// The installed corral, on a `PATH` of its own and the system's, serves a client started
/// with only `HOME` and `PATH`, and keeps its state in that home.
async fn serves_from(scratch: &Path, installed: &Path) {
    let home = scratch.join("home");
    let path = format!(
        "{}:/usr/local/bin:/usr/bin:/bin",
        installed.parent().unwrap().display()
    );
    serves_the_tools(&tools_listed(&home, &path).await);
    assert!(home.join(".local/state/corral/trace.db").exists());
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "installs corral with cargo: .ci/run runs it with --ignored"]
async fn cargo_install_gives_a_corral_that_serves() {
    let scratch = tempfile::tempdir().unwrap();
    // The README's line, in the target directory the tests built: nothing new to build.
    let target = Path::new(env!("CARGO_BIN_EXE_corral"))
        .ancestors()
        .nth(2)
        .unwrap();
    let installed = cargo_install(&scratch.path().join("root"), target, None);
    serves_from(scratch.path(), &installed).await;
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "builds corral from scratch as from crates.io (minutes): run it with --ignored"]
async fn from_crates_io_without_the_sqlite_flags_it_links_dynamically() {
    let scratch = tempfile::tempdir().unwrap();
    // A package does not carry .cargo/config.toml: its SQLite flags do not come along (a
    // variable that is set wins over that file's [env]).
    let target = repository().join("target/install");
    let installed = cargo_install(&scratch.path().join("root"), &target, Some(""));
    // SQLite built without the repository's flags may dlopen: no static link then.
    let binary = std::fs::read(&installed).unwrap();
    assert!(
        names_a_loader(&binary),
        "linked statically without the SQLite flags"
    );
    serves_from(scratch.path(), &installed).await;
}

/// The directory packaging files live in.
fn packaging(what: &str) -> PathBuf {
    repository().join("packaging").join(what)
}

/// `maturin`, from PATH or, as the README's wheel line does, installed from PyPI into a venv
/// (kept under the target directory); `None` (with a note) where neither can be had.
fn maturin() -> Option<PathBuf> {
    if let Ok(out) = Command::new("maturin").arg("--version").output()
        && out.status.success()
    {
        return Some(PathBuf::from("maturin"));
    }
    let venv = Path::new(env!("CARGO_TARGET_TMPDIR")).join("maturin");
    let bin = venv.join("bin/maturin");
    if bin.exists() {
        return Some(bin);
    }
    let made = Command::new("python3")
        .args(["-m", "venv"])
        .arg(&venv)
        .status()
        .is_ok_and(|s| s.success())
        && Command::new(venv.join("bin/pip"))
            .args(["install", "--quiet", "maturin>=1.5,<2"])
            .status()
            .is_ok_and(|s| s.success());
    if made {
        Some(bin)
    } else {
        eprintln!("skipped: maturin is not installed and pip could not install it");
        None
    }
}

#[test]
#[ignore = "builds and installs the Python wheel (minutes): .ci/run runs it with --ignored"]
fn the_wheel_installs_a_corral_both_python_clients_reach() {
    let Some(maturin) = maturin() else { return };
    let scratch = tempfile::tempdir().unwrap();
    let wheels = scratch.path().join("wheels");
    // The dev profile: the binary the tests built already, linked as a release is.
    let out = Command::new(&maturin)
        .args(["build", "--out"])
        .arg(&wheels)
        .current_dir(packaging("python"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let wheel = std::fs::read_dir(&wheels)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "whl"))
        .unwrap();
    let name = wheel.file_name().unwrap().to_string_lossy().into_owned();
    // No shared library to need: one wheel serves every glibc from manylinux1 on.
    assert!(name.contains("manylinux_2_5"), "{name}");

    let venv = scratch.path().join("venv");
    let made = Command::new("python3")
        .args(["-m", "venv"])
        .arg(&venv)
        .status()
        .unwrap();
    assert!(
        made.success(),
        "python3 -m venv failed: install python3-venv"
    );
    // The wheel by file, with the clients its extras name from the registry.
    let installed = Command::new(venv.join("bin/pip"))
        .args(["install", "--quiet"])
        .arg(format!("{}[pydantic-ai,agents]", wheel.display()))
        .status()
        .unwrap();
    if !installed.success() {
        eprintln!("skipped: pip could not install the clients from the package registry");
        return;
    }
    let home = scratch.path().join("home");
    std::fs::create_dir_all(home.join("ws")).unwrap();
    let out = Command::new(venv.join("bin/python"))
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/wheel_clients.py"))
        .current_dir(home.join("ws"))
        .env_clear()
        .env("HOME", &home)
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let seen: serde_json::Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    assert_eq!(
        seen["binary"],
        venv.join("bin/corral").display().to_string(),
        "{seen}"
    );
    assert_stripped(&venv.join("bin/corral"));
    for client in ["pydantic_ai", "agents"] {
        let tools: Vec<String> = serde_json::from_value(seen[client].clone()).unwrap();
        serves_the_tools(&tools);
    }
}

/// Whether `npm` runs here; a note where it does not.
fn npm_here() -> bool {
    let here = Command::new("npm")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !here {
        eprintln!("skipped: npm is not installed");
    }
    here
}

/// `packaging/npm/pack.sh BINARY OUT`: the tarballs it names, in `OUT`.
fn npm_pack(binary: &Path, out: &Path) -> Vec<String> {
    let packed = Command::new(packaging("npm/pack.sh"))
        .arg(binary)
        .arg(out)
        .output()
        .unwrap();
    assert!(
        packed.status.success(),
        "{}",
        String::from_utf8_lossy(&packed.stderr)
    );
    String::from_utf8_lossy(&packed.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

/// The npm package carries the binary stripped as the wheel's is, not the build's own
/// (80 MB against 17 MB for a release build), and the stripped binary still runs.
#[test]
fn the_npm_package_carries_a_stripped_binary() {
    if !npm_here() {
        return;
    }
    let scratch = tempfile::tempdir().unwrap();
    let built = Path::new(env!("CARGO_BIN_EXE_corral"));
    let tarballs = npm_pack(built, &scratch.path().join("packed"));
    let platform = tarballs
        .iter()
        .find(|t| t.contains("corral-mcp-linux-"))
        .unwrap();
    let unpacked = scratch.path().join("unpacked");
    std::fs::create_dir(&unpacked).unwrap();
    let untar = Command::new("tar")
        .args(["-xzf", platform, "-C"])
        .arg(&unpacked)
        .status()
        .unwrap();
    assert!(untar.success());
    let packed = unpacked.join("package/bin/corral");
    assert_stripped(&packed);
    let (before, after) = (
        std::fs::metadata(built).unwrap().len(),
        std::fs::metadata(&packed).unwrap().len(),
    );
    assert!(after < before / 2, "{before} bytes built, {after} packed");
    let out = Command::new(&packed).arg("--version").output().unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("corral "));
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "packs and installs the npm packages: .ci/run runs it with --ignored"]
async fn the_npm_packages_install_a_corral_npx_starts() {
    if !npm_here() {
        return;
    }
    let scratch = tempfile::tempdir().unwrap();
    let tarballs = npm_pack(
        Path::new(env!("CARGO_BIN_EXE_corral")),
        &scratch.path().join("packed"),
    );
    assert_eq!(tarballs.len(), 2, "{tarballs:?}");

    // Both tarballs by file into a fresh global prefix, without the registry.
    let prefix = scratch.path().join("prefix");
    let install = |args: &[&str], files: &[String]| {
        let out = Command::new("npm")
            .args([
                "install",
                "--global",
                "--offline",
                "--no-audit",
                "--no-fund",
            ])
            .args(args)
            .arg("--prefix")
            .arg(&prefix)
            .args(files)
            .current_dir(scratch.path())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    install(&[], &tarballs);
    let home = scratch.path().join("home");
    std::fs::create_dir_all(home.join("ws")).unwrap();
    let path = format!(
        "{}:/usr/local/bin:/usr/bin:/bin",
        prefix.join("bin").display()
    );
    // As an MCP client's config starts it: `npx corral-mcp --workspace .`.
    let command = tokio::process::Command::new("npx").configure(|cmd| {
        cmd.args(["--offline", "corral-mcp", "--workspace", "."])
            .current_dir(home.join("ws"))
            .env_clear()
            .env("PATH", &path)
            .env("HOME", &home)
            .env("npm_config_prefix", &prefix);
    });
    let (transport, _) = TokioChildProcess::builder(command)
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let client = ().serve(transport).await.unwrap();
    let tools = client.list_all_tools().await.unwrap();
    client.cancel().await.unwrap();
    serves_the_tools(
        &tools
            .into_iter()
            .map(|t| t.name.to_string())
            .collect::<Vec<_>>(),
    );
    // And `corral` itself is on PATH.
    let out = Command::new(prefix.join("bin/corral"))
        .arg("--version")
        .env_clear()
        .env("PATH", &path)
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("corral "));

    // Installed without its optional dependencies, it says what is missing and what to do.
    let bare = scratch.path().join("bare");
    let out = Command::new("npm")
        .args([
            "install",
            "--global",
            "--offline",
            "--no-audit",
            "--no-fund",
            "--omit=optional",
            "--prefix",
        ])
        .arg(&bare)
        .arg(
            tarballs
                .iter()
                .find(|t| t.ends_with(&format!("corral-mcp-{}.tgz", env!("CARGO_PKG_VERSION"))))
                .unwrap(),
        )
        .current_dir(scratch.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = Command::new(bare.join("bin/corral-mcp"))
        .args(["--workspace", "."])
        .current_dir(home.join("ws"))
        .env_clear()
        .env(
            "PATH",
            format!("{}:/usr/bin:/bin", bare.join("bin").display()),
        )
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(127), "{stderr}");
    assert!(
        stderr.contains("--omit=optional") && stderr.contains("npm install corral-mcp-linux-"),
        "{stderr}"
    );
}

#[test]
fn the_python_module_without_its_binary_says_what_to_do() {
    // An editable install puts the module on the path but not the script.
    let python = Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .unwrap();
    let python = String::from_utf8(python.stdout).unwrap().trim().to_string();
    let out = Command::new(&python)
        .args(["-c", "import corral_mcp; corral_mcp.binary()"])
        .env_clear()
        .env("PYTHONPATH", packaging("python/python"))
        .env("PATH", "/nonexistent")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("FileNotFoundError")
            && stderr.contains("editable install")
            && stderr.contains("cargo install --locked --path crates/corral-cli"),
        "{stderr}"
    );
}
