//! TAP, the Test Anything Protocol (tape, node-tap, bats, `prove -v`, `node --test` when
//! piped): what the scan needs beyond its table of lines.
//!
//! Two things a line-by-line table cannot say:
//!
//! 1. **A failing test's diagnostics.** After `not ok N - name` come the lines that say
//!    why: a YAML block (`  ---` … `  ...`, indented like the test) or `#` comment lines
//!    (bats, Test::More). [`Diagnostics`] takes them as the test's context, and stops at
//!    the first line that is neither.
//! 2. **A plan that was not kept.** `1..N` promises N tests at the stream's own level
//!    (not indented: a subtest's plan is, and so are its tests). A plan at the start is
//!    checked when the stream ends (the output's end, or the next `TAP version` or
//!    unindented plan); a plan at the end, when it is met. Either way a count that differs
//!    is a failure, "planned N, ran M", found on the plan's line. [`Streams`] keeps the
//!    count.
//!
//! Counting needs every test line, not only the lines the prefilter stops at: once a
//! stream has started (a `TAP version` line, or a plan before any test), the scan hands
//! [`Streams::count`] its bytes, which looks for `ok` and `not ok` at line starts with a
//! SIMD search; before that, and in output that is not TAP, it costs nothing.
//!
//! A stream that never says it is TAP (no version line, its plan at the end, as
//! Test::More's `done_testing` prints it) is not counted, so its plan is not checked: a
//! plan is taken for the end of such a stream when the line before it ends a test (a
//! test line, its YAML block's `...`, a comment, an indented subtest line).

use memchr::memmem;

use super::scan::Line;

/// What a line after a failing test is to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Take {
    /// One of its diagnostics.
    Yes,
    /// The last of them (a YAML block's `...`).
    Last,
    /// Not one of them: its diagnostics ended before this line.
    No,
}

/// The diagnostics of one failing test, line by line.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum Diagnostics {
    /// The line after the test's.
    #[default]
    Start,
    /// Inside its YAML block.
    Yaml,
    /// Among the `#` lines below it.
    Comments,
    /// Past them.
    Done,
}

impl Diagnostics {
    /// Whether `line` (without its newline) is one of the test's diagnostics.
    pub(crate) fn take(&mut self, line: &[u8]) -> Take {
        let t = line.trim_ascii();
        // `# Subtest: name` opens the next test (node), and is none of this one's.
        let comment = t.starts_with(b"#") && !t.starts_with(b"# Subtest");
        match *self {
            Diagnostics::Start if t == b"---" => {
                *self = Diagnostics::Yaml;
                Take::Yes
            }
            Diagnostics::Start | Diagnostics::Comments if comment => {
                *self = Diagnostics::Comments;
                Take::Yes
            }
            Diagnostics::Yaml if t == b"..." => {
                *self = Diagnostics::Done;
                Take::Last
            }
            Diagnostics::Yaml => Take::Yes,
            Diagnostics::Start | Diagnostics::Comments | Diagnostics::Done => {
                *self = Diagnostics::Done;
                Take::No
            }
        }
    }
}

/// A plan that the stream's count did not meet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Shortfall {
    pub planned: u64,
    pub ran: u64,
}

/// The count of one TAP stream's tests against its plan.
#[derive(Debug, Default)]
pub(crate) struct Streams {
    /// A stream has started: its tests are being counted.
    counting: bool,
    /// Tests at the stream's own level so far.
    ran: u64,
    /// The stream's plan came first: its line and its count, checked at the stream's end.
    /// Boxed: a scan, which holds this, is moved whole to the thread behind a capture.
    leading: Option<Box<(Line, u64)>>,
    /// The stream has its plan, first or last.
    planned: bool,
}

/// The searches for a test line's start: after a newline (a slice's first line is
/// tested on its own).
static OK: std::sync::LazyLock<memmem::Finder<'static>> =
    std::sync::LazyLock::new(|| memmem::Finder::new(b"\nok"));
static NOT_OK: std::sync::LazyLock<memmem::Finder<'static>> =
    std::sync::LazyLock::new(|| memmem::Finder::new(b"\nnot ok"));

impl Streams {
    /// Count the tests in `lines`, complete lines whose first starts a line.
    pub(crate) fn count(&mut self, lines: &[u8]) {
        if !self.counting || lines.is_empty() {
            return;
        }
        let mut n = u64::from(is_test(lines));
        for finder in [&*OK, &*NOT_OK] {
            n += finder
                .find_iter(lines)
                .filter(|&at| is_test(&lines[at + 1..]))
                .count() as u64;
        }
        self.ran += n;
    }

    /// A `TAP version` line: the stream before it ends (its plan, if it came first, is
    /// checked) and a new one starts.
    pub(crate) fn version(&mut self) -> Option<(Line, Shortfall)> {
        let ended = self.end();
        self.counting = true;
        ended
    }

    /// Whether a stream is being counted.
    pub(crate) fn counting(&self) -> bool {
        self.counting
    }

    /// An unindented plan, `line`, promising `planned` tests; `after_tests` when no stream
    /// is being counted and the line before it ends a test (see [`ends_a_test`]). What it
    /// settles: a plan at the end of a stream is checked against the count (the second
    /// value); a plan where one was already given starts a new stream and checks the one
    /// before (the first).
    pub(crate) fn plan(
        &mut self,
        line: &Line,
        planned: u64,
        after_tests: bool,
    ) -> (Option<(Line, Shortfall)>, Option<Shortfall>) {
        if !self.counting && after_tests {
            // The end of a stream that never said it was TAP: its tests were not counted.
            return (None, None);
        }
        if self.counting && !self.planned && self.ran > 0 {
            // At the end: the stream is complete, and counting stops until the next.
            let ran = self.ran;
            *self = Streams::default();
            return (None, (ran != planned).then_some(Shortfall { planned, ran }));
        }
        let ended = if self.planned { self.end() } else { None };
        self.counting = true;
        self.planned = true;
        self.ran = 0;
        self.leading = Some(Box::new((line.clone(), planned)));
        (ended, None)
    }

