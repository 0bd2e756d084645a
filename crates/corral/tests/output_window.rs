//! What the model reads: head and tail kept within the budget, the middle counted exactly.

use crate::common;

use common::{Fixture, testbin};
use corral::{Config, ExecRequest};

/// The observation without its first line (which holds the wall time) and with the step
/// id, which depends on the store, replaced.
fn stable(observation: &str, step: i64) -> String {
    let rest = observation.split_once('\n').map_or("", |(_, r)| r);
    rest.replace(&format!("\"step\":{step},"), "\"step\":STEP,")
}

#[test]
fn long_output_keeps_head_and_tail() {
    let fx = Fixture::new();
    let run = fx.run_with(Config {
        output_budget: 400,
        ..Config::default()
    });
    let outcome = run
        .exec(&ExecRequest::new([
            testbin(),
            "lines".into(),
            "1000".into(),
        ]))
        .unwrap();
    assert!(outcome.observation.starts_with("exit 0 · "));
    let w = &outcome.stdout.window;
    // Every line is shown whole, and what is shown plus what is omitted is everything.
    assert!(w.head.ends_with('\n') && w.tail.ends_with('\n'));
    let shown_lines = (w.head.lines().count() + w.tail.lines().count()) as u64;
    assert_eq!(shown_lines + w.omitted_lines, 1000);
    assert_eq!(
        (w.head.len() + w.tail.len()) as u64 + w.omitted_bytes,
        outcome.stdout.bytes
    );
    insta::assert_snapshot!(stable(&outcome.observation, outcome.step.id));
}

#[test]
fn short_output_is_shown_whole_with_both_labels() {
    let fx = Fixture::new();
    let run = fx.run();
    let outcome = run
        .exec(&ExecRequest::new([
            testbin(),
            "spew".into(),
            "128".into(),
            "64".into(),
        ]))
        .unwrap();
    assert!(!outcome.stdout.window.is_elided());
    insta::assert_snapshot!(stable(&outcome.observation, outcome.step.id));
}

#[test]
fn the_budget_is_shared_between_the_streams() {
    let fx = Fixture::new();
    let run = fx.run_with(Config {
        output_budget: 1000,
        ..Config::default()
    });
    // The frame around the streams takes an eighth of so small a budget (125 bytes), and
    // 64 bytes of stderr leave 811 for stdout.
    let outcome = run
        .exec(&ExecRequest::new([
            testbin(),
            "spew".into(),
            "100000".into(),
            "64".into(),
        ]))
        .unwrap();
    assert!(!outcome.stderr.window.is_elided());
    let w = &outcome.stdout.window;
    assert!(w.head.len() + w.tail.len() <= 811);
    assert!(
        w.head.len() + w.tail.len() >= 600,
        "the unused share went unused: {}",
        w.head.len() + w.tail.len()
    );
    assert!(
        outcome.observation.len() <= 1000,
        "{}",
        outcome.observation.len()
    );
}

#[test]
fn invalid_utf8_is_shown_lossily_and_kept_raw() {
    let fx = Fixture::new();
    let run = fx.run();
    let outcome = run
        .exec(&ExecRequest::new(["printf", "ok \\377\\376 end"]))
        .unwrap();
    assert_eq!(outcome.stdout.window.head, "ok \u{FFFD}\u{FFFD} end");
    let raw = std::fs::read(outcome.stdout.capture.unwrap()).unwrap();
    assert_eq!(raw, b"ok \xff\xfe end");
}

#[test]
fn silence_says_so() {
    let fx = Fixture::new();
    let run = fx.run();
    let outcome = run.exec(&ExecRequest::new(["true"])).unwrap();
    assert!(
        outcome.observation.ends_with("\n(no output)\n"),
        "{}",
        outcome.observation
    );
    assert!(outcome.stdout.capture.is_none());
}

