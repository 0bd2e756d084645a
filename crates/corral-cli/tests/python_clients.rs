//! What a model reads through stock Python clients: pydantic-ai's own `MCPToolset` with a
//! scripted model, and the official `mcp` client reading only `content`.
//!
//! The clients come from PyPI by name, in a venv made once in the tests' scratch root
//! (`corral_test_support::made_once`), or the interpreter `CORRAL_TEST_PYTHON` names.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use serde_json::{Value, json};

/// The packages the clients need, by name: the README's own install lines for pydantic-ai
/// and the OpenAI Agents SDK (as a reader would type them), the official `mcp` client and
/// pytest for the workspace's suite.
fn packages() -> Vec<String> {
    let readme = std::fs::read_to_string(readme()).unwrap();
    let mut packages: Vec<String> = ["pydantic-ai-slim[", "openai-agents"]
        .iter()
        .map(|name| {
            let start = readme
                .find(&format!("pip install \"{name}"))
                .unwrap_or_else(|| panic!("the README has no `pip install \"{name}…\"` line"));
            let quoted = &readme[start + "pip install \"".len()..];
            quoted[..quoted.find('"').unwrap()].to_string()
        })
        .collect();
    packages.extend(["mcp>=2.3,<3".to_string(), "pytest>=8".to_string()]);
    packages
}

pub(crate) fn readme() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md")
}

/// A Python with the clients installed.
pub(crate) fn python() -> &'static Path {
    static PYTHON: OnceLock<PathBuf> = OnceLock::new();
    PYTHON.get_or_init(|| {
        if let Some(python) = std::env::var_os("CORRAL_TEST_PYTHON") {
            return PathBuf::from(python);
        }
        // Boxed calls run it too: made once in the tests' scratch root, which the box shows
        // wherever the checkout is.
        let packages = packages();
        let venv = corral_test_support::made_once("python-clients", &packages.join("\n"), |venv| {
            let made = Command::new("python3")
                .args(["-m", "venv", "--clear"])
                .arg(venv)
                .status()
                .expect("python3 runs");
            assert!(
                made.success(),
                "python3 -m venv failed: install python3-venv"
            );
            let installed = Command::new(venv.join("bin/python"))
                .args(["-m", "pip", "install", "--quiet"])
                .args(&packages)
                .status()
                .expect("pip runs");
            assert!(
                installed.success(),
                "pip could not install {packages:?} from the package registry"
            );
            true
        });
        venv.expect("the venv was made").join("bin/python")
    })
}

pub(crate) fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/python")
        .join(name)
}

fn corral() -> &'static str {
    env!("CARGO_BIN_EXE_corral")
}

/// Nothing is asked about but what a test's own rules say: the clients here cannot be asked.
const PERMISSIVE: &str = "tier = \"permissive\"\napproval = \"on-request\"\n";

/// A home directory (`HOME`) with the user's policy file (`~/.config/corral/config.toml`)
/// holding `policy`, and a workspace `ws` in it holding a 300-test pytest suite whose one
/// failure is `test_answer`. The MCP SDKs hand a stdio server only a few variables (HOME,
/// PATH, …), so the server finds its policy and its trace by `HOME`, as a user's would.
fn failing_suite(policy: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".config/corral")).unwrap();
    std::fs::write(dir.path().join(".config/corral/config.toml"), policy).unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(ws.join("tests")).unwrap();
    for module in 0..10 {
        std::fs::write(
            ws.join(format!("tests/test_configuration_module_{module}.py")),
            "import pytest\n\n\
             @pytest.mark.parametrize('case', [f'case-{n:03}-with-a-long-descriptive-identifier' for n in range(30)])\n\
             def test_parses_every_supported_configuration_format(case):\n    assert case\n",
        )
        .unwrap();
    }
    std::fs::write(
        ws.join("tests/test_zz_answer.py"),
        "def compute():\n    return 41\n\n\ndef test_answer():\n    assert compute() == 42, 'the answer drifted'\n",
    )
    .unwrap();
    dir
}

