//! Each failure recogniser (`capture::failures`) against its tool's real output, buried in
//! the middle of a long log as a model meets it, rendered as the model reads it; and the
//! properties the block keeps whatever it is given. Here, above what they render, so that
//! capturing does not reach up to rendering even in its tests.

use std::path::PathBuf;
use std::time::Duration;

use proptest::prelude::*;

use crate::capture::failures::recognisers::RECOGNISERS;
use crate::capture::failures::scan::{Scan, recognise};
use crate::capture::failures::{MAX_BYTES, MAX_LINES};
use crate::capture::{Sink, window};
use crate::config::ReadMore;
use crate::outcome::{Status, StreamReport};
use crate::output::{Pointer, Source, StreamName};

/// Every fixture, named by the tool that printed it, with what its block must show.
const FIXTURES: &[(&str, &str, &[&str])] = &[
    (
        "pytest",
        include_str!("../capture/failures/fixtures/pytest.txt"),
        &[
            "E       AssertionError: ledger imbalance: expected 100",
            "FAILED tests/test_ledger.py::test_ledger_balance",
        ],
    ),
    (
        "cargo_test",
        include_str!("../capture/failures/fixtures/cargo_test.txt"),
        &[
            "test ledger::tests::balance ... FAILED",
            "failed: ledger imbalance",
        ],
    ),
    (
        "rustc",
        include_str!("../capture/failures/fixtures/rustc.txt"),
        &["error[E0308]: mismatched types", "src/ledger.rs:42:20"],
    ),
    (
        "go_test",
        include_str!("../capture/failures/fixtures/go_test.txt"),
        &[
            "ledger_test.go:14: ledger imbalance: expected 100, got 99",
            "--- FAIL: TestLedgerBalance",
        ],
    ),
    (
        "go_panic",
        include_str!("../capture/failures/fixtures/go_panic.txt"),
        &["panic: runtime error: index out of range"],
    ),
    (
        "jest",
        include_str!("../capture/failures/fixtures/jest.txt"),
        &["● ledger › balances", "Expected: 100", "Received: 99"],
    ),
    (
        "vitest",
        include_str!("../capture/failures/fixtures/vitest.txt"),
        &[
            "× ledger > balances",
            "AssertionError: expected 99 to be 100",
        ],
    ),
    (
        "mocha",
        include_str!("../capture/failures/fixtures/mocha.txt"),
        &[
            "1 failing",
            "AssertionError [ERR_ASSERTION]: ledger imbalance",
        ],
    ),
    (
        "tsc",
        include_str!("../capture/failures/fixtures/tsc.txt"),
        &["error TS2322", "error TS2339"],
    ),
    (
        "eslint",
        include_str!("../capture/failures/fixtures/eslint.txt"),
        &["'balance' is not defined", "✖ 2 problems"],
    ),
    (
        "gcc",
        include_str!("../capture/failures/fixtures/gcc.txt"),
        &[
            "error: 'balance' undeclared",
            "undefined reference to `ledger_total'",
        ],
    ),
    (
        "python_traceback",
        include_str!("../capture/failures/fixtures/python_traceback.txt"),
        &[
            "Traceback (most recent call last):",
            "ledger.LedgerError: ledger imbalance: expected 100, got 99",
            "File \"/app/ledger.py\", line 41, in reconcile",
        ],
    ),
    (
        "java",
        include_str!("../capture/failures/fixtures/java.txt"),
        &[
            "java.lang.IllegalStateException: ledger imbalance",
            "Caused by: java.io.IOException",
        ],
    ),
    (
        "maven",
        include_str!("../capture/failures/fixtures/maven.txt"),
        &[
            "AssertionFailedError: ledger imbalance ==> expected: <100> but was: <99>",
            "BUILD FAILURE",
        ],
    ),
    (
        "gradle",
        include_str!("../capture/failures/fixtures/gradle.txt"),
        &["LedgerTest > balances() FAILED", "BUILD FAILED"],
    ),
    (
        "make",
        include_str!("../capture/failures/fixtures/make.txt"),
        &["make: *** [Makefile:8: all] Error 2", "expected ';'"],
    ),
    // `node --test` piped: a failing subtest inside its failing parent, each with its
    // YAML block; a TODO and a SKIP that are no failures.
    (
        "tap_node",
        include_str!("../capture/failures/fixtures/tap_node.txt"),
        &[
            ":    not ok 1 - balances\n",
            "-        ledger imbalance: expected 100, got 99\n",
            ":not ok 2 - ledger\n",
            "-  error: '1 subtest failed'\n",
        ],
    ),
    // bats: a leading plan, the `#` lines below a failing test.
    (
        "tap_bats",
        include_str!("../capture/failures/fixtures/tap_bats.txt"),
        &[
            ":not ok 2 balances\n",
            "-#   `[ \"$balance\" -eq 100 ]' failed\n",
        ],
    ),
    // tape: the YAML block, then a bail out.
    (
        "tap_tape",
        include_str!("../capture/failures/fixtures/tap_tape.txt"),
        &[
            ":not ok 2 should be strictly equal\n",
            "-    actual:   99\n",
            ":Bail out! the ledger database is unreachable\n",
        ],
    ),
];

