//! What corral knows about a project from its files: its build, test, lint and format
//! commands. They give a contract its default gate, suggest allow rules, and fill the
//! `corral.toml` that `corral init` writes.
//!
//! | files | test | build |
//! |---|---|---|
//! | `Cargo.toml` | `cargo test` | `cargo build --all-targets` |
//! | `package.json` (+ `pnpm-lock.yaml`, `yarn.lock`, `bun.lock[b]`) | `npm test` / `pnpm test` / `yarn test` / `bun run test` | its `build` script |
//! | `pyproject.toml`, `setup.py`, `requirements.txt`, `.venv` (+ `uv.lock`, `poetry.lock`) | `uv run pytest` / `poetry run pytest` / `python3 -m pytest` | — |
//! | `go.mod` | `go test ./...` | `go build ./...` |
//! | `Makefile` | `make test` (when it has the target) | `make` |
//! | `CMakeLists.txt` | `ctest --test-dir build` | `cmake --build build` |
//! | `gradlew`, `build.gradle[.kts]` | `./gradlew test` | `./gradlew build` |
//! | `pom.xml` | `mvn -q test` | `mvn -q compile` |
//!
//! A project's `.venv` is activated for the gate (see [`crate::verify::venv`]), so its
//! `python3 -m pytest` is the venv's.
//!
//! The gate of `corral.toml` is its `[verify]` table:
//!
//! ```toml
//! [verify]
//! commands = ["cargo build --all-targets", "cargo test"]   # phases, in order; each must exit 0
//! ```

use std::path::Path;

use serde::Serialize;

use super::contract::Verification;
use crate::error::{Error, Result};

/// One ecosystem's commands, as argvs.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Toolchain {
    /// `cargo`, `npm`, `pnpm`, `yarn`, `bun`, `uv`, `poetry`, `venv`, `pip`, `go`, `make`,
    /// `cmake`, `gradle`, `maven`.
    pub name: &'static str,
    /// What showed it: `Cargo.toml`, …
    pub evidence: &'static str,
    /// Build.
    pub build: Option<Vec<String>>,
    /// Test.
    pub test: Option<Vec<String>>,
    /// Lint.
    pub lint: Option<Vec<String>>,
    /// Check formatting (without changing files).
    pub format: Option<Vec<String>>,
    /// Allow rules worth suggesting (`cargo test*`).
    pub allow: Vec<String>,
}

/// What corral found in a project.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Project {
    /// Every toolchain found, most specific first.
    pub toolchains: Vec<Toolchain>,
}

fn argv(words: &str) -> Option<Vec<String>> {
    Some(words.split_whitespace().map(str::to_string).collect())
}

impl Project {
    /// The first toolchain's test command, or the first that has one.
    pub fn test(&self) -> Option<&Vec<String>> {
        self.toolchains.iter().find_map(|t| t.test.as_ref())
    }

    /// The default gate: the test command, expected to exit 0.
    pub fn default_gate(&self) -> Vec<Verification> {
        self.test()
            .map(|t| vec![Verification::command(t.clone())])
            .unwrap_or_default()
    }
}