#[test]
fn disk_is_bounded_by_the_capture_cap() {
    let fx = Fixture::new();
    let run = fx.run_with(Config {
        capture_cap: 64 * 1024,
        output_budget: 1000,
        ..Config::default()
    });
    let outcome = run
        .exec(&ExecRequest::new([
            testbin(),
            "lines".into(),
            "100000".into(),
        ]))
        .unwrap();
    let file = std::fs::read_to_string(outcome.stdout.capture.as_ref().unwrap()).unwrap();
    assert!(
        file.len() < 64 * 1024 + 100,
        "the capture grew to {}",
        file.len()
    );
    assert!(file.starts_with("line 1\n"));
    assert!(file.ends_with("line 100000\n"));
    assert!(file.contains("bytes dropped by the capture cap"));
    // What the model reads still counts every byte and line the command printed.
    let w = &outcome.stdout.window;
    assert_eq!(
        (w.head.len() + w.tail.len()) as u64 + w.omitted_bytes,
        outcome.stdout.bytes
    );
    assert!(w.tail.ends_with("line 100000\n"));
}

#[test]
fn a_cap_smaller_than_the_budget_still_shows_what_was_kept() {
    let fx = Fixture::new();
    let run = fx.run_with(Config {
        capture_cap: 1000,
        ..Config::default()
    });
    let outcome = run
        .exec(&ExecRequest::new([
            testbin(),
            "lines".into(),
            "2000".into(),
        ]))
        .unwrap();
    let w = &outcome.stdout.window;
    assert!(w.head.starts_with("line 1\n"), "{}", outcome.observation);
    assert!(
        w.head.contains("bytes dropped by the capture cap"),
        "{}",
        outcome.observation
    );
    assert!(w.head.ends_with("line 2000\n"), "{}", outcome.observation);
    assert_eq!(w.omitted_bytes, outcome.stdout.bytes - 1000);
}

/// Bytes that are not UTF-8 show as U+FFFD, three bytes each: the budget holds for what
/// is shown, so a stream of them reads no longer than as much text would, and the counts
/// stay those of the raw bytes.
#[test]
fn bytes_that_are_not_utf8_keep_the_result_within_its_budget() {
    let fx = Fixture::new();
    let run = fx.run();
    let observe = |byte: &str| {
        let line = format!("head -c 100000 /dev/zero | tr '\\0' '{byte}'");
        run.shell(&corral::ShellRequest::new(line)).unwrap()
    };
    let text = observe("a");
    let binary = observe("\\377");
    assert!(
        binary.observation.len() <= text.observation.len() + 64,
        "{} bytes against {}",
        binary.observation.len(),
        text.observation.len()
    );
    let w = &binary.stdout.window;
    let shown_raw = (w.head.chars().count() + w.tail.chars().count()) as u64;
    assert_eq!(shown_raw + w.omitted_bytes, 100_000);
}

/// A line longer than the window leaves out bytes, not lines: the marker names the byte
/// range of that line, and following it, or reading the line by number, gives a reply
/// within its budget that says where the rest of the line is.
#[test]
fn a_line_longer_than_the_window_is_read_on_by_its_bytes() {
    let fx = Fixture::new();
    let run = fx.run();
    let outcome = run
        .shell(&corral::ShellRequest::new(
            "head -c 2000000 /dev/zero | tr '\\0' a; echo END; echo second",
        ))
        .unwrap();
    let w = &outcome.stdout.window;
    assert_eq!(w.omitted_lines, 0);
    let start = w.head.len() as u64;
    let end = start + w.omitted_bytes - 1;
    let range = format!("bytes {start}-{end}");
    assert!(
        outcome.observation.contains("bytes of line 1 omitted")
            && outcome
                .observation
                .contains(&format!("\"bytes\":\"{start}-{end}\"")),
        "{}",
        outcome.observation
    );
    let read = |request: corral::OutputRequest| run.output(&request).unwrap().observation;
    let by_bytes = read(corral::OutputRequest {
        step: Some(outcome.step.id),
        bytes: Some(format!("{start}-{end}")),
        ..Default::default()
    });
    assert!(by_bytes.len() <= 33 * 1024, "{} ({range})", by_bytes.len());
    let by_line = read(corral::OutputRequest {
        step: Some(outcome.step.id),
        lines: Some("1-2".into()),
        ..Default::default()
    });
    assert!(by_line.len() <= 33 * 1024, "{}", by_line.len());
    assert!(
        by_line.contains("the rest of line 1 is bytes"),
        "{}",
        &by_line[by_line.len().saturating_sub(600)..]
    );
    assert!(
        by_line.contains("read on with"),
        "the reply says where line 2 is"
    );
}
