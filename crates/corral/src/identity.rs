//! Program identity: a program a rule names, reached under another name, is still that
//! program.
//!
//! `deny rm` is a rule about a file, not about four letters: `ln -s /usr/bin/rm del` or
//! `ln /usr/bin/rm del` make `./del x` the same program. While a plan is checked, every
//! program a stage reaches (the stage itself, and what `env`, `sh -c`, `xargs` and the rest
//! would run) is resolved the way `execvp` would — a name on `PATH`, a path against the
//! stage's directory — with symlinks followed, and its device and inode compared with those
//! of each program an exec rule (`ask` or `deny`) names, found on `PATH` and in the system
//! directories. A match is handed to the policy as a [`SameFile`], and the rule applies as
//! if the program had been named; the decision names the file.
//!
//! Multi-call binaries are the exception: busybox, toybox and uutils' `coreutils` are one
//! file for every program, and the name they run under decides (as `busybox rm` is
//! unwrapped to `rm`). A copy of a program is a different file and is not caught here.

use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use corral_policy::{Effect, Policy, SameFile};

/// Directories searched for ruled programs besides `PATH`.
const SYSTEM_DIRS: &[&str] = &[
    "/usr/local/sbin",
    "/usr/local/bin",
    "/usr/sbin",
    "/usr/bin",
    "/sbin",
    "/bin",
];

/// Files that are every program, under whatever name they run.
const MULTI_CALL: &[&str] = &["busybox", "toybox", "coreutils", "uutils"];

/// A file, by device and inode.
type FileId = (u64, u64);

/// The ruled programs of a policy, found on disk: what a reached program is compared with.
#[derive(Debug, Default)]
pub(crate) struct Ruled {
    files: HashMap<FileId, (String, String)>,
}

impl Ruled {
    /// Find every program an `ask` or `deny` exec rule names, on `path_var` and in the
    /// system directories.
    pub(crate) fn find(policy: &Policy, path_var: Option<&str>) -> Ruled {
        let mut files = HashMap::new();
        let dirs: Vec<PathBuf> = path_var
            .unwrap_or("")
            .split(':')
            .filter(|d| d.starts_with('/'))
            .chain(SYSTEM_DIRS.iter().copied())
            .map(PathBuf::from)
            .collect();
        for program in policy.ruled_programs(Effect::Ask) {
            let candidates: Vec<PathBuf> = if program.starts_with('/') {
                vec![PathBuf::from(&program)]
            } else {
                dirs.iter().map(|d| d.join(&program)).collect()
            };
            for path in candidates {
                let Some(id) = file_id(&path) else { continue };
                if is_multi_call(&path) {
                    continue;
                }
                files
                    .entry(id)
                    .or_insert_with(|| (program.clone(), path.display().to_string()));
            }
        }
        Ruled { files }
    }

    /// For each program in `programs` (as written in an argv) that resolves, from `cwd` and
    /// on `path_var`, to the same file as a ruled program under another name: a
    /// [`SameFile`].
    pub(crate) fn same_files(
        &self,
        programs: &[String],
        named: Option<(&str, &Path)>,
        cwd: &Path,
        path_var: Option<&str>,
    ) -> Vec<SameFile> {
        if self.files.is_empty() {
            return Vec::new();
        }
        let mut out: Vec<SameFile> = Vec::new();
        for program in programs {
            if program.is_empty() || out.iter().any(|s| &s.program == program) {
                continue;
            }
            let Some(path) = found_or_located(program, named, cwd, path_var) else {
                continue;
            };
            let Some(id) = file_id(&path) else { continue };
            let Some((name, ruled_path)) = self.files.get(&id) else {
                continue;
            };
            if is_multi_call(&path) || basename(program) == name.as_str() {
                continue;
            }
            out.push(SameFile {
                program: program.clone(),
                path: ruled_path.clone(),
                device: id.0,
                inode: id.1,
            });
        }
        out
    }
}

/// Device and inode of the file `path` names, symlinks followed.
fn file_id(path: &Path) -> Option<FileId> {
    let m = std::fs::metadata(path).ok()?;
    m.is_file().then(|| (m.dev(), m.ino()))
}

/// Whether the file `path` ends up at (symlinks followed) is a multi-call binary.
fn is_multi_call(path: &Path) -> bool {
    let real = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    real.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| MULTI_CALL.contains(&n))
}

fn basename(program: &str) -> &str {
    program.rsplit('/').next().unwrap_or(program)
}

/// Where `program` would be found: a path against `cwd`, a name on `path_var`.
fn locate(program: &str, cwd: &Path, path_var: Option<&str>) -> Option<PathBuf> {
    if program.contains('/') {
        return Some(cwd.join(program));
    }
    path_var?.split(':').find_map(|dir| {
        let dir = if dir.is_empty() {
            cwd.to_path_buf()
        } else {
            cwd.join(dir)
        };
        let candidate = dir.join(program);
        file_id(&candidate).map(|_| candidate)
    })
}

/// Where `program` is: the file already found for it when `named` names it, else where
/// [`locate`] finds it.
fn found_or_located(
    program: &str,
    named: Option<(&str, &Path)>,
    cwd: &Path,
    path_var: Option<&str>,
) -> Option<PathBuf> {
    match named {
        Some((name, path)) if name == program => Some(path.to_path_buf()),
        _ => locate(program, cwd, path_var),
    }
}

/// The first program of `programs` named by a bare name that resolves, on `path_var`,
/// outside the system directories; `named`, as for [`Ruled::same_files`], is a program
/// whose file is already known.
pub(crate) fn outside_system_dirs(
    programs: &[String],
    named: Option<(&str, &Path)>,
    cwd: &Path,
    path_var: Option<&str>,
) -> Option<(String, PathBuf)> {
    programs
        .iter()
        .filter(|p| !p.is_empty() && !p.contains('/'))
        .find_map(|p| {
            let path = found_or_located(p, named, cwd, path_var)?;
            let dir = path.parent()?;
            (!SYSTEM_DIRS.iter().any(|d| dir == Path::new(d))
                && dir != Path::new("/opt/homebrew/bin"))
            .then(|| (p.clone(), path))
        })
}