/// Run the pydantic-ai agent script in `dir/ws` through `steps`; what its model saw.
pub(crate) fn pydantic_agent(dir: &Path, steps: Value) -> Vec<String> {
    let bin_dir = Path::new(corral()).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = Command::new(python())
        .arg(script("pydantic_agent.py"))
        .arg(readme())
        .arg(steps.to_string())
        .current_dir(dir.join("ws"))
        .env("PATH", path)
        .env("HOME", dir)
        .env("XDG_CACHE_HOME", dir.join("cache"))
        // The README's snippet names a provider; the scripted model replaces it.
        .env("ANTHROPIC_API_KEY", "not-used")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "the agent failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["output"], "done", "{report}");
    report["seen"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect()
}

fn pytest_argv() -> Value {
    json!([
        python(),
        "-m",
        "pytest",
        "-v",
        "-p",
        "no:cacheprovider",
        "tests"
    ])
}

#[test]
fn a_pydantic_ai_model_sees_the_failing_test_and_its_message() {
    let dir = failing_suite(PERMISSIVE);
    let seen = pydantic_agent(
        dir.path(),
        json!([{"tool": "exec", "args": {"argv": pytest_argv()}}]),
    );
    assert_eq!(seen.len(), 1, "{seen:?}");
    let read = &seen[0];
    println!("the model read {} bytes in one call", read.len());
    assert!(read.contains("test_answer"), "{read}");
    assert!(read.contains("the answer drifted"), "{read}");
    assert!(read.contains("assert 41 == 42"), "{read}");
    assert!(read.contains("exit 1"), "{read}");
}

/// The shared fixtures live in the tests' scratch root and change no mode elsewhere: an
/// earlier suite opened `target/` and the directories above the venv to every local user,
/// who could then plant a venv, a wheel or a helper that root's pass ran.
#[test]
fn the_shared_fixtures_leave_the_target_directory_closed() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let target = tmp.parent().unwrap();
    let mode = |dir: &Path| std::fs::metadata(dir).unwrap().permissions().mode() & 0o7777;
    let before = [mode(target), mode(tmp)];
    let python = python();
    let helper = crate::common::testbin();
    assert_eq!([mode(target), mode(tmp)], before);
    for dir in [target, tmp] {
        assert_eq!(
            mode(dir) & 0o1002,
            0,
            "{} is open to every local user (mode {:o}): an older suite made it so; chmod 755 it",
            dir.display(),
            mode(dir)
        );
    }
    assert!(
        Path::new(&helper).starts_with(corral_test_support::scratch_root()),
        "{helper}"
    );
    if std::env::var_os("CORRAL_TEST_PYTHON").is_none() {
        // This uid's venv, or root's for an ordinary user: in a scratch root either way,
        // held by its owner alone. (Its interpreter is a link to the Python it was made from.)
        let venv = python.parent().and_then(Path::parent).unwrap();
        let root = venv.parent().unwrap();
        assert!(
            corral_test_support::scratch::trusted(venv, root),
            "{}",
            venv.display()
        );
    }
}

#[test]
fn refusals_in_a_row_do_not_end_a_pydantic_ai_run() {
    let dir = failing_suite(&format!("{PERMISSIVE}[exec]\ndeny = [\"rm\"]\n"));
    std::fs::write(dir.path().join("ws/keep"), "").unwrap();
    let seen = pydantic_agent(
        dir.path(),
        json!([
            {"tool": "shell", "args": {"line": "echo 'unterminated"}},
            {"tool": "exec", "args": {"argv": ["rm", "keep"]}},
            {"tool": "exec", "args": {"argv": ["rm", "-f", "keep"]}},
            {"tool": "exec", "args": {"argv": ["echo", "still here"]}},
        ]),
    );
    assert_eq!(seen.len(), 4, "{seen:?}");
    for refused in &seen[..3] {
        assert!(!refused.starts_with("RETRY"), "{refused}");
        let fields: Value = serde_json::from_str(refused).unwrap();
        assert_eq!(fields["status"], "refused", "{refused}");
        // What to do instead is in the observation, once, not repeated as a field.
        assert!(fields.get("hint").is_none(), "{refused}");
        assert!(
            fields["observation"]
                .as_str()
                .is_some_and(|o| !o.is_empty())
        );
    }
    let denied: Value = serde_json::from_str(&seen[1]).unwrap();
    assert_eq!(denied["rule"], "rm");
    assert!(seen[3].contains("still here"), "{}", seen[3]);
    assert!(dir.path().join("ws/keep").exists());
}

