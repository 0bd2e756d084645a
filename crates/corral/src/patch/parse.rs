//! The patch format, parsed: Codex's `apply_patch` envelope.
//!
//! ```text
//! *** Begin Patch
//! *** Add File: hello.txt
//! +Hello, world!
//! *** Update File: src/app.py
//! *** Move to: src/main.py
//! @@ def greet():
//! -print("Hi")
//! +print("Hello, world!")
//! *** Delete File: obsolete.txt
//! *** End Patch
//! ```
//!
//! An update is a list of hunks. A hunk may start with `@@` and the text of a line to find
//! first (a function's signature, say); its own lines are context (` `), removed (`-`) and
//! added (`+`). An empty line inside a hunk is an empty context line. `*** End of File`
//! after a hunk anchors it to the end of the file. Paths are relative to the workspace.
//!
//! As Codex reads it, spaces around the `***` lines and blank lines between sections and
//! between hunks are tolerated, and so is the shell here-document a model wraps a patch
//! in (`apply_patch <<'EOF'` … `EOF`).
//!
//! Parsing is pure: nothing here reads a file. Errors name the line of the patch.

use super::heredoc;

/// A parsed patch: the file operations in the order written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Patch {
    /// Every operation, in order.
    pub ops: Vec<FileOp>,
}

/// One file's operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileOp {
    /// Create a file with these contents (an existing file is refused).
    Add {
        /// The path as written.
        path: String,
        /// The new contents.
        contents: String,
    },
    /// Remove a file.
    Delete {
        /// The path as written.
        path: String,
    },
    /// Change a file's contents, and perhaps move it.
    Update {
        /// The path as written.
        path: String,
        /// Where it moves to, if it does.
        move_to: Option<String>,
        /// The hunks, in file order.
        hunks: Vec<Hunk>,
    },
}

impl FileOp {
    /// The path the operation names first.
    pub fn path(&self) -> &str {
        match self {
            FileOp::Add { path, .. } | FileOp::Delete { path } | FileOp::Update { path, .. } => {
                path
            }
        }
    }

    /// Relative paths made relative to `dir` instead (a here-document's `cd DIR &&`).
    fn start_paths_at(&mut self, dir: &str) {
        let rebase = |p: &mut String| {
            if !std::path::Path::new(p.as_str()).is_absolute() {
                *p = std::path::Path::new(dir)
                    .join(&*p)
                    .to_string_lossy()
                    .into_owned();
            }
        };
        match self {
            FileOp::Add { path, .. } | FileOp::Delete { path } => rebase(path),
            FileOp::Update { path, move_to, .. } => {
                rebase(path);
                if let Some(to) = move_to {
                    rebase(to);
                }
            }
        }
    }
}

/// One hunk of an update.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hunk {
    /// The texts after `@@`: lines to find, in order, before this hunk's lines (a class,
    /// then a method in it).
    pub anchors: Vec<String>,
    /// Its lines, in order.
    pub lines: Vec<HunkLine>,
    /// `*** End of File` followed it: it must match at the end of the file.
    pub end_of_file: bool,
    /// The patch line the hunk starts on (1-based), for messages.
    pub line: usize,
}

/// One line of a hunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HunkLine {
    /// ` text`: must be there, and stays.
    Context(String),
    /// `-text`: must be there, and goes.
    Remove(String),
    /// `+text`: comes in.
    Add(String),
}

impl Hunk {
    /// Context and removed lines: what the file must hold.
    pub fn old(&self) -> Vec<String> {
        self.lines
            .iter()
            .filter_map(|l| match l {
                HunkLine::Context(t) | HunkLine::Remove(t) => Some(t.clone()),
                HunkLine::Add(_) => None,
            })
            .collect()
    }

    /// Lines added and removed.
    pub fn counts(&self) -> (usize, usize) {
        let added = self
            .lines
            .iter()
            .filter(|l| matches!(l, HunkLine::Add(_)))
            .count();
        let removed = self
            .lines
            .iter()
            .filter(|l| matches!(l, HunkLine::Remove(_)))
            .count();
        (added, removed)
    }
}

/// Why a patch could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("patch line {line}: {message}")]
pub struct ParseError {
    /// The line of the patch (1-based).
    pub line: usize,
    /// What is wrong and what to write instead.
    pub message: String,
}

const BEGIN: &str = "*** Begin Patch";
const END: &str = "*** End Patch";
const ADD: &str = "*** Add File: ";
const DELETE: &str = "*** Delete File: ";
const UPDATE: &str = "*** Update File: ";
const MOVE: &str = "*** Move to: ";
const EOF_MARK: &str = "*** End of File";