/// Ordinary log lines, none of which looks like a failure.
fn noise(from: usize, n: usize) -> String {
    (from..from + n)
        .map(|i| {
            format!(
                "2026-12-03 16:02:{:02} INFO worker: processed batch {i} ok\n",
                i % 60
            )
        })
        .collect()
}

/// `text` captured in chunks of `chunk` bytes, and the window of it within `budget`.
fn captured(
    text: &str,
    chunk: usize,
    budget: usize,
) -> (crate::capture::Captured, crate::capture::Window) {
    let dir = tempfile::tempdir().unwrap();
    let mut sink = Sink::new(dir.path().join("c"), 1 << 30).scanning();
    for piece in text.as_bytes().chunks(chunk) {
        sink.write(piece).unwrap();
    }
    let captured = sink.finish();
    let window = window(&captured, budget).unwrap();
    (captured, window)
}

/// The observation a model reads of `text` on stdout, within `budget`.
fn observe(text: &str, budget: usize) -> String {
    let (captured, window) = captured(text, 4096, budget);
    let stdout = StreamReport {
        bytes: captured.bytes,
        lines: captured.lines,
        window,
        capture: captured.path.clone(),
        capture_error: None,
    };
    let pointer = Pointer {
        style: ReadMore::Tool,
        store: PathBuf::new(),
        run_id: "r".into(),
    };
    super::observation(
        &Status::Exited { code: 1 },
        Duration::ZERO,
        &[],
        [&stdout, &StreamReport::default()],
        0,
        Source::Step(7, StreamName::Stdout),
        &pointer,
    )
}

/// A fixture between 300 lines of log before and 300 after: well inside what a 4 KiB
/// window leaves out.
fn buried(fixture: &str) -> String {
    format!("{}{fixture}{}", noise(0, 300), noise(300, 300))
}

#[test]
fn each_tool_s_failure_is_shown_from_the_omitted_middle() {
    for (name, fixture, wanted) in FIXTURES {
        let observation = observe(&buried(fixture), 4096);
        for want in *wanted {
            assert!(
                observation.contains(want),
                "{name}: {want:?} is not in\n{observation}"
            );
        }
        // The block comes out of the window's budget: the result stays the size asked.
        assert!(
            observation.len() <= 4096,
            "{name}: {} bytes",
            observation.len()
        );
        insta::assert_snapshot!(format!("failures_{name}"), observation);
    }
}

#[test]
fn every_recogniser_has_a_fixture_that_it_recognises() {
    for (i, r) in RECOGNISERS.iter().enumerate() {
        let seen = FIXTURES.iter().any(|(_, fixture, _)| {
            fixture.lines().any(|line| {
                recognise(line.as_bytes()).is_some_and(|found| std::ptr::eq(found, &RECOGNISERS[i]))
            })
        });
        assert!(seen, "no fixture has a line for {} {:?}", r.tool, r.pattern);
    }
}

