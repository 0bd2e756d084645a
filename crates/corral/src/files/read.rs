//! `read_file`: a file's lines, numbered, within a budget.

use serde::{Deserialize, Serialize};

use corral_policy::Act;

use super::access::FileOutcome;
use crate::ctx::Ctx;
use crate::error::{Error, Result};

/// The most lines one `read_file` shows when the request does not say.
pub const DEFAULT_READ_LINES: usize = 2000;
/// Characters of one line shown before it is cut.
const LINE_CHARS: usize = 2000;

/// Read a text file, or a range of its lines.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadFileRequest {
    /// File path, relative to the workspace.
    pub path: String,
    /// First line to show, from 1 (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<usize>,
    /// How many lines (default 2000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<usize>,
}

impl ReadFileRequest {
    /// A request for all of `path` (up to the default bound).
    pub fn new(path: impl Into<String>) -> Self {
        Self {
            path: path.into(),
            ..Self::default()
        }
    }

    /// Lines `offset..offset+limit` (from 1).
    pub fn lines(mut self, offset: usize, limit: usize) -> Self {
        self.offset = Some(offset);
        self.limit = Some(limit);
        self
    }
}

impl Ctx {
    /// Read a file inside the workspace: numbered lines (`cat -n` style), at most `limit`
    /// of them and at most the run's output budget in bytes, with where to read on.
    pub(crate) fn read_file(&self, request: &ReadFileRequest) -> Result<FileOutcome> {
        let call = serde_json::to_string(request).unwrap_or_default();
        self.file_step("read_file", call, |step| {
            let path = self.resolve_file(&request.path, false)?;
            self.check_files("read_file", step, &[(Act::Read, path.clone())])?;
            let cannot = |why: String| {
                Error::invalid(format!(
                    "{} cannot be read ({why}): check the path with list_dir",
                    request.path
                ))
            };
            let bytes = match self.file_roots()?.read(&path) {
                Ok(Some(bytes)) => bytes,
                Ok(None) => return Err(cannot("No such file or directory".into())),
                Err(_) if path.is_dir() => {
                    return Err(Error::invalid(format!(
                        "{} is a directory: list it with list_dir",
                        request.path
                    )));
                }
                Err(e) => return Err(cannot(crate::redirect::plain(&e))),
            };
            Ok(render(
                &self.show_path(&path),
                &bytes,
                request.offset.unwrap_or(1).max(1),
                request.limit.unwrap_or(DEFAULT_READ_LINES).max(1),
                self.config
                    .output_budget
                    .max(crate::config::MIN_READ_BUDGET),
            ))
        })
    }
}

fn render(shown: &str, bytes: &[u8], offset: usize, limit: usize, budget: usize) -> String {
    if bytes[..bytes.len().min(8192)].contains(&0) {
        return format!("{shown}: a binary file of {} bytes, not shown", bytes.len());
    }
    let text = String::from_utf8_lossy(bytes);
    let total = text.lines().count();
    if total == 0 {
        return format!("{shown}: empty file");
    }
    if offset > total {
        return format!(
            "{shown}: {total} lines; offset {offset} is past the end: read from offset 1 to {total}"
        );
    }
    let mut out = String::new();
    let mut last = offset - 1;
    for (i, line) in text.lines().enumerate().skip(offset - 1).take(limit) {
        let mut line = line.to_string();
        if line.chars().count() > LINE_CHARS {
            let cut: String = line.chars().take(LINE_CHARS).collect();
            line = format!("{cut}[… line cut at {LINE_CHARS} characters]");
        }
        let numbered = format!("{:>6}\t{line}\n", i + 1);
        if out.len() + numbered.len() > budget && last >= offset {
            break;
        }
        out.push_str(&numbered);
        last = i + 1;
    }
    if last < total {
        out.push_str(&format!(
            "[{shown}: lines {offset}-{last} of {total}; read on with offset={}]\n",
            last + 1
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::render;

    #[test]
    fn a_range_says_where_to_read_on() {
        let text = (1..=10).map(|i| format!("l{i}\n")).collect::<String>();
        let out = render("f", text.as_bytes(), 3, 2, 1 << 20);
        assert_eq!(
            out,
            "     3\tl3\n     4\tl4\n[f: lines 3-4 of 10; read on with offset=5]\n"
        );
        assert!(render("f", b"a\0b", 1, 10, 100).contains("binary"));
        assert!(render("f", text.as_bytes(), 11, 1, 100).contains("past the end"));
    }

    #[test]
    fn the_byte_budget_bounds_a_huge_file() {
        let text = "x".repeat(100) + "\n";
        let text = text.repeat(10_000);
        let out = render("f", text.as_bytes(), 1, 100_000, 4096);
        assert!(out.len() < 4096 + 200, "{}", out.len());
        assert!(out.ends_with("read on with offset=38]\n"), "{out}");
    }
}
