//! Reading the rest of an output: the `output` tool.
//!
//! An observation shows a call's head and tail and says what it left out, naming the exact
//! call that reads it ([`ReadMore`]). [`Run::output`](crate::Run::output) is that call: a range of lines or
//! bytes, a head, a tail, or the lines matching a pattern with context, of a capture that
//! belongs to this run, within the run's output budget, numbered like `grep -n`, saying
//! what it did not show and how to read on.
//!
//! A capture is addressed by the step or handle a result of this run named. A step of
//! another run (in the same store or any other) is an error that says so, never someone
//! else's bytes.

use std::fs::File;
use std::io::{self, Read};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::capture::reader::{Excerpt, Selection};
use crate::config::ReadMore;
use crate::error::{Error, Result};
use crate::outcome::Observed;

/// One of a call's two streams.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum StreamName {
    /// Standard output.
    #[default]
    Stdout,
    /// Standard error.
    Stderr,
}

impl StreamName {
    /// `stdout` or `stderr`.
    pub fn word(self) -> &'static str {
        match self {
            StreamName::Stdout => "stdout",
            StreamName::Stderr => "stderr",
        }
    }
}

/// Read part of a captured output of this run: one of `lines`, `bytes`, `head`, `tail`
/// or `grep` (default: from the first line, as much as fits).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OutputRequest {
    /// From a result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// A handle of this run, for its output instead of a step's.
    pub handle: Option<u32>,
    /// stdout (default) or stderr.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    pub stream: Option<StreamName>,
    /// "A-B" from 1, or "A-".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lines: Option<String>,
    /// "A-B" from 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<String>,
    /// First N lines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub head: Option<u64>,
    /// Last N lines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tail: Option<u64>,
    /// Regex.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grep: Option<String>,
    /// Lines around each match.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<u64>,
}

impl OutputRequest {
    /// The selection this request asks for, or why it is not a valid one.
    pub fn selection(&self) -> Result<Selection> {
        let given: Vec<&str> = [
            ("lines", self.lines.is_some()),
            ("bytes", self.bytes.is_some()),
            ("head", self.head.is_some()),
            ("tail", self.tail.is_some()),
            ("grep", self.grep.is_some()),
        ]
        .into_iter()
        .filter_map(|(name, set)| set.then_some(name))
        .collect();
        if given.len() > 1 {
            return Err(Error::invalid(format!(
                "output takes one of lines, bytes, head, tail and grep, not {}: make one call for each",
                given.join(" and ")
            )));
        }
        if self.context.is_some() && self.grep.is_none() {
            return Err(Error::invalid(
                "context goes with grep: give a pattern, or leave context out",
            ));
        }
        let selection = if let Some(spec) = &self.lines {
            let (first, last) = Selection::range(spec, "lines").map_err(Error::invalid)?;
            if first == 0 {
                return Err(Error::invalid("lines count from 1: write \"1-…\""));
            }
            Selection::Lines { first, last }
        } else if let Some(spec) = &self.bytes {
            let (first, last) = Selection::range(spec, "bytes").map_err(Error::invalid)?;
            Selection::Bytes { first, last }
        } else if let Some(n) = self.head {
            Selection::Head(n)
        } else if let Some(n) = self.tail {
            Selection::Tail(n)
        } else if let Some(pattern) = &self.grep {
            Selection::grep(pattern, self.context.unwrap_or(0)).map_err(Error::invalid)?
        } else {
            Selection::Lines {
                first: 1,
                last: None,
            }
        };
        Ok(selection)
    }
}

/// What [`Run::output`](crate::Run::output) read.
#[derive(Debug, Clone, Serialize)]
pub struct OutputView {
    /// The text the model reads: a header naming the capture and the part shown, the
    /// numbered lines, and what was not shown with the call that reads on.
    pub observation: String,
    /// Lines the capture holds.
    pub total_lines: u64,
    /// Bytes the capture holds.
    pub total_bytes: u64,
    /// The first and last line (or byte) shown.
    pub shown: Option<(u64, u64)>,
    /// For a grep: every matching line, shown or not.
    pub matches: Option<u64>,
}

impl Observed for OutputView {
    fn outcome(&self) -> &'static str {
        "read"
    }
    fn observation(&self) -> &str {
        &self.observation
    }
}

/// Which capture a pointer names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Source {
    Step(i64, StreamName),
    Handle(u32),
}

impl Source {
    /// The same capture's `stream`: a step's other stream; a handle has one.
    pub(crate) fn stream(self, stream: StreamName) -> Source {
        match self {
            Source::Step(step, _) => Source::Step(step, stream),
            handle => handle,
        }
    }
}

/// The one way every surface says how to read part of a capture.
#[derive(Debug, Clone)]
pub(crate) struct Pointer {
    pub style: ReadMore,
    /// The run's store, named in a command when it is not the default one.
    pub store: PathBuf,
    /// The run, which a command names with a handle.
    pub run_id: String,
}

