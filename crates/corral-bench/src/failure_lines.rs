//! What a model reads of a failing run's first result, in bytes, and whether it says why
//! the run failed: six failing runs through `Run::exec` with the default configuration.
//! Where the first result does not name the failing test and its message, the model is
//! taken to follow its marker with the `output` call it names, and on, until it has read
//! both: the calls and the bytes it read in all are counted. `CORRAL_BENCH_SHOW=1` prints
//! each first result too.
//!
//! `cargo test` (libtest, built with `rustc --test`), a `make -k` build with gcc and the
//! Python traceback are the real tools. pytest, `go test` and jest are printed in their own formats by a Python
//! script, so that the figures do not depend on which of them a machine has; each row
//! says which.
//!
//! Uses only what every version of the library has, so the same file measures a build
//! from before the failure lines (copy it into that checkout's bench and register it).

use std::path::Path;
use std::process::Command;

use corral::{ExecRequest, Run};

/// One failing run: how to make it, and the lines that say why it failed.
struct Scenario {
    name: &'static str,
    argv: Vec<String>,
    /// What the model needs to read: the failing test's name and its message.
    wanted: [&'static str; 2],
}

pub fn run() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let run = Run::builder(&ws)
        .store(dir.path().join("trace.db"))
        .policy(corral::Policy::permissive())
        .approver(corral::approve::ApproveAll)
        .open()
        .unwrap();
    println!(
        "{:<44} {:>9} {:>9} {:>9}  {:>5} {:>9}",
        "failing run", "output", "result", "omitted", "calls", "read"
    );
    for scenario in scenarios(&ws) {
        let outcome = run.exec(&ExecRequest::new(scenario.argv.clone())).unwrap();
        let omitted = outcome.stdout.window.omitted_bytes + outcome.stderr.window.omitted_bytes;
        if std::env::var_os("CORRAL_BENCH_SHOW").is_some() {
            println!("{}", outcome.observation);
        }
        let (calls, read) = follow(&run, &outcome.observation, &scenario.wanted);
        println!(
            "{:<44} {:>9} {:>9} {:>9}  {:>5} {:>9}",
            scenario.name,
            outcome.stdout.bytes + outcome.stderr.bytes,
            outcome.observation.len(),
            omitted,
            calls,
            read
        );
    }
}

/// Follow the markers from `first` until everything `wanted` has been read: the calls
/// made (the first included) and the bytes read in all.
fn follow(run: &Run, first: &str, wanted: &[&str]) -> (usize, usize) {
    let mut read = first.to_string();
    let mut latest = first.to_string();
    let mut calls = 1;
    while !wanted.iter().all(|w| read.contains(w)) {
        let Some(call) = latest
            .split("read them with output ")
            .nth(1)
            .and_then(|rest| rest.split(" …]").next())
        else {
            return (calls, usize::MAX);
        };
        let request: corral::OutputRequest = serde_json::from_str(call).unwrap();
        latest = run.output(&request).unwrap().observation;
        read.push_str(&latest);
        calls += 1;
    }
    (calls, read.len())
}

fn scenarios(ws: &Path) -> Vec<Scenario> {
    let python = |file: &str, body: &str| -> Vec<String> {
        std::fs::write(ws.join(file), body).unwrap();
        vec!["python3".into(), file.into()]
    };
    vec![
        Scenario {
            name: "pytest -v, 300 tests, 1 failure (script)",
            argv: python("pytest_like.py", PYTEST),
            wanted: [
                "test_ledger_balance",
                "AssertionError: ledger imbalance: expected 100, got 99",
            ],
        },
        Scenario {
            name: "cargo test, 200 tests, 1 failure (real)",
            argv: cargo_test(ws),
            wanted: ["tests::balance_is_kept", "ledger imbalance"],
        },
        Scenario {
            name: "make -k, 300 C files, 1 error (real gcc)",
            argv: make_build(ws),
            wanted: ["ledger_150.c:4:12: error:", "undeclared"],
        },
        Scenario {
            name: "go test -v, 200 tests, 1 failure (script)",
            argv: python("go_test_like.py", GO_TEST),
            wanted: [
                "--- FAIL: TestLedgerBalance",
                "ledger imbalance: expected 100, got 99",
            ],
        },
        Scenario {
            name: "jest --verbose, 40 files, 1 failure (script)",
            argv: python("jest_like.py", JEST),
            wanted: ["● ledger › balances", "Received: 99"],
        },
        Scenario {
            name: "Python traceback after 5 MB of log (real)",
            argv: python("worker.py", TRACEBACK),
            wanted: [
                "in reconcile",
                "LedgerError: ledger imbalance: expected 100, got 99",
            ],
        },
    ]
}

/// A build of 300 C files by `make -k` with real gcc, each file drawing a warning, one an
/// error: the build goes on past it, and its end names only the target that failed.
fn make_build(ws: &Path) -> Vec<String> {
    let dir = ws.join("build");
    std::fs::create_dir_all(&dir).unwrap();
    let mut objects = Vec::new();
    for i in 0..300 {
        let body = if i == 150 {
            "int ledger_150(void) {\n    int total = 0;\n    (void)total;\n    return balance + 1;\n}\n"
                .to_string()
        } else {
            format!("int ledger_{i:03}(void) {{\n    int unused;\n    return {i};\n}}\n")
        };
        std::fs::write(dir.join(format!("ledger_{i:03}.c")), body).unwrap();
        objects.push(format!("ledger_{i:03}.o"));
    }
    std::fs::write(
        dir.join("Makefile"),
        format!(
            "all: {}\n\n%.o: %.c\n\tgcc -Wall -Wextra -O2 -c $< -o $@\n",
            objects.join(" ")
        ),
    )
    .unwrap();
    vec![
        "make".into(),
        "-k".into(),
        "-C".into(),
        dir.display().to_string(),
    ]
}