#[test]
fn following_the_omission_marker_reads_the_middle() {
    let dir = failing_suite(PERMISSIVE);
    let seen = pydantic_agent(
        dir.path(),
        json!([
            {"tool": "exec", "args": {"argv": ["seq", "1", "100000"]}},
            {"follow": "output"},
            {"tool": "output", "args": {"step": 1, "grep": "^5000[0-2]$", "context": 1}},
        ]),
    );
    assert!(
        seen[0].contains("omitted; read them with output"),
        "{}",
        seen[0]
    );
    let page: Value = serde_json::from_str(&seen[1]).unwrap();
    let text = page["observation"].as_str().unwrap();
    // The first omitted line, numbered as grep -n numbers it, follows the head.
    let first = text.lines().nth(1).unwrap();
    let (number, value) = first.split_once(':').unwrap();
    assert_eq!(number, value, "{text}");
    assert!(text.contains("read on with output"), "{text}");
    let grep: Value = serde_json::from_str(&seen[2]).unwrap();
    let text = grep["observation"].as_str().unwrap();
    assert!(text.contains("49999-49999\n50000:50000\n"), "{text}");
    assert!(text.contains("3 lines match"), "{text}");
}

#[test]
fn another_runs_step_is_an_error_not_its_output() {
    let dir = failing_suite(PERMISSIVE);
    // A step of an earlier run in the same store.
    let earlier = Command::new(corral())
        .args(["exec", "--", "echo", "someone else's output"])
        .current_dir(dir.path().join("ws"))
        .env("HOME", dir.path())
        .env("XDG_CACHE_HOME", dir.path().join("cache"))
        .env_remove("CORRAL_STORE")
        .env_remove("XDG_STATE_HOME")
        .output()
        .unwrap();
    assert!(earlier.status.success());
    let seen = pydantic_agent(dir.path(), json!([{"tool": "output", "args": {"step": 1}}]));
    assert!(!seen[0].contains("someone else"), "{}", seen[0]);
    assert!(seen[0].contains("not a step of this run"), "{}", seen[0]);
}