/// Parse `text` as a patch: the envelope alone, or inside the shell here-document a
/// model writes around it (`apply_patch <<'EOF'` … `EOF`).
pub fn parse(text: &str) -> Result<Patch, ParseError> {
    let lines: Vec<&str> = text.lines().collect();
    let Some((begin, end, dir)) = envelope(&lines)? else {
        return Err(err(
            1,
            format!("the patch is empty: start it with `{BEGIN}`"),
        ));
    };
    let mut parser = Parser {
        lines: &lines[..end],
        at: begin + 1,
    };
    let mut ops = Vec::new();
    while parser.at < parser.lines.len() {
        // Blank lines between sections say nothing.
        if parser.lines[parser.at].trim().is_empty() {
            parser.at += 1;
            continue;
        }
        ops.push(parser.op()?);
    }
    if ops.is_empty() {
        return Err(err(
            end + 1,
            "the patch changes nothing: add `*** Add File:`, `*** Update File:` or `*** Delete File:` sections",
        ));
    }
    if let Some(dir) = dir {
        for op in &mut ops {
            op.start_paths_at(&dir);
        }
    }
    Ok(Patch { ops })
}

/// The indices of the `*** Begin Patch` and `*** End Patch` lines, and the directory a
/// here-document's `cd DIR &&` names; `None` for a patch of blank lines. Blank lines
/// around the envelope, and around the here-document, are tolerated.
fn envelope(lines: &[&str]) -> Result<Option<(usize, usize, Option<String>)>, ParseError> {
    let blank = |i: &usize| lines[*i].trim().is_empty();
    let Some(first) = (0..lines.len()).find(|i| !blank(i)) else {
        return Ok(None);
    };
    let last = (0..lines.len()).rfind(|i| !blank(i)).unwrap_or(first);
    let (begin, end, dir) = if lines[first].trim() == BEGIN {
        (first, last, None)
    } else if let Some(open) = heredoc::opener(lines[first]) {
        let word = &open.word;
        // The first line that is the word alone closes it, as in a shell; a last line
        // that is the word indented does too.
        let closing = (first + 1..lines.len())
            .find(|i| lines[*i].trim_end() == word)
            .or((last > first && lines[last].trim() == word).then_some(last));
        match closing {
            None => {
                return Err(err(
                    last + 1,
                    format!(
                        "the here-document opened on line {} is not closed: end it with a line `{word}` (or send the patch alone, from `{BEGIN}` to `{END}`)",
                        first + 1
                    ),
                ));
            }
            Some(closing) if closing < last => {
                return Err(err(
                    closing + 2,
                    format!(
                        "the here-document ends on line {}, but more follows it, which a shell would run too: send the here-document alone, or the patch alone from `{BEGIN}` to `{END}`",
                        closing + 1
                    ),
                ));
            }
            Some(_) => {}
        }
        let Some(begin) = (first + 1..last).find(|i| !blank(i)) else {
            return Err(err(
                first + 2,
                format!(
                    "the here-document holds no patch: put one between its lines, from `{BEGIN}` to `{END}`"
                ),
            ));
        };
        let end = (first + 1..last).rfind(|i| !blank(i)).unwrap_or(begin);
        if lines[begin].trim() != BEGIN {
            return Err(err(
                begin + 1,
                format!(
                    "a patch starts with `{BEGIN}`, found {:?}",
                    clip(lines[begin])
                ),
            ));
        }
        (begin, end, open.dir)
    } else {
        let hint = if lines[first].contains("<<") {
            format!(
                "; of a shell command only `apply_patch <<'EOF'` (after at most `cd DIR &&`) is read, with the patch on the lines after it and `EOF` alone on the last: send that, or the patch alone from `{BEGIN}` to `{END}`"
            )
        } else {
            String::new()
        };
        return Err(err(
            first + 1,
            format!(
                "a patch starts with `{BEGIN}`, found {:?}{hint}",
                clip(lines[first])
            ),
        ));
    };
    if end == begin || lines[end].trim() != END {
        return Err(err(
            end + 1,
            format!("a patch ends with `{END}`, found {:?}", clip(lines[end])),
        ));
    }
    Ok(Some((begin, end, dir)))
}

struct Parser<'a> {
    lines: &'a [&'a str],
    /// Index of the next line.
    at: usize,
}

