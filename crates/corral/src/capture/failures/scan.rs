//! The scan that runs on every chunk a capture takes: a literal prefilter over the chunk,
//! the recognisers' patterns only on the lines it points at.
//!
//! Where the head and the tail of the window will be cut is known only when the stream
//! ends, so the scan keeps what it found with its place (byte offset and line number) in
//! a bounded store, the first [`KEEP`] matches and the last [`KEEP`], and counts them all.

use std::collections::VecDeque;
use std::sync::LazyLock;

use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind};
use regex_automata::{Input, PatternSet, meta};

use super::recognisers::{MAX_CONTEXT, Meaning, RECOGNISERS, Recogniser, TapLine};
use super::tap::{self, Diagnostics, Shortfall, Streams, Take};

/// Matches kept at each end of the stream. The window shows a few dozen lines at most;
/// the rest of what is kept lets the count of matches in the middle stay exact when the
/// head or the tail holds many.
pub(crate) const KEEP: usize = 64;

/// Bytes of one line kept to show; the rest is counted.
pub(crate) const LINE_KEPT: usize = 256;

/// Bytes of an unfinished line held to test once it ends; a longer line is tested on its
/// start.
const PARTIAL_KEPT: usize = 1024;

/// The recognisers, compiled once.
struct Compiled {
    /// Every distinct literal, searched leftmost-first, which lets the search use its
    /// SIMD prefilter (a standard search cannot): it finds the lines worth testing.
    literals: AhoCorasick,
    /// Every recogniser's pattern in one automaton, pattern `i` being recogniser `i`: a
    /// line is read once for all of them, and the lowest that matched names it.
    patterns: meta::Regex,
}

static COMPILED: LazyLock<Compiled> = LazyLock::new(|| {
    let mut literals: Vec<&str> = Vec::new();
    for literal in RECOGNISERS.iter().flat_map(|r| r.literals) {
        if !literals.contains(literal) {
            literals.push(literal);
        }
    }
    Compiled {
        // A DFA: the fastest search, and small for a few dozen literals.
        literals: AhoCorasick::builder()
            .kind(Some(AhoCorasickKind::DFA))
            .match_kind(MatchKind::LeftmostFirst)
            .build(&literals)
            .expect("the recognisers' literals build"),
        // Every pattern that matches is wanted, not the leftmost: `All`.
        patterns: meta::Regex::builder()
            .configure(meta::Config::new().match_kind(regex_automata::MatchKind::All))
            .build_many(&RECOGNISERS.iter().map(|r| r.pattern).collect::<Vec<_>>())
            .expect("the recognisers' patterns compile"),
    }
});

/// What testing a line against the patterns needs of its own: the automaton's cache and
/// the set of patterns a line matched. Each scan holds one, so a scan on a thread of its
/// own never shares (or waits for) another's.
#[derive(Debug)]
pub(crate) struct Recognition {
    /// Boxed: it is large, and a scan is moved whole to the thread behind a capture.
    cache: Box<meta::Cache>,
    matched: PatternSet,
}

impl Recognition {
    pub(crate) fn new() -> Self {
        let patterns = &COMPILED.patterns;
        Self {
            cache: Box::new(patterns.create_cache()),
            matched: PatternSet::new(patterns.pattern_len()),
        }
    }

    /// The recogniser that names `line` a failure, if one does: the first, in table
    /// order, whose pattern it matches.
    pub(crate) fn of(&mut self, line: &[u8]) -> Option<&'static Recogniser> {
        self.matched.clear();
        COMPILED.patterns.which_overlapping_matches_with(
            &mut self.cache,
            &Input::new(line),
            &mut self.matched,
        );
        self.matched
            .iter()
            .next()
            .map(|id| &RECOGNISERS[id.as_usize()])
    }
}

/// The recogniser that names `line` a failure, if one does (see [`Recognition::of`]).
#[cfg(test)]
pub(crate) fn recognise(line: &[u8]) -> Option<&'static Recogniser> {
    Recognition::new().of(line)
}

