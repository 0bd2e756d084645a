//! A failing test run whose runner prints TAP (`node --test` piped, bats, tape) returns
//! its `not ok` lines, with their diagnostics, in the first result, however much passing
//! output surrounds them; a TODO test is no failure; a stream that stopped before its plan
//! says so.

use crate::common;

use common::Fixture;
use corral::{Config, ExecRequest, Outcome, ShellRequest};

/// The failure block of what the model read: from the marker that counts the failure
/// lines to the one that says what is still omitted (the rest of the observation holds
/// the wall time and a store's step id).
fn block(outcome: &Outcome) -> &str {
    let text = &outcome.observation;
    let start = text.find("[… ").expect("a marker");
    let end = start + text[start..].find(" …]\n").expect("the marker's end");
    &text[start..end]
}

/// 300 passing tests around a failing subtest in its failing parent, and a TODO test that
/// fails as it is allowed to.
const NODE_TESTS: &str = r#"
const test = require('node:test');
const assert = require('node:assert');
for (let i = 0; i < 150; i++) test(`imports row ${i} of the march statement`, () => {});
test('ledger', async (t) => {
  await t.test('balances', () => {
    assert.strictEqual(99, 100, 'ledger imbalance: expected 100, got 99');
  });
});
test('exports csv', { todo: 'waits for the exporter' }, () => { assert.ok(false); });
for (let i = 150; i < 300; i++) test(`imports row ${i} of the march statement`, () => {});
"#;

#[test]
fn a_failing_node_test_run_piped_returns_its_not_ok_lines() {
    if std::process::Command::new("node")
        .arg("--version")
        .output()
        .is_err()
    {
        common::skip("no node on this host");
        return;
    }
    let fx = Fixture::new();
    std::fs::write(fx.workspace().join("ledger.test.js"), NODE_TESTS).unwrap();
    let run = fx.approving_run(Config::default());
    let outcome = run
        .shell(&ShellRequest::new("node --test ledger.test.js | cat"))
        .unwrap();
    let text = &outcome.observation;
    assert!(
        outcome.stdout.bytes > 10 * 1024,
        "{} bytes",
        outcome.stdout.bytes
    );
    assert!(text.len() <= 12 * 1024, "{} bytes:\n{text}", text.len());
    let block = block(&outcome);
    // The failing subtest with its YAML block, and its parent.
    assert!(block.contains(":    not ok 1 - balances\n"), "{text}");
    assert!(
        block.contains("-        ledger imbalance: expected 100, got 99\n"),
        "{text}"
    );
    assert!(block.contains(":not ok 151 - ledger\n"), "{text}");
    // The TODO test failed as it may: no failure line.
    assert!(
        !block.contains(":not ok 152 - exports csv # TODO"),
        "{text}"
    );
    assert!(block.contains("2 of them look like failures"), "{text}");
}

/// A bats-like script: a plan of 700, 600 tests (one failing, one TODO), then its runner
/// dies.
const SCRIPT: &str = r##"
echo 1..700
i=1
while [ $i -le 300 ]; do echo "ok $i - imports row $i of the march statement"; i=$((i+1)); done
echo "not ok 301 - ledger balances"
echo "# (in test file test/ledger.bats, line 12)"
echo "#   \`[ \"\$balance\" -eq 100 ]' failed"
echo "not ok 302 - exports csv # TODO waits for the exporter"
i=303
while [ $i -le 600 ]; do echo "ok $i - imports row $i of the march statement"; i=$((i+1)); done
echo "the runner died: out of memory" >&2
exit 1
"##;

#[test]
fn a_tap_script_s_failure_and_its_unmet_plan_reach_the_model() {
    let fx = Fixture::new();
    let run = fx.approving_run(Config::default());
    let outcome = run.exec(&ExecRequest::new(["sh", "-c", SCRIPT])).unwrap();
    let text = &outcome.observation;
    assert!(text.starts_with("exit 1 · "), "{text}");
    assert!(
        outcome.stdout.bytes > 10 * 1024,
        "{} bytes",
        outcome.stdout.bytes
    );
    let block = block(&outcome);
    assert!(block.contains(":not ok 301 - ledger balances\n"), "{text}");
    assert!(
        block.contains("note: TAP plan on line 1: planned 700, ran 600\n"),
        "{text}"
    );
    // Each line shown is the line `output` reads at that number.
    let printed = std::fs::read_to_string(outcome.stdout.capture.as_ref().unwrap()).unwrap();
    let lines: Vec<&str> = printed.lines().collect();
    for line in &outcome.stdout.window.failures.as_ref().unwrap().lines {
        let n = line.number.expect("nothing was dropped") as usize;
        assert_eq!(lines[n - 1], line.text, "line {n}");
    }
    insta::assert_snapshot!(
        block.replace(&format!("\"step\":{}", outcome.step.id), "\"step\":STEP")
    );
}