    /// The stream ends: its leading plan, if the count did not meet it.
    pub(crate) fn end(&mut self) -> Option<(Line, Shortfall)> {
        let ran = self.ran;
        let leading = self.leading.take();
        *self = Streams::default();
        let (line, planned) = *leading?;
        (ran != planned).then_some((line, Shortfall { planned, ran }))
    }
}

/// Whether `line` starts a test line: `ok` or `not ok`, then a space, a `#` or its end.
pub(crate) fn is_test(line: &[u8]) -> bool {
    let rest = if let Some(rest) = line.strip_prefix(b"ok") {
        rest
    } else if let Some(rest) = line.strip_prefix(b"not ok") {
        rest
    } else {
        return false;
    };
    matches!(
        rest.first(),
        None | Some(b' ' | b'\t' | b'\n' | b'\r' | b'#')
    )
}

/// Whether `line`, the one before a plan, ends a test: a test line, the end of its YAML
/// block, a comment, or a line of a subtest or of diagnostics (indented).
pub(crate) fn ends_a_test(line: &[u8]) -> bool {
    is_test(line)
        || line.trim_ascii() == b"..."
        || line.starts_with(b"#")
        || (line.first().is_some_and(|b| b.is_ascii_whitespace()) && !line.trim_ascii().is_empty())
}

/// The count a plan line (`1..N`, then perhaps a `#` comment) promises.
pub(crate) fn planned(line: &[u8]) -> Option<u64> {
    let digits = line.strip_prefix(b"1..")?;
    let end = digits
        .iter()
        .position(|b| !b.is_ascii_digit())
        .unwrap_or(digits.len());
    std::str::from_utf8(&digits[..end]).ok()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(text: &str) -> Line {
        Line {
            number: 1,
            offset: 0,
            len: text.len() as u64,
            text: text.as_bytes().to_vec(),
            matched: true,
        }
    }

    #[test]
    fn test_lines_are_counted_at_the_stream_s_own_level_only() {
        let mut s = Streams::default();
        s.count(b"ok 1 - before any stream\n");
        assert_eq!(s.ran, 0, "no stream has started");
        s.version();
        s.count(
            b"ok 1 - a\nnot ok 2 - b\n    ok 1 - nested\nok\nokay then\nnot ok # TODO\n\
              # ok 5\nnot okay\nok 3 x\n",
        );
        assert_eq!(s.ran, 5);
    }

    #[test]
    fn a_leading_plan_is_checked_when_its_stream_ends() {
        let mut s = Streams::default();
        assert_eq!(s.plan(&line("1..3"), 3, false), (None, None));
        s.count(b"ok 1\nok 2\n");
        let (at, short) = s.end().expect("a shortfall");
        assert_eq!(at.text, b"1..3");
        assert_eq!(short, Shortfall { planned: 3, ran: 2 });
        // A plan met is no failure.
        s.plan(&line("1..2"), 2, false);
        s.count(b"ok 1\nnot ok 2\n");
        assert_eq!(s.end(), None);
    }

    #[test]
    fn a_trailing_plan_is_checked_where_it_is() {
        let mut s = Streams::default();
        s.version();
        s.count(b"ok 1\nok 2\n");
        assert_eq!(
            s.plan(&line("1..4"), 4, false),
            (None, Some(Shortfall { planned: 4, ran: 2 }))
        );
        // The stream is over: nothing is left to check at the end.
        assert_eq!(s.end(), None);
    }

    #[test]
    fn a_second_stream_ends_the_first() {
        let mut s = Streams::default();
        s.plan(&line("1..5"), 5, false);
        s.count(b"ok 1\n");
        let (ended, _) = s.plan(&line("1..1"), 1, true);
        assert_eq!(
            ended.map(|(_, sh)| sh),
            Some(Shortfall { planned: 5, ran: 1 })
        );
        s.count(b"ok 1\n");
        assert_eq!(s.version(), None);
    }

    #[test]
    fn a_plan_after_tests_no_stream_counted_is_not_checked() {
        let mut s = Streams::default();
        assert!(ends_a_test(b"ok 3 - last"));
        assert!(ends_a_test(b"  ..."));
        assert!(!ends_a_test(b"t/ledger.t .. "));
        assert!(!ends_a_test(b""));
        assert_eq!(s.plan(&line("1..3"), 3, true), (None, None));
        assert!(!s.counting());
        assert_eq!(s.end(), None);
    }

    #[test]
    fn diagnostics_are_the_yaml_block_or_the_comments_below_a_test() {
        let take = |lines: &[&str]| {
            let mut d = Diagnostics::default();
            lines
                .iter()
                .map(|l| d.take(l.as_bytes()))
                .collect::<Vec<_>>()
        };
        use Take::*;
        assert_eq!(
            take(&["  ---", "  error: boom", "  ...", "ok 2"]),
            [Yes, Yes, Last, No]
        );
        assert_eq!(
            take(&[
                "# (in test file t.bats, line 3)",
                "#   `false' failed",
                "ok 2"
            ]),
            [Yes, Yes, No]
        );
        assert_eq!(take(&["# Subtest: next"]), [No]);
        assert_eq!(take(&["ok 2 - next"]), [No]);
    }

    #[test]
    fn a_plan_s_count_is_read() {
        assert_eq!(planned(b"1..12"), Some(12));
        assert_eq!(planned(b"1..0 # SKIP no database"), Some(0));
        assert_eq!(planned(b"  1..2"), None);
    }
}
