//! Finding the program a command names, the way `execvp` would, before anything starts.
//!
//! Resolving it ourselves means the trace records the path that ran, and a program the
//! machine does not have is an outcome with a reason instead of a spawn error.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use rustix::fs::{Access, access};

/// Why a program cannot be run. An outcome the model reads, not an error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unavailable {
    /// The program as the request named it.
    pub program: String,
    /// Why it cannot run, in a sentence.
    pub reason: String,
    /// What a shell would exit with: 127 when there is no such program, 126 when there is
    /// one that cannot be run (a directory, a file without execute permission).
    pub code: i32,
}

/// No such program.
pub(crate) const NOT_FOUND: i32 = 127;
/// A program that exists but cannot be run.
pub(crate) const CANNOT_RUN: i32 = 126;

/// Resolve `program` against `path_var` (the command's own `PATH`) and `cwd`.
///
/// A name with a `/` is a path, taken relative to `cwd`; any other name is looked up in
/// each `PATH` entry in order (an empty entry means the working directory, as in POSIX).
/// The name is bytes (a file name need not be UTF-8); messages show its escaped form.
pub(crate) fn program(
    name: impl AsRef<OsStr>,
    path_var: Option<&str>,
    cwd: &Path,
) -> Result<PathBuf, Unavailable> {
    let name = name.as_ref();
    let program = crate::os_text::escape(name);
    let unavailable = |code: i32, reason: String| Unavailable {
        program: program.to_string(),
        reason,
        code,
    };
    if name.as_bytes().contains(&b'/') {
        let candidate = cwd.join(name);
        return match check(&candidate) {
            Check::Runnable => Ok(candidate),
            Check::Missing => Err(unavailable(
                NOT_FOUND,
                format!("`{program}` does not exist"),
            )),
            Check::Directory => Err(unavailable(
                CANNOT_RUN,
                format!("`{program}` is a directory"),
            )),
            Check::NotExecutable => Err(unavailable(
                CANNOT_RUN,
                format!("`{program}` is not executable"),
            )),
        };
    }
    let Some(path_var) = path_var else {
        return Err(unavailable(
            NOT_FOUND,
            "PATH is not set in the command's environment".into(),
        ));
    };
    let mut not_executable = None;
    for dir in path_var.split(':') {
        let dir = if dir.is_empty() {
            cwd.to_path_buf()
        } else {
            cwd.join(dir)
        };
        let candidate = dir.join(name);
        match check(&candidate) {
            Check::Runnable => return Ok(candidate),
            Check::NotExecutable => not_executable = not_executable.or(Some(candidate)),
            Check::Missing | Check::Directory => {}
        }
    }
    Err(match not_executable {
        Some(p) => unavailable(
            CANNOT_RUN,
            format!(
                "`{program}` was found at {} but is not executable",
                p.display()
            ),
        ),
        None if matches!(&*program, "apply_patch" | "applypatch") => {
            unavailable(NOT_FOUND, APPLY_PATCH_IS_A_TOOL.to_string())
        }
        None => unavailable(
            NOT_FOUND,
            format!("`{program}` was not found on PATH; is it installed?"),
        ),
    })
}

/// What a line that hands a patch to `apply_patch` is told: no program of that name runs
/// here, the tool takes the same text.
pub(crate) const APPLY_PATCH_IS_A_TOOL: &str = "`apply_patch` is no program here: send the \
    same text, here-document and all, to corral's `apply_patch` tool (`corral mcp \
    --file-tools` offers it; `corral patch` and `Run::apply_patch` take it too). Nothing ran.";

enum Check {
    Runnable,
    Missing,
    Directory,
    NotExecutable,
}

fn check(path: &Path) -> Check {
    match std::fs::metadata(path) {
        Err(_) => Check::Missing,
        Ok(m) if m.is_dir() => Check::Directory,
        Ok(_) if access(path, Access::EXEC_OK).is_ok() => Check::Runnable,
        Ok(_) => Check::NotExecutable,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_a_program_on_path() {
        let found = program("sh", Some("/nonexistent:/usr/bin:/bin"), Path::new("/")).unwrap();
        assert!(found.ends_with("sh"));
    }

    #[test]
    fn a_missing_program_is_unavailable_by_name() {
        let err = program("no-such-program-xyz", Some("/usr/bin"), Path::new("/")).unwrap_err();
        assert!(err.reason.contains("no-such-program-xyz"), "{}", err.reason);
    }

    #[test]
    fn a_directory_is_not_a_program() {
        let err = program("./", Some("/usr/bin"), Path::new("/tmp")).unwrap_err();
        assert!(err.reason.contains("directory"), "{}", err.reason);
    }
}