/// One line of the stream, as kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Line {
    /// Its number in the stream, from 1.
    pub number: u64,
    /// The offset of its first byte in the stream.
    pub offset: u64,
    /// Its length without the newline.
    pub len: u64,
    /// Its first [`LINE_KEPT`] bytes.
    pub text: Vec<u8>,
    /// Whether it is the match (the others are its context).
    pub matched: bool,
}

impl Line {
    fn new(number: u64, offset: u64, bytes: &[u8], matched: bool) -> Self {
        Self {
            number,
            offset,
            len: bytes.len() as u64,
            text: bytes[..bytes.len().min(LINE_KEPT)].to_vec(),
            matched,
        }
    }
}

/// A failure line with its context, in stream order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Hit {
    pub lines: Vec<Line>,
    /// For a TAP plan's line: the count it promised and the count that ran.
    pub shortfall: Option<Shortfall>,
}

impl Found {
    /// Every line that looked like a failure, kept or not.
    pub fn total(&self) -> u64 {
        self.total
    }
}

impl Hit {
    /// The matching line.
    pub fn matched(&self) -> &Line {
        self.lines
            .iter()
            .find(|l| l.matched)
            .expect("a hit holds its match")
    }
}

/// What a finished scan found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Found {
    /// The first and the last matches kept, in stream order, without repeats.
    pub(crate) hits: Vec<Hit>,
    /// Every match, kept or not.
    pub(crate) total: u64,
    /// Matches not kept.
    pub(crate) unkept: u64,
    /// Where the unkept matches lie: after the first offset, before the second (the last
    /// of the first [`KEEP`] and the first of the last [`KEEP`]); `None` when that is not
    /// known (more TAP plans unmet than were kept).
    pub(crate) gap: Option<(u64, u64)>,
}

/// A scan in progress: what a capture runs on every chunk it takes. Public so that its
/// cost can be measured on its own (`corral-bench -- failure-scan`).
#[derive(Debug)]
pub struct Scan {
    /// Bytes seen.
    offset: u64,
    /// The number of the line that starts at the next complete line's first byte.
    line: u64,
    /// The unfinished last line, its first [`PARTIAL_KEPT`] bytes.
    partial: Vec<u8>,
    /// Its full length so far.
    partial_len: u64,
    /// The last complete lines, for the context before a match.
    recent: VecDeque<Line>,
    first: Vec<Hit>,
    last: VecDeque<Hit>,
    total: u64,
    /// How many lines of context after the newest hit are still to come.
    awaiting: u8,
    /// Which lines after the newest hit are its context: all (`None`), or a failing TAP
    /// test's diagnostics.
    diagnostics: Option<Diagnostics>,
    /// The TAP streams' count of tests against their plans.
    tap: Streams,
    /// Hits found after later ones (a TAP plan at a stream's start, found unmet at its
    /// end), at most [`KEEP`], merged in stream order when the scan ends.
    late: Vec<Hit>,
    /// Late hits past [`KEEP`], counted.
    late_unkept: u64,
    /// Made at the first line the scan tests: compiling the patterns costs milliseconds,
    /// which a command that prints nothing to test should not pay.
    recognition: Option<Recognition>,
}

impl Default for Scan {
    fn default() -> Self {
        Self {
            offset: 0,
            line: 1,
            partial: Vec::new(),
            partial_len: 0,
            recent: VecDeque::new(),
            first: Vec::new(),
            last: VecDeque::new(),
            total: 0,
            awaiting: 0,
            diagnostics: None,
            tap: Streams::default(),
            late: Vec::new(),
            late_unkept: 0,
            recognition: None,
        }
    }
}

impl Scan {
    /// A scan of a stream that has not started.
    pub fn new() -> Self {
        Self::default()
    }

