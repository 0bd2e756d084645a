//! The lines that say why a command failed, tool by tool: data, so that adding a tool is
//! adding one entry (and its fixture under `fixtures/`).
//!
//! A line is tested against the patterns only when it holds one of the literals, so every
//! line a pattern matches must contain one of its entry's literals: the literals are the
//! prefilter that keeps the scan of a gigabyte cheap, the patterns say exactly what counts.
//! Entries are tried in order and the first whose pattern matches names the line.
//!
//! Most entries name failure lines. A few name lines that only look like one (a TAP test
//! marked `# TODO`, which is allowed to fail) or lines the scan keeps count with (a TAP
//! plan): see [`Meaning`] and the `tap` module.

/// One way a tool says it failed.
#[derive(Debug)]
pub(crate) struct Recogniser {
    /// The tool whose output this reads, for the fixtures and for whoever adds the next.
    #[cfg_attr(
        not(test),
        expect(dead_code, reason = "read by the fixtures' tests, and by people")
    )]
    pub tool: &'static str,
    /// Every line the pattern matches contains one of these (case-sensitive).
    pub literals: &'static [&'static str],
    /// What a failure line is (a `regex` pattern, tested on the line without its newline).
    pub pattern: &'static str,
    /// Lines shown before a match: the code an assertion quotes, a traceback's last frames.
    pub before: u8,
    /// Lines shown after it: the message below a heading, the source a compiler points at.
    /// At most this many, for an entry whose context after is a TAP test's diagnostics.
    pub after: u8,
    /// What a line it names is.
    pub meaning: Meaning,
}

/// What a line an entry names is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Meaning {
    /// A failure line, shown with `before` and `after` lines of context.
    Failure,
    /// A failing TAP test (`not ok`): shown with its diagnostics after it, the YAML block
    /// (`  ---` to `  ...`) or the `#` lines that follow it, at most `after` lines.
    TapFailure,
    /// A line that a later entry would take for a failure and that is none: a TAP test
    /// whose directive (`# TODO`, `# SKIP`) says it may fail.
    NotAFailure,
    /// A TAP line the scan counts tests with (see `tap`).
    Tap(TapLine),
}

/// The TAP lines that frame a stream of tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TapLine {
    /// `TAP version 13`: a stream starts.
    Version,
    /// `1..N`, not indented: the number of tests the stream's own level promises.
    Plan,
}

impl Recogniser {
    /// Whether a line this entry names is a failure.
    pub(crate) fn is_failure(&self) -> bool {
        matches!(self.meaning, Meaning::Failure | Meaning::TapFailure)
    }
}

const fn entry(
    tool: &'static str,
    literals: &'static [&'static str],
    pattern: &'static str,
    before: u8,
    after: u8,
) -> Recogniser {
    Recogniser {
        tool,
        literals,
        pattern,
        before,
        after,
        meaning: Meaning::Failure,
    }
}

/// An entry whose lines mean something other than a failure with fixed context.
const fn tap(
    literals: &'static [&'static str],
    pattern: &'static str,
    after: u8,
    meaning: Meaning,
) -> Recogniser {
    Recogniser {
        tool: "tap",
        literals,
        pattern,
        before: 0,
        after,
        meaning,
    }
}

/// The most lines of diagnostics shown after a failing TAP test: node's YAML block up to
/// its message, the values compared, and the first frames of its stack.
pub(crate) const TAP_DIAGNOSTICS: u8 = 20;

/// The most context lines any entry asks for before its line.
pub(crate) const MAX_CONTEXT: usize = 4;

