//! A failing run's first result says why it failed: the failure lines of the omitted
//! middle come with it, the result stays within the default 12 KiB window, and every
//! count it states is exact.

use crate::common;

use common::Fixture;
use corral::{Config, ErrorKind, ExecRequest, ShellRequest};

/// A pytest run as it prints when one test printed 400 lines before failing: its
/// assertion message lands in the middle of the output.
const PYTEST_LIKE: &str = r#"
for i in range(150):
    print(f"tests/test_import.py::test_row_{i:03} PASSED" + " " * 30 + f"[{i * 100 // 300:3}%]")
for i in range(400):
    print(f"reconcile: entry {i:04} account=ACME-{i % 17:02} amount={i * 7 % 1000} ok")
print("tests/test_ledger.py::test_ledger_balance FAILED" + " " * 25 + "[ 50%]")
for i in range(150, 300):
    print(f"tests/test_import.py::test_row_{i:03} PASSED" + " " * 30 + f"[{i * 100 // 300:3}%]")
print()
print("=" * 35 + " FAILURES " + "=" * 35)
print("_" * 29 + " test_ledger_balance " + "_" * 29)
print()
print("    def test_ledger_balance():")
print('        ledger = Ledger.load("fixtures/march.csv")')
print('>       assert ledger.balance() == 100, "ledger imbalance: expected 100, got 99"')
print("E       AssertionError: ledger imbalance: expected 100, got 99")
print("E       assert 99 == 100")
print()
print("tests/test_ledger.py:14: AssertionError")
print("-" * 29 + " Captured stdout call " + "-" * 29)
for i in range(300):
    print(f"reconcile: entry {i:04} account=ACME-{i % 17:02} amount={i * 7 % 1000} ok")
print("=" * 27 + " short test summary info " + "=" * 28)
print("FAILED tests/test_ledger.py::test_ledger_balance - AssertionError: ledger imbalance")
print("=" * 25 + " 1 failed, 299 passed in 3.21s " + "=" * 25)
raise SystemExit(1)
"#;

fn pytest_like() -> ExecRequest {
    ExecRequest::new(["python3", "-c", PYTEST_LIKE])
}

#[test]
fn a_failing_test_run_s_first_result_holds_its_assertion_within_12_kib() {
    let fx = Fixture::new();
    let run = fx.approving_run(Config::default());
    let outcome = run.exec(&pytest_like()).unwrap();
    let text = &outcome.observation;
    assert!(text.starts_with("exit 1 · "), "{text}");
    assert!(
        text.contains(":E       AssertionError: ledger imbalance: expected 100, got 99\n"),
        "{text}"
    );
    assert!(text.len() <= 12 * 1024, "{} bytes:\n{text}", text.len());

    // The counts are exact: what the window shows and omits is what the command printed,
    // and what the failure block shows and still omits is what the window omitted.
    let w = &outcome.stdout.window;
    let printed = std::fs::read_to_string(outcome.stdout.capture.as_ref().unwrap()).unwrap();
    let shown = (w.head.lines().count() + w.tail.lines().count()) as u64;
    assert_eq!(shown + w.omitted_lines, printed.lines().count() as u64);
    assert_eq!(
        (w.head.len() + w.tail.len()) as u64 + w.omitted_bytes,
        printed.len() as u64
    );
    let block = w.failures.as_ref().expect("failure lines");
    assert!(text.contains(&format!(
        "[… {} bytes, {} lines omitted; ",
        w.omitted_bytes, w.omitted_lines
    )));
    assert!(text.contains(&format!(
        " … {} bytes, {} lines still omitted; read them with output",
        w.omitted_bytes - block.shown_bytes,
        w.omitted_lines - block.shown_lines
    )));
    // Each line shown is the line `output` reads at that number.
    let lines: Vec<&str> = printed.lines().collect();
    for line in &block.lines {
        let n = line.number.expect("nothing was dropped") as usize;
        assert_eq!(lines[n - 1], line.text, "line {n}");
    }
}

#[test]
fn max_output_widens_one_call_and_bad_values_say_what_to_ask_for() {
    let fx = Fixture::new();
    let run = fx.approving_run(Config::default());
    let wide = run.exec(&pytest_like().max_output(64 * 1024)).unwrap();
    assert!(!wide.stdout.window.is_elided(), "{}", wide.observation);

    for bad in [0, 64 * 1024 + 1] {
        let err = run.exec(&pytest_like().max_output(bad)).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidRequest, "{err}");
        let err = run
            .shell(&ShellRequest::new("echo hi").max_output(bad))
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidRequest, "{err}");
    }
    let narrow = run
        .shell(&ShellRequest::new("seq 1 100000").max_output(2048))
        .unwrap();
    let w = &narrow.stdout.window;
    assert!(w.head.len() + w.tail.len() <= 2048);
}

/// A read the model asks for pages at 32 KiB whatever the window: a smaller window must not
/// cost more calls to read the middle it left out.
#[test]
fn a_read_of_the_middle_is_not_cut_to_the_window() {
    let fx = Fixture::new();
    let run = fx.approving_run(Config::default());
    let outcome = run.shell(&ShellRequest::new("seq 1 100000")).unwrap();
    let read = run
        .output(&corral::OutputRequest {
            step: Some(outcome.step.id),
            lines: Some("1-".into()),
            ..Default::default()
        })
        .unwrap();
    assert!(
        read.observation.len() > 30 * 1024,
        "{}",
        read.observation.len()
    );
    assert!(
        read.observation.len() <= 33 * 1024,
        "{}",
        read.observation.len()
    );
}

#[test]
fn the_run_s_budget_is_the_default_for_its_calls() {
    let fx = Fixture::new();
    let run = fx.approving_run(Config {
        output_budget: 4096,
        ..Config::default()
    });
    let outcome = run.exec(&pytest_like()).unwrap();
    let w = &outcome.stdout.window;
    assert!(w.head.len() + w.tail.len() <= 4096);
    assert!(
        outcome
            .observation
            .contains("AssertionError: ledger imbalance")
    );
}

/// Past the capture cap, a failure line in the dropped bytes is still shown, marked as
/// one `output` cannot read back; one in the kept tail keeps the number `output` reads.
#[test]
fn failure_lines_past_the_capture_cap_are_shown_and_marked() {
    let fx = Fixture::new();
    let run = fx.approving_run(Config {
        capture_cap: 256 * 1024,
        ..Config::default()
    });
    let script = r#"
for i in range(20000):
    print(f"build step {i:05} ok")
print("error: lost in the dropped middle")
for i in range(20000):
    print(f"build step {i:05} ok")
print("error[E0308]: kept in the tail")
for i in range(2000):
    print(f"build step {i:05} ok")
"#;
    let outcome = run
        .exec(&ExecRequest::new(["python3", "-c", script]))
        .unwrap();
    let text = &outcome.observation;
    assert!(
        text.contains("\ndropped:error: lost in the dropped middle\n"),
        "{text}"
    );
    assert!(text.contains("past the capture cap"), "{text}");
    let block = outcome.stdout.window.failures.as_ref().unwrap();
    let kept = block
        .lines
        .iter()
        .find(|l| l.text.contains("kept in the tail"))
        .expect("the kept failure");
    let file = std::fs::read_to_string(outcome.stdout.capture.as_ref().unwrap()).unwrap();
    let n = kept.number.expect("a kept line has a number") as usize;
    assert_eq!(file.lines().nth(n - 1), Some(kept.text.as_str()));
}