    /// The recogniser that names `line`, if one does.
    fn recognise(&mut self, line: &[u8]) -> Option<&'static Recogniser> {
        self.recognition
            .get_or_insert_with(Recognition::new)
            .of(line)
    }

    /// Whether `line` is a failure line.
    fn is_failure(&mut self, line: &[u8]) -> bool {
        self.recognise(line).is_some_and(Recogniser::is_failure)
    }

    /// Scan the next chunk of the stream.
    pub fn feed(&mut self, chunk: &[u8]) {
        let newlines = memchr::memchr_iter(b'\n', chunk).count() as u64;
        self.feed_counted(chunk, newlines);
    }

    /// Scan the next chunk, whose newlines the caller counted already (a capture counts
    /// them anyway): the scan need not count them again.
    pub(crate) fn feed_counted(&mut self, chunk: &[u8], newlines: u64) {
        let Some(first_nl) = memchr::memchr(b'\n', chunk) else {
            self.extend_partial(chunk);
            self.offset += chunk.len() as u64;
            return;
        };
        // The line the previous chunk left unfinished ends here.
        self.extend_partial(&chunk[..first_nl]);
        let text = std::mem::take(&mut self.partial);
        let start = self.offset + first_nl as u64 - self.partial_len;
        self.one_line(&text, start, self.partial_len);
        self.partial = text;
        self.partial.clear();
        self.partial_len = 0;

        let last_nl = memchr::memrchr(b'\n', chunk).expect("a newline was found");
        let body_offset = self.offset + first_nl as u64 + 1;
        let body = &chunk[first_nl + 1..=last_nl];
        if !body.is_empty() {
            // The first newline ended the line before the body.
            self.body(body, body_offset, newlines - 1);
        }
        self.extend_partial(&chunk[last_nl + 1..]);
        self.offset += chunk.len() as u64;
    }

    fn extend_partial(&mut self, bytes: &[u8]) {
        let room = PARTIAL_KEPT.saturating_sub(self.partial.len());
        self.partial
            .extend_from_slice(&bytes[..bytes.len().min(room)]);
        self.partial_len += bytes.len() as u64;
    }

    /// A line met on its own (it straddled two chunks): `text` holds its kept start.
    fn one_line(&mut self, text: &[u8], offset: u64, len: u64) {
        let number = self.line;
        self.line += 1;
        let mut line = Line::new(number, offset, text, false);
        line.len = len;
        self.tap.count(text);
        let r = self.recognise(text);
        if let Some(r) = r.filter(|r| r.is_failure()) {
            line.matched = true;
            self.hit(line, r, None);
            return;
        }
        if let Some(
            r @ Recogniser {
                meaning: Meaning::Tap(what),
                ..
            },
        ) = r
        {
            let before = self.recent.back().filter(|l| l.number + 1 == number);
            let after_tests = before.is_some_and(|l| tap::ends_a_test(&l.text));
            if self.tap_line(*what, &line, after_tests, r) {
                return;
            }
        }
        self.context_after(&line);
        self.remember(line);
    }

    /// A line that frames a TAP stream: count its tests against its plan. Whether the
    /// line became a hit (a plan at a stream's end that its count did not meet).
    fn tap_line(
        &mut self,
        what: TapLine,
        line: &Line,
        after_tests: bool,
        r: &'static Recogniser,
    ) -> bool {
        let (ended, here) = match what {
            TapLine::Version => (self.tap.version(), None),
            TapLine::Plan => match tap::planned(&line.text) {
                Some(planned) => self.tap.plan(line, planned, after_tests),
                None => (None, None),
            },
        };
        if let Some((at, shortfall)) = ended {
            self.late_hit(at, shortfall);
        }
        let Some(shortfall) = here else {
            return false;
        };
        let line = Line {
            matched: true,
            ..line.clone()
        };
        self.hit(line, r, Some(shortfall));
        true
    }

    /// Complete lines, each ending in a newline, starting at `offset` in the stream.
    fn body(&mut self, body: &[u8], offset: u64, newlines: u64) {
        let compiled = &*COMPILED;
        let base_line = self.line;
        // Lines owed as context to a hit in the previous chunk.
        let mut pos = 0;
        let mut number = base_line;
        while self.awaiting > 0 && pos < body.len() {
            let end = pos + memchr::memchr(b'\n', &body[pos..]).expect("the body ends a line");
            let line = Line::new(number, offset + pos as u64, &body[pos..end], false);
            if self.is_failure(&body[pos..end]) {
                // A match takes its own turn below.
                break;
            }
            self.context_after(&line);
            pos = end + 1;
            number += 1;
        }
        // Lines counted from the body's start up to `counted`; TAP tests counted up to
        // `tap_counted`.
        let (mut counted, mut counted_lines) = (0usize, 0u64);
        let mut tap_counted = 0usize;
        let mut search = 0;
        while let Some(found) = compiled.literals.find(&body[search..]) {
            let at = search + found.start();
            let start = memchr::memrchr(b'\n', &body[..at]).map_or(0, |i| i + 1);
            let end = at + memchr::memchr(b'\n', &body[at..]).expect("the body ends a line");
            search = end + 1;
            let text = &body[start..end];
            let r = match self.recognise(text) {
                Some(r) if r.is_failure() || matches!(r.meaning, Meaning::Tap(_)) => r,
                _ => {
                    if search >= body.len() {
                        break;
                    }
                    continue;
                }
            };
            counted_lines += memchr::memchr_iter(b'\n', &body[counted..start]).count() as u64;
            counted = start;
            let number = base_line + counted_lines;
            if let Meaning::Tap(what) = r.meaning {
                self.tap.count(&body[tap_counted..start]);
                tap_counted = start;
                let after_tests =
                    !self.tap.counting() && self.ends_a_test_before(body, start, number);
                let line = Line::new(number, offset + start as u64, text, false);
                if !self.tap_line(what, &line, after_tests, r) {
                    if search >= body.len() {
                        break;
                    }
                    continue;
                }
            } else {
                self.before_from_body(body, offset, start, number, r);
                let line = Line::new(number, offset + start as u64, text, true);
                self.hit(line, r, None);
            }
            // Its context after, as far as this body goes.
            let mut pos = end + 1;
            let mut n = number + 1;
            while self.awaiting > 0 && pos < body.len() {
                let e = pos + memchr::memchr(b'\n', &body[pos..]).expect("the body ends a line");
                if self.is_failure(&body[pos..e]) {
                    break;
                }
                self.context_after(&Line::new(n, offset + pos as u64, &body[pos..e], false));
                pos = e + 1;
                n += 1;
            }
            if search >= body.len() {
                break;
            }
        }
        self.tap.count(&body[tap_counted..]);
        self.line = base_line + newlines;
        self.remember_tail_of(body, offset);
    }

    /// Whether the line before the one at `start` in `body` (line `number`) ends a TAP
    /// test (see `tap::ends_a_test`); the first line's is the last one remembered.
    fn ends_a_test_before(&self, body: &[u8], start: usize, number: u64) -> bool {
        if start == 0 {
            return self
                .recent
                .back()
                .is_some_and(|l| l.number + 1 == number && tap::ends_a_test(&l.text));
        }
        let from = memchr::memrchr(b'\n', &body[..start - 1]).map_or(0, |i| i + 1);
        tap::ends_a_test(&body[from..start - 1])
    }

    /// Keep the body's last lines as the context a match in the next chunk may need.
    fn remember_tail_of(&mut self, body: &[u8], offset: u64) {
        let mut end = body.len() - 1;
        let mut number = self.line - 1;
        let mut lines = Vec::with_capacity(MAX_CONTEXT);
        while lines.len() < MAX_CONTEXT {
            let start = memchr::memrchr(b'\n', &body[..end]).map_or(0, |i| i + 1);
            lines.push(Line::new(
                number,
                offset + start as u64,
                &body[start..end],
                false,
            ));
            if start == 0 {
                break;
            }
            end = start - 1;
            number -= 1;
        }
        if lines.len() == MAX_CONTEXT {
            self.recent.clear();
        }
        for line in lines.into_iter().rev() {
            self.remember(line);
        }
    }

    fn remember(&mut self, line: Line) {
        if self.recent.len() == MAX_CONTEXT {
            self.recent.pop_front();
        }
        self.recent.push_back(line);
    }

    /// Make the lines before the match at `start` in `body` the recent ones, so that the
    /// hit takes its context from them.
    fn before_from_body(
        &mut self,
        body: &[u8],
        offset: u64,
        start: usize,
        number: u64,
        r: &Recogniser,
    ) {
        let want = usize::from(r.before);
        let mut lines = Vec::with_capacity(want);
        let mut end = start;
        let mut n = number;
        while lines.len() < want && end > 0 {
            let s = memchr::memrchr(b'\n', &body[..end - 1]).map_or(0, |i| i + 1);
            n -= 1;
            lines.push(Line::new(n, offset + s as u64, &body[s..end - 1], false));
            end = s;
        }
        if lines.is_empty() {
            return;
        }
        if lines.len() == want {
            self.recent.clear();
        }
        for line in lines.into_iter().rev() {
            self.remember(line);
        }
    }

    /// Record a match: its context before from the recent lines, its context after to come.
    fn hit(&mut self, line: Line, r: &Recogniser, shortfall: Option<Shortfall>) {
        self.total += 1;
        self.awaiting = r.after;
        self.diagnostics = (r.meaning == Meaning::TapFailure).then(Diagnostics::default);
        let before = usize::from(r.before);
        let mut lines: Vec<Line> = self
            .recent
            .iter()
            .skip(self.recent.len().saturating_sub(before))
            .filter(|l| l.number + before as u64 >= line.number && l.number < line.number)
            .map(|l| Line {
                // Context here, whatever it was to a hit of its own.
                matched: false,
                ..l.clone()
            })
            .collect();
        lines.push(line.clone());
        let hit = Hit { lines, shortfall };
        if self.first.len() < KEEP {
            self.first.push(hit);
        } else {
            if self.last.len() == KEEP {
                self.last.pop_front();
            }
            self.last.push_back(hit);
        }
        self.remember(line);
    }

    /// Record a TAP plan found unmet at its stream's end, after the hits that followed it.
    fn late_hit(&mut self, plan: Line, shortfall: Shortfall) {
        self.total += 1;
        if self.late.len() == KEEP {
            self.late_unkept += 1;
            return;
        }
        self.late.push(Hit {
            lines: vec![Line {
                matched: true,
                ..plan
            }],
            shortfall: Some(shortfall),
        });
    }

    /// Give `line` to the newest hit if it still wants context after.
    fn context_after(&mut self, line: &Line) {
        if self.awaiting == 0 {
            return;
        }
        self.awaiting -= 1;
        match self.diagnostics.as_mut().map(|d| d.take(&line.text)) {
            None | Some(Take::Yes) => {}
            Some(Take::Last) => self.awaiting = 0,
            Some(Take::No) => {
                self.awaiting = 0;
                return;
            }
        }
        let newest = match self.last.back_mut() {
            Some(hit) => hit,
            None => self.first.last_mut().expect("a hit awaits context"),
        };
        newest.lines.push(line.clone());
    }

    /// End the scan: an unfinished last line is tested too, and a TAP stream still open
    /// ends here.
    pub fn finish(mut self) -> Found {
        if self.partial_len > 0 {
            let text = std::mem::take(&mut self.partial);
            let start = self.offset - self.partial_len;
            self.one_line(&text, start, self.partial_len);
        }
        if let Some((at, shortfall)) = self.tap.end() {
            self.late_hit(at, shortfall);
        }
        let gap = match (self.first.last(), self.last.front()) {
            (Some(a), Some(b)) if self.late_unkept == 0 => {
                Some((a.matched().offset, b.matched().offset))
            }
            _ => None,
        };
        let mut hits = self.first;
        hits.extend(self.last);
        for late in self.late {
            let at = hits.partition_point(|h| h.matched().offset <= late.matched().offset);
            hits.insert(at, late);
        }
        Found {
            unkept: self.total - hits.len() as u64,
            hits,
            total: self.total,
            gap,
        }
    }
}