#[test]
fn every_pattern_holds_one_of_its_literals() {
    // The prefilter is sound only if each pattern's lines contain one of its literals:
    // every fixture line a pattern matches must.
    for (_, fixture, _) in FIXTURES {
        for line in fixture.lines() {
            for r in RECOGNISERS {
                if regex::Regex::new(r.pattern).unwrap().is_match(line) {
                    assert!(
                        r.literals.iter().any(|l| line.contains(l)),
                        "{line:?} matches {:?} without its literals",
                        r.pattern
                    );
                }
            }
        }
    }
}

#[test]
fn warnings_and_passing_lines_are_not_failures() {
    for line in [
        "warning: unused variable: `total`",
        "test ledger::tests::close ... ok",
        "--- PASS: TestLedgerClose (0.00s)",
        "tests/test_ledger.py::test_ledger_close PASSED                           [100%]",
        "PASS src/import.test.js",
        "  12:7   warning  'unused' is assigned a value but never used  no-unused-vars",
        "    raise LedgerError(f\"ledger imbalance\")",
        "2026-12-03 16:02:11 INFO no errors: 0 failed",
    ] {
        let found = recognise(line.as_bytes());
        assert!(found.is_none(), "{line:?} taken for {found:?}");
    }
}

#[test]
fn a_window_that_shows_everything_shows_no_block() {
    let (_, window) = captured(
        include_str!("../capture/failures/fixtures/pytest.txt"),
        4096,
        64 * 1024,
    );
    assert!(window.failures.is_none());
}

#[test]
fn failures_in_the_shown_head_or_tail_are_not_repeated() {
    let text = format!(
        "{}{}",
        include_str!("../capture/failures/fixtures/go_test.txt"),
        noise(0, 500)
    );
    let (_, window) = captured(&text, 4096, 2048);
    assert!(window.head.contains("--- FAIL"));
    assert!(window.failures.is_none(), "{:?}", window.failures);
}

#[test]
fn many_failures_keep_the_block_in_budget_and_the_count_exact() {
    // 1000 failing tests, far more than the block shows or the scan keeps.
    let failing: String = (0..1000)
        .map(|i| format!("test ledger::tests::t{i:04} ... FAILED\n"))
        .collect();
    let text = format!("{}{failing}{}", noise(0, 200), noise(200, 200));
    let (_, window) = captured(&text, 4096, 4096);
    let block = window.failures.expect("a block");
    assert_eq!((block.matches, block.exact), (1000, true));
    assert!(block.shown_matches < 1000);
    let shown = block.text();
    assert!(shown.len() <= MAX_BYTES && shown.lines().count() <= MAX_LINES);
    // Both ends: the first failure and the last.
    assert!(
        shown.contains("t0000") && shown.contains("t0999"),
        "{shown}"
    );
}

#[test]
fn a_line_longer_than_shown_is_cut_and_counted() {
    let long = format!("error: {}\n", "x".repeat(5000));
    let text = format!("{}{long}{}", noise(0, 200), noise(200, 200));
    let observation = observe(&text, 4096);
    assert!(observation.contains("error: xxx"), "{observation}");
    assert!(observation.contains("x…\n"), "{observation}");
}

/// The numbers shown are the lines `output` reads: line N of the capture is the shown text.
#[test]
fn numbers_are_the_capture_s_line_numbers() {
    let text = buried(include_str!("../capture/failures/fixtures/cargo_test.txt"));
    let (_, window) = captured(&text, 4096, 4096);
    let block = window.failures.unwrap();
    let lines: Vec<&str> = text.lines().collect();
    for shown in &block.lines {
        let n = shown.number.unwrap() as usize;
        assert_eq!(lines[n - 1], shown.text, "line {n}");
    }
}

#[test]
fn a_scan_of_an_unfinished_last_line_tests_it_too() {
    let mut scan = Scan::new();
    scan.feed(b"ok\nerror: the last words");
    assert_eq!(scan.finish().total, 1);
}

/// Whether `line` is a failure line, for the TAP tests (a TODO line is recognised, as
/// no failure).
fn is_failure(line: &str) -> bool {
    recognise(line.as_bytes()).is_some_and(|r| r.is_failure())
}