/// A test binary of 200 tests, one failing, built with `rustc --test` (what `cargo test`
/// runs); the output is libtest's.
fn cargo_test(ws: &Path) -> Vec<String> {
    let mut src = String::from("#[cfg(test)]\nmod tests {\n");
    for i in 0..200 {
        if i == 117 {
            src.push_str(
                "    #[test]\n    fn balance_is_kept() {\n        let (got, want) = (99, 100);\n        assert_eq!(got, want, \"ledger imbalance\");\n    }\n",
            );
        } else {
            src.push_str(&format!(
                "    #[test]\n    fn imports_a_row_of_the_march_statement_{i:03}() {{\n        assert!({i} < 1000);\n    }}\n"
            ));
        }
    }
    src.push_str("}\n");
    let file = ws.join("ledger.rs");
    std::fs::write(&file, src).unwrap();
    let bin = ws.join("ledger-tests");
    let status = Command::new("rustc")
        .args(["--edition", "2021", "--test", "-o"])
        .arg(&bin)
        .arg(&file)
        .status()
        .unwrap();
    assert!(status.success(), "rustc --test failed");
    // One thread, so the order is the file's, as a reader of a log expects.
    vec![
        bin.display().to_string(),
        "--test-threads".into(),
        "1".into(),
    ]
}

/// pytest -v: 300 tests, the failing one printed 400 lines, which pytest shows after the
/// assertion, in its "Captured stdout call" section.
const PYTEST: &str = r#"
print("============================= test session starts ==============================")
print("platform linux -- Python 3.11.7, pytest-8.3.4, pluggy-1.5.0 -- /usr/bin/python3")
print("rootdir: /home/dev/ledger")
print("collected 300 items")
print()
for i in range(300):
    name = "test_ledger_balance" if i == 150 else f"test_imports_row_of_the_march_statement_{i:03}"
    verdict = "FAILED" if i == 150 else "PASSED"
    print(f"tests/test_ledger.py::{name} {verdict}".ljust(72) + f"[{(i + 1) * 100 // 300:3}%]")
print()
print("=" * 35 + " FAILURES " + "=" * 35)
print("_" * 29 + " test_ledger_balance " + "_" * 30)
print()
print("    def test_ledger_balance():")
print('        ledger = Ledger.load("fixtures/march.csv")')
print("        ledger.reconcile(verbose=True)")
print('>       assert ledger.balance() == 100, "ledger imbalance: expected 100, got 99"')
print("E       AssertionError: ledger imbalance: expected 100, got 99")
print("E       assert 99 == 100")
print("E        +  where 99 = <bound method Ledger.balance of <Ledger march>>()")
print()
print("tests/test_ledger.py:151: AssertionError")
print("-" * 29 + " Captured stdout call " + "-" * 29)
for i in range(400):
    print(f"reconcile: entry {i:04} account=ACME-{i % 17:02} amount={i * 7 % 1000:>4} balance ok")
print("=" * 27 + " short test summary info " + "=" * 28)
print("FAILED tests/test_ledger.py::test_ledger_balance - AssertionError: ledger imbalance: e...")
print("=" * 24 + " 1 failed, 299 passed in 3.21s " + "=" * 25)
raise SystemExit(1)
"#;

/// go test -v: 200 tests; the failing one's message is printed where it ran, and the end
/// says only FAIL and the package.
const GO_TEST: &str = r#"
for i in range(200):
    name = "TestLedgerBalance" if i == 120 else f"TestImportsRowOfTheMarchStatement{i:03}"
    print(f"=== RUN   {name}")
    if i == 120:
        print("    ledger_test.go:42: ledger imbalance: expected 100, got 99")
        print(f"--- FAIL: {name} (0.00s)")
    else:
        print(f"--- PASS: {name} (0.00s)")
print("FAIL")
print("FAIL\texample.com/ledger\t0.412s")
print("FAIL")
raise SystemExit(1)
"#;

/// jest --verbose: 40 files of 10 tests; the failure's details follow its file's list.
const JEST: &str = r#"
for f in range(40):
    failing = f == 22
    print(f"{'FAIL' if failing else 'PASS'} src/ledger/module{f:02}.test.js")
    print("  ledger" if failing else f"  module {f:02}")
    for t in range(10):
        if failing and t == 4:
            print("    ✕ balances (5 ms)")
        else:
            print(f"    ✓ imports row {t} of the march statement ({t % 4 + 1} ms)")
    print()
    if failing:
        print("  ● ledger › balances")
        print()
        print("    expect(received).toBe(expected) // Object.is equality")
        print()
        print("    Expected: 100")
        print("    Received: 99")
        print()
        print("      11 |   const ledger = load(\"march\");")
        print("      12 |")
        print("    > 13 |   expect(ledger.balance()).toBe(100);")
        print("         |                            ^")
        print("      14 | });")
        print()
        print("      at Object.toBe (src/ledger/module22.test.js:13:28)")
        print()
print("Test Suites: 1 failed, 39 passed, 40 total")
print("Tests:       1 failed, 399 passed, 400 total")
print("Snapshots:   0 total")
print("Time:        4.872 s")
print("Ran all test suites.")
raise SystemExit(1)
"#;

/// A worker that logs 5 MB and dies of an exception.
const TRACEBACK: &str = r#"
import sys

class LedgerError(Exception):
    pass

def reconcile(entries):
    for i in range(entries):
        print(f"2026-12-03 16:02:{i % 60:02} INFO reconcile: entry {i:06} account=ACME-{i % 17:02} ok")
    want, got = 100, 99
    raise LedgerError(f"ledger imbalance: expected {want}, got {got}")

def main():
    reconcile(75_000)

main()
"#;