/// Every recogniser, the most specific first.
///
/// The literals are few and shared (`FAIL`, `ERROR`, `error`, …), and none is shorter
/// than 3 bytes: the prefilter finds candidates by their first bytes, so every literal
/// added, and most a short one, slows the scan of every byte. A new entry reuses one
/// where its lines hold it.
pub(crate) static RECOGNISERS: &[Recogniser] = &[
    // TAP (tape, node-tap, bats, prove -v, `node --test` piped): first, since a test
    // marked TODO or SKIP is no failure whatever its description says (the directive is
    // `#` then the word, any case, after a description that may hold `\#`). A `not ok`
    // starts its line (indented in a subtest) and is followed by a number, a `-`, a
    // directive or nothing: "not ok" inside a sentence is not TAP.
    tap(
        &["not ok"],
        r"^\s*not ok\b([^#\\]|\\.)*#\s*(?i:todo|skip)",
        0,
        Meaning::NotAFailure,
    ),
    tap(
        &["not ok"],
        r"^\s*not ok( +\d+\b| +-| *#|\s*$)",
        TAP_DIAGNOSTICS,
        Meaning::TapFailure,
    ),
    entry("tap", &["Bail out!"], r"^\s*Bail out!", 0, 0),
    tap(
        &["TAP version"],
        r"^TAP version \d+\s*$",
        0,
        Meaning::Tap(TapLine::Version),
    ),
    tap(
        &["1.."],
        r"^1\.\.\d+\s*(#.*)?$",
        0,
        Meaning::Tap(TapLine::Plan),
    ),
    // pytest: the `E` lines of an assertion (after the `>` line they explain), the
    // `____ test_name ____` title, the location line, the verbose progress line of a
    // failing test, the summary.
    entry("pytest", &["E  "], r"^E {2,}\S", 1, 0),
    entry("pytest", &["___ "], r"^_{3,} \S.* _{3,}\s*$", 0, 0),
    entry(
        "pytest",
        &["FAIL", "ERROR"],
        r"^=+ (FAILURES|ERRORS) =+$",
        0,
        0,
    ),
    entry("pytest", &[".py:"], r"^\S+\.py:\d+: [A-Z]\w*$", 0, 0),
    entry(
        "pytest -v",
        &["FAIL", "ERROR"],
        r"^\S+\.py::\S+ (FAILED|ERROR)",
        0,
        0,
    ),
    entry(
        "pytest",
        &["FAIL", "ERROR"],
        r"^(FAILED|ERROR) \S+\.py",
        0,
        0,
    ),
    // cargo and rustc: diagnostics (not warnings), panics, the test harness's verdicts.
    entry("rustc", &["error"], r"^error(\[E\d{4}\])?: ", 0, 3),
    entry("cargo test", &["panicked"], r"panicked at ", 0, 3),
    entry("cargo test", &["FAIL"], r"^test \S+ \.\.\. FAILED$", 0, 0),
    entry("cargo test", &["failures:"], r"^failures:$", 0, 0),
    entry(
        "cargo test",
        &["---- "],
        r"^---- \S+ std(out|err) ----$",
        0,
        0,
    ),
    entry("cargo test", &["FAIL"], r"^test result: FAILED", 0, 0),
    // go test: the `--- FAIL` line names the test; its message is the `file_test.go:N:`
    // lines just before it (`-v` streams them as they are logged) or just after it
    // (without `-v`). Those lines alone are no failure: `t.Log` writes them in passing
    // tests too, hundreds in a verbose run.
    entry("go test", &["FAIL"], r"^\s*--- FAIL: ", 3, 2),
    entry("go", &["panic: "], r"^panic: ", 0, 1),
    // go test's package verdict and jest's file verdict.
    entry("go test, jest", &["FAIL"], r"^\s?FAIL\s+\S", 0, 0),
    // jest and vitest: the `●` heading of a failure, the crossed test, the values.
    entry("jest", &["●"], r"^\s*● \S", 0, 2),
    entry("jest, vitest", &["✕ ", "× "], r"^\s*[✕×] \S", 0, 0),
    entry(
        "jest",
        &["Expected:", "Received:"],
        r"^\s+(Expected|Received):",
        0,
        0,
    ),
    // mocha: the count, then its numbered failures (`1) Suite`, `test:`), whose
    // messages are exception lines.
    entry("mocha", &["failing"], r"^\s*\d+ failing", 0, 3),
    // tsc, in both its plain and its pretty form.
    entry("tsc", &["error"], r"error TS\d+: ", 0, 0),
    // eslint: each error (after its file's path), and the count.
    entry("eslint", &["error"], r"^\s+\d+:\d+\s+error\s+", 1, 0),
    entry("eslint", &["✖ "], r"^✖ \d+ problems?", 0, 0),
    // gcc, clang and the linker.
    entry(
        "gcc",
        &["error", "undefined reference"],
        r": (fatal )?error: |undefined reference to ",
        0,
        2,
    ),
    // Java: an uncaught exception, then its first frames.
    entry("java", &["Exception"], r"^Exception in thread ", 0, 2),
    // Python's traceback heading, and the exception line any language ends one with
    // (Python `ledger.LedgerError: …`, Java `java.lang.IllegalStateException: …`, node
    // `AssertionError [ERR_ASSERTION]: …`), after a traceback's last frames.
    entry(
        "python",
        &["Traceback"],
        r"^\s*Traceback \(most recent call last\):",
        0,
        0,
    ),
    entry(
        "python, java, node",
        &["Error", "Exception"],
        r"^\s*(Caused by: )?([A-Za-z_$][\w$]*\.)*[A-Z][\w$]*(Error|Exception)( \[\w+\])?(: |$)",
        4,
        1,
    ),
    // Maven, Gradle.
    entry(
        "maven",
        &["FAIL", "ERROR"],
        r"^(\[INFO\] )?BUILD FAILURE|^\[ERROR\] \S",
        0,
        0,
    ),
    entry(
        "gradle",
        &["FAIL"],
        r"^\S.* > .* FAILED$|^FAILURE: |^BUILD FAILED",
        0,
        1,
    ),
    // make: the recipe that failed.
    entry("make", &["*** "], r"^g?make(\[\d+\])?: \*\*\* ", 0, 0),
];
