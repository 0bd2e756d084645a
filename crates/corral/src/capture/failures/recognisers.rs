//! The lines that say why a command failed, tool by tool: data, so that adding a tool is
//! adding one entry (and its fixture under `fixtures/`).
//!
//! A line is tested against the patterns only when it holds one of the literals, so every
//! line a pattern matches must contain one of its entry's literals: the literals are the
//! prefilter that keeps the scan of a gigabyte cheap, the patterns say exactly what counts.
//! Entries are tried in order and the first whose pattern matches names the line.

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
    pub after: u8,
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
    }
}

/// The most context lines any entry asks for on one side.
pub(crate) const MAX_CONTEXT: usize = 4;

/// Every recogniser, the most specific first.
///
/// The literals are few and shared (`FAIL`, `ERROR`, `error`, …), and none is shorter
/// than 3 bytes: the prefilter finds candidates by their first bytes, so every literal
/// added, and most a short one, slows the scan of every byte. A new entry reuses one
/// where its lines hold it.
pub(crate) static RECOGNISERS: &[Recogniser] = &[
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