#[test]
fn tap_tests_marked_todo_or_skip_are_not_failures_in_any_case() {
    for line in [
        "not ok 3 - exports csv # TODO waits for the exporter",
        "not ok 3 - exports csv # todo",
        "not ok 4 imports ofx #SKIP no fixture",
        "    not ok 1 - nested # Skip: no database",
        "not ok 5 - a \\# in its name # TODO",
        "not ok 6 # skipped",
    ] {
        assert!(!is_failure(line), "{line:?} taken for a failure");
    }
    for line in [
        "not ok 1 - balances",
        "    not ok 1 - balances",
        "not ok 2 should be strictly equal",
        "not ok 7 - a \\# TODO escaped is no directive",
        "not ok 8 - todo list renders",
        "not ok",
        "not ok - no number",
        "Bail out! database unreachable",
    ] {
        assert!(is_failure(line), "{line:?} is not taken for a failure");
    }
}

#[test]
fn not_ok_inside_other_text_is_not_tap() {
    for line in [
        "the build is not ok",
        "status: not ok",
        "not okay, retrying in 5s",
        "not ok, retrying",
        "not ok to merge",
        "2026-12-03 16:02:11 WARN health: not ok 3 times in a row",
        "ok 1 - passes",
        "ok 4 - imports ofx # SKIP no fixture",
        "    1..2",
        "TAP version 13",
        "release 1..2 of the series",
    ] {
        assert!(!is_failure(line), "{line:?} taken for a failure");
    }
}

/// TAP between lines a test prints of its own (npm's banner, `console.log`, a warning):
/// the failing test with its YAML block, and nothing past the block's end.
#[test]
fn tap_mixed_with_other_output_shows_each_failure_with_its_block() {
    let text = format!(
        "> ledger@1.0.0 test\n> node --test | cat\n\nTAP version 13\n{}\
         # Subtest: balances\nloading fixture march.csv\nnot ok 1 - balances\n  ---\n  \
         error: 'ledger imbalance: expected 100, got 99'\n  ...\n\
         (node:4242) ExperimentalWarning: the test runner is experimental\n{}\
         ok 2 - closes\n1..2\n{}",
        noise(0, 300),
        noise(300, 20),
        noise(320, 300)
    );
    let (_, window) = captured(&text, 4096, 4096);
    let block = window.failures.expect("a block").text();
    assert!(block.contains(":not ok 1 - balances\n"), "{block}");
    assert!(
        block.contains("-  error: 'ledger imbalance: expected 100, got 99'\n"),
        "{block}"
    );
    assert!(block.contains("-  ...\n"), "{block}");
    assert!(!block.contains("ExperimentalWarning"), "{block}");
    assert!(!block.contains("note:"), "the plan was met: {block}");
}

/// A stream that promises 5 tests and runs 3 (its runner died): a failure, said once,
/// whether the plan is in the shown head or in the omitted middle.
#[test]
fn a_plan_that_promises_more_tests_than_ran_is_a_failure() {
    // The plan first, in the head; the stream ends with the output.
    let leading = format!(
        "1..5\nok 1 - loads\nok 2 - parses\n{}ok 3 - sums\n{}",
        noise(0, 300),
        noise(300, 300)
    );
    let observation = observe(&leading, 4096);
    assert!(
        observation.contains(
            "1 of them looks like a failure:\nnote: TAP plan on line 1: planned 5, ran 3\n"
        ),
        "{observation}"
    );
    insta::assert_snapshot!("failures_tap_plan_not_met", observation);

    // The plan last, in the middle, after a version line started the count.
    let trailing = format!(
        "TAP version 13\n{}ok 1 - loads\nnot ok 2 - parses\n1..4\n{}",
        noise(0, 300),
        noise(300, 300)
    );
    let (_, window) = captured(&trailing, 4096, 4096);
    let block = window.failures.expect("a block");
    let text = block.text();
    assert!(text.contains(":1..4\n"), "{text}");
    assert!(
        text.contains("note: TAP plan on line 304: planned 4, ran 2\n"),
        "{text}"
    );
    assert_eq!(block.matches, 2, "the `not ok` and the plan");

    // A plan met is none, and so is a plan after tests no version line announced (it
    // cannot be checked: they were not counted).
    for met in [
        "1..2\nok 1\nnot ok 2 - x\n",
        "TAP version 14\nok 1\nok 2\n1..2\n",
        "ok 1\n1..3\n",
    ] {
        let mut scan = Scan::new();
        scan.feed(met.as_bytes());
        scan.feed(noise(0, 200).as_bytes());
        let found = scan.finish();
        assert!(
            found.hits.iter().all(|h| h.shortfall.is_none()),
            "{met:?}: {found:?}"
        );
    }
}