/// Look at the files at the top of `root`.
pub fn detect(root: &Path) -> Project {
    let has = |name: &str| root.join(name).exists();
    let read = |name: &str| std::fs::read_to_string(root.join(name)).unwrap_or_default();
    let mut found = Vec::new();
    if has("Cargo.toml") {
        found.push(Toolchain {
            name: "cargo",
            evidence: "Cargo.toml",
            build: argv("cargo build --all-targets"),
            test: argv("cargo test"),
            lint: argv("cargo clippy --all-targets -- -D warnings"),
            format: argv("cargo fmt --check"),
            allow: [
                "cargo build*",
                "cargo check*",
                "cargo test*",
                "cargo clippy*",
                "cargo fmt*",
            ]
            .map(String::from)
            .to_vec(),
        });
    }
    if has("package.json") {
        found.push(node(root, &read("package.json")));
    }
    let venv = crate::verify::venv::find(root).is_some();
    if has("pyproject.toml") || has("setup.py") || has("requirements.txt") || venv {
        found.push(python(root, &read("pyproject.toml")));
    }
    if has("go.mod") {
        found.push(Toolchain {
            name: "go",
            evidence: "go.mod",
            build: argv("go build ./..."),
            test: argv("go test ./..."),
            lint: argv("go vet ./..."),
            format: argv("gofmt -l ."),
            allow: ["go build*", "go test*", "go vet*", "gofmt*"]
                .map(String::from)
                .to_vec(),
        });
    }
    if has("CMakeLists.txt") {
        found.push(Toolchain {
            name: "cmake",
            evidence: "CMakeLists.txt",
            build: argv("cmake --build build"),
            test: argv("ctest --test-dir build --output-on-failure"),
            lint: None,
            format: None,
            allow: ["cmake*", "ctest*"].map(String::from).to_vec(),
        });
    }
    if has("gradlew") || has("build.gradle") || has("build.gradle.kts") {
        let g = if has("gradlew") {
            "./gradlew"
        } else {
            "gradle"
        };
        found.push(Toolchain {
            name: "gradle",
            evidence: if has("gradlew") {
                "gradlew"
            } else {
                "build.gradle"
            },
            build: argv(&format!("{g} build -x test")),
            test: argv(&format!("{g} test")),
            lint: None,
            format: None,
            allow: vec![format!("{g} build*"), format!("{g} test*")],
        });
    }
    if has("pom.xml") {
        found.push(Toolchain {
            name: "maven",
            evidence: "pom.xml",
            build: argv("mvn -q compile"),
            test: argv("mvn -q test"),
            lint: None,
            format: None,
            allow: ["mvn*"].map(String::from).to_vec(),
        });
    }
    let makefile = ["Makefile", "makefile", "GNUmakefile"]
        .into_iter()
        .find(|m| has(m));
    if let Some(m) = makefile {
        let text = read(m);
        let target = |t: &str| text.lines().any(|l| l.starts_with(&format!("{t}:")));
        found.push(Toolchain {
            name: "make",
            evidence: "Makefile",
            build: argv("make"),
            test: if target("test") {
                argv("make test")
            } else if target("check") {
                argv("make check")
            } else {
                None
            },
            lint: target("lint").then(|| vec!["make".into(), "lint".into()]),
            format: None,
            allow: ["make*"].map(String::from).to_vec(),
        });
    }
    Project { toolchains: found }
}

fn node(root: &Path, package_json: &str) -> Toolchain {
    let has = |n: &str| root.join(n).exists();
    let (pm, evidence) = if has("bun.lockb") || has("bun.lock") {
        ("bun", "bun.lock")
    } else if has("pnpm-lock.yaml") {
        ("pnpm", "pnpm-lock.yaml")
    } else if has("yarn.lock") {
        ("yarn", "yarn.lock")
    } else {
        ("npm", "package.json")
    };
    let scripts: serde_json::Value = serde_json::from_str(package_json).unwrap_or_default();
    let script = |name: &str| scripts.pointer(&format!("/scripts/{name}")).is_some();
    let run = |name: &str| script(name).then(|| vec![pm.to_string(), "run".into(), name.into()]);
    // `npm init` writes a test script that only fails: not a gate anyone meant.
    let placeholder = scripts
        .pointer("/scripts/test")
        .and_then(|t| t.as_str())
        .is_some_and(is_npm_placeholder);
    let test = if script("test") && !placeholder {
        Some(match pm {
            "bun" => vec!["bun".into(), "run".into(), "test".into()],
            _ => vec![pm.to_string(), "test".into()],
        })
    } else {
        None
    };
    Toolchain {
        name: pm,
        evidence,
        build: run("build"),
        test,
        lint: run("lint"),
        format: if script("format:check") {
            run("format:check")
        } else {
            None
        },
        allow: vec![format!("{pm} test*"), format!("{pm} run*"), "node*".into()],
    }
}

/// The test script `npm init` writes: `echo "Error: no test specified" && exit 1`.
pub fn is_npm_placeholder(script: &str) -> bool {
    script.contains("Error: no test specified") && script.contains("exit 1")
}