impl Pointer {
    /// The call that reads `part` (`("lines", "41-642")`) of `source`.
    pub(crate) fn call(&self, source: Source, part: (&str, &str)) -> String {
        let (key, value) = part;
        match self.style {
            ReadMore::Tool => {
                let value = match value.parse::<u64>() {
                    Ok(n) if key != "lines" && key != "bytes" => serde_json::json!(n),
                    _ => serde_json::json!(value),
                };
                let mut args = serde_json::Map::new();
                match source {
                    Source::Step(step, stream) => {
                        args.insert("step".into(), step.into());
                        args.insert("stream".into(), stream.word().into());
                    }
                    Source::Handle(handle) => {
                        args.insert("handle".into(), handle.into());
                    }
                }
                args.insert(key.into(), value);
                format!("output {}", serde_json::Value::Object(args))
            }
            ReadMore::Command => {
                let mut out = match source {
                    Source::Step(step, stream) => {
                        format!("corral trace output {step} --stream {}", stream.word())
                    }
                    Source::Handle(handle) => {
                        format!(
                            "corral trace output --handle {handle} --run {}",
                            self.run_id
                        )
                    }
                };
                let value = if value.contains(|c: char| !c.is_ascii_alphanumeric() && c != '-') {
                    corral_line::quote(value).into_owned()
                } else {
                    value.to_string()
                };
                out.push_str(&format!(" --{key} {value}"));
                if !crate::paths::is_found_untold(&self.store) {
                    out.push_str(&format!(
                        " --store {}",
                        corral_line::quote(&self.store.display().to_string())
                    ));
                }
                out
            }
        }
    }
}

/// A reader over pieces of a file, in order.
pub(crate) struct Pieces {
    file: File,
    pieces: std::vec::IntoIter<(u64, u64)>,
    current: (u64, u64),
}

impl Pieces {
    pub(crate) fn open(path: &Path, pieces: Vec<(u64, u64)>) -> io::Result<Self> {
        Ok(Self {
            file: File::open(path)?,
            pieces: pieces.into_iter(),
            current: (0, 0),
        })
    }
}

impl Read for Pieces {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while self.current.1 == 0 {
            match self.pieces.next() {
                Some(piece) => self.current = piece,
                None => return Ok(0),
            }
        }
        let (pos, len) = self.current;
        let n = (len.min(buf.len() as u64)) as usize;
        let n = self.file.read_at(&mut buf[..n], pos)?;
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the capture is shorter than its layout says",
            ));
        }
        self.current = (pos + n as u64, len - n as u64);
        Ok(n)
    }
}

/// The observation of a read: a header, the text, and what was not shown.
pub(crate) fn render(
    excerpt: &Excerpt,
    selection: &Selection,
    source: Source,
    pointer: &Pointer,
) -> String {
    let name = match source {
        Source::Step(step, stream) => format!("step {step} {}", stream.word()),
        Source::Handle(handle) => format!("handle {handle} output"),
    };
    let size = format!(
        "{} line{}, {} bytes",
        excerpt.total_lines,
        if excerpt.total_lines == 1 { "" } else { "s" },
        excerpt.total_bytes
    );
    if excerpt.total_bytes == 0 {
        return format!("{name}: empty (nothing was printed)\n");
    }
    let is_bytes = matches!(selection, Selection::Bytes { .. });
    let unit = if is_bytes { "bytes" } else { "lines" };
    let mut out = match (selection, excerpt.shown) {
        (
            Selection::Grep {
                pattern, context, ..
            },
            _,
        ) => {
            let matches = excerpt.matches.unwrap_or(0);
            let context = match context {
                0 => String::new(),
                n => format!(", {n} line{} of context", if *n == 1 { "" } else { "s" }),
            };
            format!(
                "{name} ({size}): {matches} line{} match {pattern:?}{context}\n",
                if matches == 1 { "" } else { "s" }
            )
        }
        (_, Some((a, b))) => format!("{name} ({size}): {unit} {a}-{b}\n"),
        (_, None) => format!("{name} ({size}): nothing in that range\n"),
    };
    out.push_str(&excerpt.text);
    if excerpt.long_lines > 0 {
        let rest = match excerpt.long_line_rest {
            Some((line, first, last)) if last >= first => format!(
                "; the rest of line {line} is bytes {first}-{last}: read it with {}",
                pointer.call(source, ("bytes", &format!("{first}-{last}")))
            ),
            _ => String::new(),
        };
        out.push_str(&format!(
            "[{} line{} longer than the reply (or 64 KiB) shown and searched only in part{rest}]\n",
            excerpt.long_lines,
            if excerpt.long_lines == 1 { "" } else { "s" }
        ));
    }
    if let Some(next) = excerpt.resume_at {
        let (key, value) = match selection {
            Selection::Grep { .. } => {
                let shown = excerpt.text.lines().filter(|l| is_match_line(l)).count();
                out.push_str(&format!(
                    "[… stopped after {shown} matching lines: the reply is full; narrow the pattern, or read from line {next} with {}]\n",
                    pointer.call(source, ("lines", &format!("{next}-")))
                ));
                return out;
            }
            Selection::Bytes { last, .. } => (
                "bytes",
                match last {
                    Some(l) => format!("{next}-{l}"),
                    None => format!("{next}-"),
                },
            ),
            Selection::Lines { last: Some(l), .. } => ("lines", format!("{next}-{l}")),
            Selection::Head(n) => ("lines", format!("{next}-{n}")),
            _ => ("lines", format!("{next}-")),
        };
        out.push_str(&format!(
            "[… the reply is full; read on with {}]\n",
            pointer.call(source, (key, &value))
        ));
    }
    out
}

/// Whether a line of an excerpt is a selected line (`N:`), not context (`N-`).
fn is_match_line(line: &str) -> bool {
    let digits = line.bytes().take_while(u8::is_ascii_digit).count();
    digits > 0 && line.as_bytes().get(digits) == Some(&b':')
}
