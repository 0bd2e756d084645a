//! Why a run failed is in the first result a model reads, through the clients agent
//! builders use (stock pydantic-ai's `MCPToolset`, the official `mcp` client reading only
//! `content`): a real pytest run of 301 tests whose one failure printed 400 lines, a
//! `cargo test` with one failing test among 200, a `go test -v` and a `jest` run with one
//! failure each in the middle of their output (printed as those tools print it), and a
//! Python traceback after 5 MB of log. Each first result names the failing test
//! and its message, is at most 12 KB, and states exactly what it left out.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::python_clients::{content_client, pydantic_agent, python, script};

/// What a first result may weigh, as the model reads it.
const AT_MOST: usize = 12 * 1024;

/// A home (`HOME`) whose user policy lets everything run, and a workspace `ws` in it.
fn scratch() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".config/corral")).unwrap();
    std::fs::write(
        dir.path().join(".config/corral/config.toml"),
        "tier = \"permissive\"\napproval = \"on-request\"\n",
    )
    .unwrap();
    std::fs::create_dir_all(dir.path().join("ws")).unwrap();
    dir
}

/// The toolchain's own `cargo` and `rustc` (not rustup's proxies, which look for their
/// settings in `HOME`, here a scratch one).
fn toolchain() -> PathBuf {
    let out = std::process::Command::new("rustc")
        .args(["--print", "sysroot"])
        .output()
        .expect("rustc runs");
    PathBuf::from(String::from_utf8(out.stdout).unwrap().trim()).join("bin")
}

/// A crate in `ws` with 200 tests, of which `ledger_balances` fails with its message.
fn failing_crate(ws: &Path) {
    let bin = toolchain();
    std::fs::create_dir_all(ws.join("src")).unwrap();
    std::fs::create_dir_all(ws.join(".cargo")).unwrap();
    std::fs::write(
        ws.join("Cargo.toml"),
        "[package]\nname = \"ledger\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    )
    .unwrap();
    std::fs::write(
        ws.join(".cargo/config.toml"),
        format!(
            "[build]\nrustc = {:?}\n",
            bin.join("rustc").display().to_string()
        ),
    )
    .unwrap();
    let mut lib = String::from(
        "pub fn balance(entries: &[i64]) -> i64 { entries.iter().sum() }\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n",
    );
    for n in 0..199 {
        lib.push_str(&format!(
            "    #[test]\n    fn imports_statement_row_{n:03}_with_a_descriptive_name() {{ assert_eq!(balance(&[{n}, 1]), {n} + 1); }}\n"
        ));
    }
    lib.push_str(
        "    #[test]\n    fn ledger_balances() {\n        let total = balance(&[50, 49]);\n        assert_eq!(total, 100, \"ledger imbalance: expected 100, got {total}\");\n    }\n}\n",
    );
    std::fs::write(ws.join("src/lib.rs"), lib).unwrap();
}

/// A pytest suite in `ws/tests`: 300 passing cases with long names, and
/// `test_ledger_balances`, which prints 400 lines before its assertion fails, so that pytest
/// puts the captured lines between the assertion's message and the run's summary.
fn failing_pytest_suite(ws: &Path) {
    std::fs::create_dir_all(ws.join("tests")).unwrap();
    for module in 0..10 {
        std::fs::write(
            ws.join(format!("tests/test_statement_import_{module}.py")),
            "import pytest\n\n\
             @pytest.mark.parametrize('row', [f'row-{n:03}-of-the-quarterly-statement' for n in range(30)])\n\
             def test_imports_every_statement_row(row):\n    assert row\n",
        )
        .unwrap();
    }
    std::fs::write(
        ws.join("tests/test_zz_ledger.py"),
        "def test_ledger_balances():\n\
         \x20   for n in range(400):\n\
         \x20       print(f'reconciling entry {n:03} of the quarterly statement against the bank feed')\n\
         \x20   total = 50 + 49\n\
         \x20   assert total == 100, f'ledger imbalance: expected 100, got {total}'\n",
    )
    .unwrap();
}

/// The five runs, each as (the call, what names the failing test, its message).
fn runs(ws: &Path) -> Vec<(Value, &'static str, &'static str)> {
    failing_pytest_suite(ws);
    failing_crate(ws);
    let emit = script("failing/emit.py");
    std::fs::copy(&emit, ws.join("emit.py")).unwrap();
    let cargo = toolchain().join("cargo");
    vec![
        (
            json!({"tool": "exec", "args": {"argv": [python(), "-m", "pytest", "-v", "-p", "no:cacheprovider", "tests"]}}),
            "test_ledger_balances",
            // pytest's closing summary repeats only the message's first line; the
            // comparison's line is in the omitted middle, where the failure lines show it.
            "E       assert 99 == 100",
        ),
        (
            json!({"tool": "exec", "args": {"argv": [cargo, "test", "--offline", "--", "--test-threads=1"], "timeout": "240s"}}),
            "ledger_balances",
            "ledger imbalance: expected 100, got 99",
        ),
        (
            json!({"tool": "exec", "args": {"argv": [python(), "emit.py", "go"]}}),
            "TestLedgerBalance",
            "ledger imbalance: expected 100, got 99",
        ),
        (
            json!({"tool": "exec", "args": {"argv": [python(), "emit.py", "jest"]}}),
            "ledger › balances",
            "Received: 99",
        ),
        (
            json!({"tool": "exec", "args": {"argv": [python(), "emit.py", "log", "5000000"]}}),
            "in balance",
            "ValueError: ledger imbalance: expected 100, got 99",
        ),
    ]
}

fn holds_the_failure(read: &str, name: &str, message: &str) {
    assert!(read.contains(name), "no {name:?} in:\n{read}");
    assert!(read.contains(message), "no {message:?} in:\n{read}");
    assert!(
        read.contains("bytes") && read.contains("omitted"),
        "no omitted counts in:\n{read}"
    );
    assert!(
        read.len() <= AT_MOST,
        "{} bytes, over {AT_MOST}:\n{read}",
        read.len()
    );
}

#[test]
fn pydantic_ai_reads_each_failure_in_its_first_result() {
    let dir = scratch();
    let runs = runs(&dir.path().join("ws"));
    let steps: Vec<Value> = runs.iter().map(|(call, _, _)| call.clone()).collect();
    let seen = pydantic_agent(dir.path(), Value::Array(steps));
    assert_eq!(seen.len(), runs.len(), "{seen:?}");
    for ((_, name, message), read) in runs.iter().zip(&seen) {
        println!("{name}: the model read {} bytes", read.len());
        holds_the_failure(read, name, message);
    }
}

#[test]
fn the_official_client_reads_each_failure_in_its_content() {
    let dir = scratch();
    let runs = runs(&dir.path().join("ws"));
    let calls: Vec<Value> = runs.iter().map(|(call, _, _)| call.clone()).collect();
    let lines = content_client(dir.path(), &calls);
    for ((_, name, message), line) in runs.iter().zip(&lines[1..]) {
        let text = line["text"].as_str().unwrap_or_default();
        println!("{name}: the client read {} bytes of content", text.len());
        holds_the_failure(text, name, message);
    }
}