fn python(root: &Path, pyproject: &str) -> Toolchain {
    let has = |n: &str| root.join(n).exists();
    let (name, evidence, runner): (&'static str, &'static str, &str) = if has("uv.lock") {
        ("uv", "uv.lock", "uv run ")
    } else if has("poetry.lock") {
        ("poetry", "poetry.lock", "poetry run ")
    } else if crate::verify::venv::find(root).is_some() {
        // Activated for the gate: `python3` is the venv's.
        ("venv", ".venv", "")
    } else {
        ("pip", "pyproject.toml", "")
    };
    let pytest = if runner.is_empty() {
        "python3 -m pytest".to_string()
    } else {
        format!("{runner}pytest")
    };
    let ruff = pyproject.contains("[tool.ruff") || has("ruff.toml") || has(".ruff.toml");
    Toolchain {
        name,
        evidence,
        build: None,
        test: argv(&pytest),
        lint: ruff.then(|| argv(&format!("{runner}ruff check .")).unwrap_or_default()),
        format: ruff.then(|| argv(&format!("{runner}ruff format --check .")).unwrap_or_default()),
        allow: match name {
            "uv" => vec!["uv run*".into()],
            "poetry" => vec!["poetry run*".into()],
            _ => vec!["python3 -m pytest*".into(), "pytest*".into()],
        },
    }
}