impl Parser<'_> {
    fn line_no(&self) -> usize {
        self.at + 1
    }

    fn op(&mut self) -> Result<FileOp, ParseError> {
        let line = self.lines[self.at];
        // A header padded with spaces is still a header.
        let header = line.trim();
        if let Some(path) = header.strip_prefix(ADD) {
            let path = self.path(path)?;
            self.at += 1;
            let mut contents = String::new();
            while let Some(l) = self.lines.get(self.at) {
                if is_header(l) {
                    break;
                }
                let Some(text) = l.strip_prefix('+') else {
                    return Err(err(
                        self.line_no(),
                        format!(
                            "every line of an added file starts with `+`, found {:?}",
                            clip(l)
                        ),
                    ));
                };
                contents.push_str(text);
                contents.push('\n');
                self.at += 1;
            }
            return Ok(FileOp::Add { path, contents });
        }
        if let Some(path) = header.strip_prefix(DELETE) {
            let path = self.path(path)?;
            self.at += 1;
            return Ok(FileOp::Delete { path });
        }
        if let Some(path) = header.strip_prefix(UPDATE) {
            let path = self.path(path)?;
            let start = self.line_no();
            self.at += 1;
            let mut move_to = None;
            if let Some(to) = self
                .lines
                .get(self.at)
                .and_then(|l| l.trim().strip_prefix(MOVE))
            {
                move_to = Some(self.path(to)?);
                self.at += 1;
            }
            let mut hunks = Vec::new();
            while self.at < self.lines.len() && !is_header(self.lines[self.at]) {
                // Blank lines between hunks (after `*** End of File`, say) say nothing.
                if self.lines[self.at].trim().is_empty() {
                    self.at += 1;
                    continue;
                }
                hunks.push(self.hunk(hunks.is_empty())?);
            }
            if hunks.is_empty() && move_to.is_none() {
                return Err(err(
                    start,
                    format!("`{UPDATE}{path}` has no hunks: add `@@` and the lines to change"),
                ));
            }
            return Ok(FileOp::Update {
                path,
                move_to,
                hunks,
            });
        }
        Err(err(
            self.line_no(),
            format!(
                "expected `{ADD}PATH`, `{UPDATE}PATH` or `{DELETE}PATH`, found {:?}",
                clip(line)
            ),
        ))
    }

    fn path(&self, raw: &str) -> Result<String, ParseError> {
        let path = raw.trim();
        if path.is_empty() {
            return Err(err(self.line_no(), "the file path is empty: name a file"));
        }
        Ok(path.to_string())
    }

    /// One hunk: its `@@` lines (none for the first hunk of a file), then its lines up to
    /// the next `@@` or header.
    fn hunk(&mut self, first: bool) -> Result<Hunk, ParseError> {
        let line_no = self.line_no();
        let mut anchors = Vec::new();
        while let Some(rest) = self.lines.get(self.at).and_then(|l| l.strip_prefix("@@")) {
            let rest = rest.trim();
            // `@@ -1,3 +1,4 @@` (a unified diff's header) carries no text to find.
            let unified = rest.starts_with('-') && rest.ends_with("@@");
            if !rest.is_empty() && !unified {
                anchors.push(rest.to_string());
            }
            self.at += 1;
        }
        if !first && self.at == line_no - 1 {
            return Err(err(
                line_no,
                format!(
                    "a hunk starts with `@@`, found {:?}",
                    clip(self.lines[self.at])
                ),
            ));
        }
        let mut hunk = Hunk {
            anchors,
            lines: Vec::new(),
            end_of_file: false,
            line: line_no,
        };
        while let Some(l) = self.lines.get(self.at) {
            if l.trim_end() == EOF_MARK {
                hunk.end_of_file = true;
                self.at += 1;
                break;
            }
            // A line starting with a space is context, whatever it reads like.
            if l.starts_with("@@") || (l.starts_with('*') && is_header(l)) {
                break;
            }
            hunk.lines.push(match l.chars().next() {
                None => HunkLine::Context(String::new()),
                Some(' ') => HunkLine::Context(l[1..].to_string()),
                Some('-') => HunkLine::Remove(l[1..].to_string()),
                Some('+') => HunkLine::Add(l[1..].to_string()),
                Some(_) => {
                    return Err(err(
                        self.line_no(),
                        format!(
                            "a hunk line starts with ` ` (context), `-` (remove) or `+` (add), found {:?}",
                            clip(l)
                        ),
                    ));
                }
            });
            self.at += 1;
        }
        if hunk.counts() == (0, 0) {
            return Err(err(
                line_no,
                "this hunk has no `-` or `+` lines: say what to remove or add",
            ));
        }
        Ok(hunk)
    }
}

/// `*** Add File:`, `*** Delete File:` or `*** Update File:`, padded or not.
fn is_header(line: &str) -> bool {
    let l = line.trim();
    l.starts_with(ADD) || l.starts_with(DELETE) || l.starts_with(UPDATE)
}

fn err(line: usize, message: impl Into<String>) -> ParseError {
    ParseError {
        line,
        message: message.into(),
    }
}

/// A line as quoted in a message: at most 80 characters.
fn clip(line: &str) -> String {
    if line.chars().count() <= 80 {
        line.to_string()
    } else {
        line.chars().take(79).collect::<String>() + "…"
    }
}
