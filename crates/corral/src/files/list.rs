//! `list_dir`: what a directory holds, a few levels down, bounded.

use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use serde::{Deserialize, Serialize};

use corral_policy::Act;

use super::access::FileOutcome;
use crate::ctx::Ctx;
use crate::error::{Error, Result};
use crate::sandbox::sets::Sets;

/// The most entries one listing shows.
const MAX_ENTRIES: usize = 500;
/// Directories listed by name only: their contents are tooling's, not the project's.
const NOT_DESCENDED: &[&str] = &[".git", "node_modules", "target", ".venv", "__pycache__"];

/// List a directory.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListDirRequest {
    /// Directory, relative to the workspace (default: its root).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Levels to descend, 1 to 5 (default 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub depth: Option<usize>,
}

impl ListDirRequest {
    /// List `path`.
    pub fn new(path: impl Into<String>) -> Self {
        Self {
            path: Some(path.into()),
            depth: None,
        }
    }
}

impl Ctx {
    /// List a directory inside the workspace: directories end in `/`, files show their
    /// size, symbolic links their target; `.git`, `node_modules`, `target` and the like
    /// are named but not entered.
    pub(crate) fn list_dir(&self, request: &ListDirRequest) -> Result<FileOutcome> {
        let call = serde_json::to_string(request).unwrap_or_default();
        self.file_step("list_dir", call, |step| {
            let asked = request.path.as_deref().unwrap_or(".");
            let sets = self.file_sets();
            let path = self.resolve_in(&sets, asked, false)?;
            self.check_files("list_dir", step, &[(Act::Read, path.clone())])?;
            let dir = match self.file_roots()?.dir(&path) {
                Ok(dir) => dir,
                Err(e) if e.raw_os_error() == Some(rustix::io::Errno::NOTDIR.raw_os_error()) => {
                    return Err(Error::invalid(format!(
                        "{asked} is not a directory: read a file with read_file, or list its parent"
                    )));
                }
                Err(e) => {
                    return Err(Error::invalid(format!(
                        "{asked} cannot be listed ({}): check the path",
                        crate::redirect::plain(&e)
                    )));
                }
            };
            let depth = request.depth.unwrap_or(2).clamp(1, 5);
            let mut listing = Listing {
                sets: &sets,
                out: Vec::new(),
                more: 0,
            };
            listing.walk(&dir, &path, "", depth);
            let Listing { out, more, .. } = listing;
            let mut text = format!("{}/\n", self.show_path(&path));
            for line in &out {
                text.push_str(line);
                text.push('\n');
            }
            if out.is_empty() {
                text.push_str("(empty)\n");
            }
            if more > 0 {
                text.push_str(&format!(
                    "[… {more} more entries not shown: list a subdirectory]\n"
                ));
            }
            Ok(text)
        })
    }
}

/// A listing as it is made: the sets that say what is hidden, the lines, and how many
/// entries did not fit.
struct Listing<'a> {
    sets: &'a Sets,
    out: Vec<String>,
    more: usize,
}

impl Listing<'_> {
    /// List the directory open as `dir` (at `path`), descending through descriptors (a
    /// subdirectory is opened beneath it, never through a symlink), so what is listed is
    /// what was checked. An entry the box hides is named, as the box names it, and said
    /// to be hidden: its size is not shown and a directory is not entered.
    fn walk(&mut self, dir: &OwnedFd, path: &Path, indent: &str, depth: usize) {
        use rustix::fs::{AtFlags, FileType};
        let Ok(listing) = rustix::fs::Dir::read_from(dir) else {
            self.out.push(format!("{indent}  (cannot be read)"));
            return;
        };
        let mut entries: Vec<(std::ffi::CString, FileType)> = listing
            .filter_map(Result::ok)
            .filter(|e| e.file_name() != c"." && e.file_name() != c"..")
            .map(|e| (e.file_name().to_owned(), e.file_type()))
            .collect();
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        for (name_c, kind) in entries {
            if self.out.len() >= MAX_ENTRIES {
                self.more += 1;
                continue;
            }
            let name = name_c.to_string_lossy().into_owned();
            let at = path.join(std::ffi::OsStr::from_bytes(name_c.as_bytes()));
            if self.sets.hidden_by(&at).is_some() {
                let slash = if kind == FileType::Directory { "/" } else { "" };
                self.out
                    .push(format!("{indent}  {name}{slash} (hidden by the sandbox)"));
                continue;
            }
            let st = rustix::fs::statat(dir, name_c.as_c_str(), AtFlags::SYMLINK_NOFOLLOW).ok();
            let kind = match (kind, &st) {
                (FileType::Unknown, Some(st)) => FileType::from_raw_mode(st.st_mode),
                (kind, _) => kind,
            };
            match kind {
                FileType::Symlink => {
                    let target = rustix::fs::readlinkat(dir, name_c.as_c_str(), Vec::new())
                        .map(|t| t.to_string_lossy().into_owned())
                        .unwrap_or_default();
                    self.out.push(format!("{indent}  {name} -> {target}"));
                }
                FileType::Directory => {
                    self.out.push(format!("{indent}  {name}/"));
                    if depth > 1 && !NOT_DESCENDED.contains(&name.as_str()) {
                        let flags = rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::DIRECTORY;
                        match crate::beneath::open_beneath(dir, Path::new(&name), flags) {
                            Ok(sub) => self.walk(&sub, &at, &format!("{indent}  "), depth - 1),
                            Err(_) => self.out.push(format!("{indent}    (cannot be read)")),
                        }
                    }
                }
                _ => {
                    let size = st.map_or(0, |st| st.st_size);
                    self.out.push(format!("{indent}  {name} ({size} bytes)"));
                }
            }
        }
    }
}