#[derive(serde::Deserialize)]
struct ConfigFile {
    verify: Option<VerifyTable>,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct VerifyTable {
    commands: Vec<String>,
    #[serde(default)]
    expect_exit: i32,
}

/// The gate of the workspace's `corral.toml` (its `[verify]` table), if it has one.
pub fn gate_from_config(root: &Path) -> Result<Option<Vec<Verification>>> {
    let Some((path, text)) = read_config(root)? else {
        return Ok(None);
    };
    gate_from_text(&path, &text)
}

/// `root`'s `corral.toml` and its text, if there is one.
fn read_config(root: &Path) -> Result<Option<(std::path::PathBuf, String)>> {
    let path = root.join("corral.toml");
    match std::fs::read_to_string(&path) {
        Ok(t) => Ok(Some((path, t))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io(format!("reading {}", path.display()), e)),
    }
}

/// The `[verify]` phases of the `corral.toml` at `path` whose text is `text`.
fn gate_from_text(path: &Path, text: &str) -> Result<Option<Vec<Verification>>> {
    let file: ConfigFile = toml::from_str(text).map_err(|e| {
        let example =
            corral_policy::snippet::Snippet::new().item("verify", "commands", "cargo test");
        Error::invalid_request(format!(
            "{}: {}; write the gate as a [verify] table whose `commands` is a list of command \
             lines, as in:\n\n{example}",
            path.display(),
            e.to_string().trim_end()
        ))
    })?;
    let Some(table) = file.verify else {
        return Ok(None);
    };
    let mut phases = Vec::new();
    for command in &table.commands {
        let Verification::Command { argv, .. } = parse_command(command)?;
        phases.push(Verification::Command {
            argv,
            expect_exit: table.expect_exit,
        });
    }
    Ok(Some(phases))
}

/// The gate a workspace implies, read once, and who set it: a `corral.toml` `[verify]`
/// whose bytes `trust` holds is the person's (`corral.toml [verify], trusted`), one it
/// does not hold is nobody's (`None`: its phases are asked about), and the detected test
/// command is the project's own (`the project's detected test command`).
pub fn pinned_gate(
    root: &Path,
    trust: Option<&crate::trust::TrustStore>,
) -> Result<(Vec<Verification>, Option<String>)> {
    if let Some((path, text)) = read_config(root)?
        && let Some(gate) = gate_from_text(&path, &text)?.filter(|g| !g.is_empty())
    {
        let trusted = trust.is_some_and(|t| t.is_trusted(&path, text.as_bytes()));
        return Ok((
            gate,
            trusted.then(|| "corral.toml [verify], trusted".to_string()),
        ));
    }
    // Detected, not `default_gate`: a `corral.toml` written since it was read above must
    // not come in as the detected command.
    let gate = detected_gate(root)?;
    Ok((gate, Some("the project's detected test command".into())))
}

/// The detected test command as a gate, or the error that says how to give one.
fn detected_gate(root: &Path) -> Result<Vec<Verification>> {
    let gate = detect(root).default_gate();
    if gate.is_empty() {
        return Err(Error::invalid_request(format!(
            "no verification gate for {}: corral.toml has no [verify] table and no test command was found \
             in the project's files; pass --verify 'COMMAND' or run `corral init`",
            root.display()
        )));
    }
    Ok(gate)
}

/// The gate a workspace implies: its `corral.toml`'s, else its detected test command.
pub fn default_gate(root: &Path) -> Result<Vec<Verification>> {
    if let Some(gate) = gate_from_config(root)?.filter(|g| !g.is_empty()) {
        return Ok(gate);
    }
    detected_gate(root)
}

/// A gate command as a person writes it (`cargo test -p app`), parsed with corral's
/// grammar into one argv. A pipeline, a redirect, `cd` or an assignment is refused: the
/// gate runs one program; put more in a script.
pub fn parse_command(command: &str) -> Result<Verification> {
    let refuse = |why: &str| {
        Error::invalid_request(format!(
            "gate command {command:?} {why}: a gate phase is one program with its arguments; \
             give several phases, or put the steps in a script"
        ))
    };
    let line = corral_line::parse(command).map_err(|e| refuse(&format!("is refused ({e})")))?;
    let mut commands = line.commands();
    let (Some(corral_line::Command::Simple(simple)), None) = (commands.next(), commands.next())
    else {
        return Err(refuse("is not a single command"));
    };
    if !simple.redirects.is_empty() || !simple.assignments.is_empty() {
        return Err(refuse("has a redirect or an assignment"));
    }
    let argv: Vec<String> = simple.argv.iter().map(|w| w.value.clone()).collect();
    if argv.is_empty() {
        return Err(refuse("is empty"));
    }
    Ok(Verification::command(argv))
}

/// The `corral.toml` that `corral init` writes for `project`: commented allow rules for
/// its commands, a few denies, and its gate.
pub fn init_toml(project: &Project) -> String {
    let q = |argv: &Vec<String>| crate::line::display_argv(argv);
    let mut out = String::from(
        "# corral.toml: what an agent may run in this workspace, and what \"done\" means.\n\
         # Written by `corral init`; edit freely. `corral policy show` prints the effective policy.\n\n",
    );
    if project.toolchains.is_empty() {
        out.push_str("# No build or test files were recognised: name your own commands below.\n\n");
    } else {
        let names: Vec<String> = project
            .toolchains
            .iter()
            .map(|t| format!("{} ({})", t.name, t.evidence))
            .collect();
        out.push_str(&format!("# Found: {}.\n\n", names.join(", ")));
    }
    out.push_str("[exec]\n# The project's own commands. A command no rule names: `corral exec` runs it,\n# `corral run` asks you first (or runs it with --yes).\nallow = [\n");
    for t in &project.toolchains {
        for a in &t.allow {
            out.push_str(&format!("  {a:?},\n"));
        }
    }
    out.push_str("]\n# Never from an agent run: publishing and pushing.\ndeny = [\"git push*\", \"cargo publish*\", \"npm publish*\"]\n\n");
    out.push_str(
        "# The verification gate of `corral run` and `corral verify`: phases run in order in a\n\
         # sandbox (writes only in the workspace, network off); each must exit 0.\n[verify]\ncommands = [\n",
    );
    match project.test() {
        Some(test) => out.push_str(&format!("  {:?},\n", q(test))),
        None => out.push_str("  # \"make test\",\n"),
    }
    out.push_str("]\n");
    let mut others = Vec::new();
    for t in &project.toolchains {
        for (what, cmd) in [
            ("build", &t.build),
            ("test", &t.test),
            ("lint", &t.lint),
            ("format", &t.format),
        ] {
            if let Some(c) = cmd {
                others.push(format!("#   {what:<7} {}   ({})", q(c), t.name));
            }
        }
    }
    if !others.is_empty() {
        out.push_str("# Other commands found, to add as phases:\n");
        out.push_str(&others.join("\n"));
        out.push('\n');
    }
    out
}