#[test]
fn a_plan_s_count_does_not_depend_on_chunking() {
    let text = format!(
        "TAP version 13\n1..6\n{}ok 1\nnot ok 2 - x\n  ---\n  ...\n    ok 1 - nested\nok 3\n{}",
        noise(0, 40),
        noise(40, 40)
    );
    for chunk in 1..80 {
        let mut scan = Scan::new();
        for piece in text.as_bytes().chunks(chunk) {
            scan.feed(piece);
        }
        let found = scan.finish();
        let plans: Vec<_> = found
            .hits
            .iter()
            .filter_map(|h| Some((h.matched().number, h.shortfall?)))
            .map(|(n, s)| (n, s.planned, s.ran))
            .collect();
        assert_eq!(plans, [(2, 6, 3)], "chunks of {chunk}");
    }
}

proptest! {
    /// However the stream is cut into chunks, the scan finds the same lines.
    #[test]
    fn chunking_does_not_change_what_is_found(chunk in 1usize..300, which in 0..FIXTURES.len()) {
        let text = buried(FIXTURES[which].1);
        let whole = {
            let mut scan = Scan::new();
            scan.feed(text.as_bytes());
            scan.finish()
        };
        let mut scan = Scan::new();
        for piece in text.as_bytes().chunks(chunk) {
            scan.feed(piece);
        }
        let pieces = scan.finish();
        let numbers = |f: &crate::capture::failures::Found| -> Vec<u64> {
            f.hits.iter().map(|h| h.matched().number).collect()
        };
        prop_assert_eq!(numbers(&whole), numbers(&pieces));
        prop_assert_eq!(whole.total, pieces.total);
    }

    /// The block stays within its budget, and what it shows plus what is still omitted is
    /// what the window omitted.
    #[test]
    fn the_block_keeps_its_budget_and_its_counts(
        failures in proptest::collection::vec((0..FIXTURES.len(), 0usize..40), 1..40),
        budget in 1024usize..8192,
    ) {
        let mut text = noise(0, 100);
        for (i, (which, gap)) in failures.iter().enumerate() {
            text.push_str(FIXTURES[*which].1);
            text.push_str(&noise(1000 * (i + 1), *gap));
        }
        text.push_str(&noise(100_000, 100));
        let (captured, window) = captured(&text, 4096, budget);
        if let Some(block) = &window.failures {
            let shown = block.text();
            prop_assert!(shown.len() <= MAX_BYTES);
            prop_assert!(shown.lines().count() <= MAX_LINES);
            prop_assert!(block.shown_bytes <= window.omitted_bytes);
            prop_assert!(block.shown_lines <= window.omitted_lines);
            prop_assert!(block.shown_matches <= block.matches);
            // Head, tail and failure lines together keep to the window's budget.
            prop_assert!(window.head.len() + window.tail.len() + shown.len() <= budget);
            prop_assert_eq!(
                (window.head.len() + window.tail.len()) as u64 + window.omitted_bytes,
                captured.bytes
            );
        }
    }
}

/// The prefilter looks for candidates by their first three bytes: a shorter literal makes
/// it stop at far more places that are no failure, and the scan of every byte slower.
#[test]
fn no_literal_is_shorter_than_three_bytes() {
    for r in RECOGNISERS {
        for literal in r.literals {
            assert!(literal.len() >= 3, "{literal:?} of {}", r.tool);
        }
    }
}

/// A literal that starts with another finds no line the shorter does not (the search is
/// leftmost-first, which is what lets the prefilter use SIMD): it would only slow it.
#[test]
fn no_literal_is_a_prefix_of_another() {
    let literals: Vec<&str> = RECOGNISERS
        .iter()
        .flat_map(|r| r.literals.iter().copied())
        .collect();
    for a in &literals {
        for b in &literals {
            assert!(a == b || !a.starts_with(b), "{b:?} is a prefix of {a:?}");
        }
    }
}