/// The official client, reading only `content`, against `corral mcp` in `dir/ws` with
/// `HOME` at `dir`, through `calls` (see `python/mcp_content_client.py`): the tool list,
/// then a line for each call.
pub(crate) fn content_client(dir: &Path, calls: &[Value]) -> Vec<Value> {
    let mut child = Command::new(python())
        .arg(script("mcp_content_client.py"))
        .arg(corral())
        .args(["mcp", "--workspace"])
        .arg(dir.join("ws"))
        .env("HOME", dir)
        .env("XDG_CACHE_HOME", dir.join("cache"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        for call in calls {
            writeln!(stdin, "{call}").unwrap();
        }
    }
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn the_official_client_reading_only_content_sees_the_failure() {
    let dir = failing_suite(PERMISSIVE);
    let calls = [
        json!({"tool": "exec", "args": {"argv": pytest_argv()}}),
        json!({"tool": "output", "args": {"step": 1, "grep": "assert", "context": 2}}),
        json!({"tool": "shell", "args": {"line": "echo 'unterminated"}}),
    ];
    let lines = content_client(dir.path(), &calls);
    assert!(
        lines[0]["tools"]
            .as_array()
            .unwrap()
            .contains(&json!("output"))
    );
    let pytest = &lines[1];
    let text = pytest["text"].as_str().unwrap();
    assert!(text.contains("test_answer"), "{text}");
    assert!(text.contains("assert 41 == 42"), "{text}");
    assert_eq!(pytest["structured"]["observation"], pytest["text"]);
    let grep = lines[2]["text"].as_str().unwrap();
    assert!(grep.contains(":>       assert compute() == 42"), "{grep}");
    let refused = &lines[3];
    assert_eq!(refused["is_error"], false, "{refused}");
    assert_eq!(refused["structured"]["status"], "refused");
    assert_eq!(refused["structured"]["layer"], "grammar");
}

/// The bar of the box for whoever runs corral (root, or in `.ci/run`'s second pass an
/// ordinary user): on its defaults, with no policy of the person's, the official client
/// (which cannot be asked anything) runs a test suite, a dev server answered over the
/// run's loopback by a later call, and a REPL on a terminal, with nothing refused or asked.
#[test]
fn the_official_client_runs_tests_a_dev_server_and_a_repl_without_asking() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let python = python().display().to_string();
    let calls = [
        json!({"tool": "shell", "args": {"line": "echo 'def add(a, b):\n    return a + b' > app.py"}}),
        json!({"tool": "exec", "args": {"argv": [&python, "-c", "open('test_app.py', 'w').write('import app\\ndef test_add():\\n    assert app.add(2, 3) == 5\\n')"]}}),
        json!({"tool": "exec", "args": {"argv": [&python, "-m", "pytest", "-q", "-p", "no:cacheprovider"]}}),
        json!({"tool": "shell_start", "args": {"line": format!("{python} -u -m http.server {port} --bind 127.0.0.1")}}),
        json!({"tool": "shell_poll", "args": {"wait_ms": 1000}, "handle_of": 3, "until": "Serving HTTP"}),
        json!({"tool": "exec", "args": {"argv": [&python, "-c", format!("import urllib.request; print(urllib.request.urlopen('http://127.0.0.1:{port}/app.py').read().decode())")]}}),
        json!({"tool": "shell_start", "args": {"line": format!("{python} -q"), "tty": true, "rows": 24, "cols": 80}}),
        json!({"tool": "shell_write", "args": {"text": "print(6 * 7)\n"}, "handle_of": 6}),
        json!({"tool": "shell_poll", "args": {"wait_ms": 1000}, "handle_of": 6, "until": "42", "unless": [7, "\n42"]}),
        json!({"tool": "shell_kill", "args": {}, "handle_of": 3}),
        json!({"tool": "shell_kill", "args": {}, "handle_of": 6}),
    ];
    let lines = content_client(dir.path(), &calls);
    // Where the box is not whole on this host the server asks, and this client cannot be
    // asked: that posture is `mcp_default_posture`'s and `ordinary_user`'s to check, and
    // a failure where `.ci/run` found the namespaces this user may make.
    let instructions = lines[0]["instructions"].as_str().unwrap_or_default();
    if !instructions.contains("Every confinement layer is enforced") {
        crate::common::not_expecting_a_whole_box(instructions);
        eprintln!("skipped: not every confinement layer is enforced here: {instructions}");
        return;
    }
    let answers = &lines[1..];
    for (call, answer) in calls.iter().zip(answers) {
        let text = answer["text"].as_str().unwrap_or_default();
        assert_ne!(answer["is_error"], true, "{call}: {text}");
        assert!(
            answer["structured"].get("layer").is_none_or(Value::is_null),
            "{call} was refused: {text}"
        );
        assert!(!text.contains("not approved"), "{call}: {text}");
    }
    let text = |i: usize| answers[i]["text"].as_str().unwrap_or_default().to_string();
    assert!(text(2).contains("1 passed"), "{}", text(2));
    assert!(text(4).contains("Serving HTTP"), "{}", text(4));
    assert!(text(5).contains("return a + b"), "{}", text(5));
    assert!(
        text(7).contains("\n42") || text(8).contains("42"),
        "{}{}",
        text(7),
        text(8)
    );
}
