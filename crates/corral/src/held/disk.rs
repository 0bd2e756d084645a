//! The store's own files, by name: all of them under `held/` in corral's state directory,
//! which no box sees (`state_paths` in `run/mod.rs`). Nothing here touches a workspace.

use std::io::{self, Read, Write};
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};

/// Make `dir` and its missing parents, private to the person (a held version may hold
/// what they would not share).
pub(super) fn make_dirs(dir: &Path) -> io::Result<()> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

/// Make the directory `dir`, which must not exist yet; `false` when it does.
pub(super) fn make_new_dir(dir: &Path) -> io::Result<bool> {
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(false),
        Err(e) => Err(e),
    }
}

/// Put `bytes` as the whole file `name` in `dir` (a temporary renamed over it, so a reader
/// sees the old file or the new, whole); `None` removes it.
pub(super) fn put(dir: &Path, name: &str, bytes: Option<&[u8]>) -> io::Result<()> {
    let path = dir.join(name);
    let Some(bytes) = bytes else {
        return match std::fs::remove_file(&path) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        };
    };
    let temp = dir.join(format!(".{name}.put"));
    let written = (|| {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&temp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        std::fs::rename(&temp, &path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    written
}

/// The whole file at `path` if it holds at most `limit` bytes: `Ok(None)` when there is
/// none, `Err(size)` when it is larger.
pub(super) fn read(path: &Path, limit: u64) -> io::Result<Result<Option<Vec<u8>>, u64>> {
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Ok(None)),
        Err(e) => return Err(e),
    };
    let size = file.metadata()?.len();
    if size > limit {
        return Ok(Err(size));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
    file.take(limit.saturating_add(1)).read_to_end(&mut bytes)?;
    match bytes.len() as u64 {
        n if n > limit => Ok(Err(n)),
        _ => Ok(Ok(Some(bytes))),
    }
}

/// The names in `dir` that are UTF-8 and not hidden (a `.put` temporary); none when it is
/// missing.
pub(super) fn names(dir: &Path) -> io::Result<Vec<String>> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut names = Vec::new();
    for entry in entries {
        if let Ok(name) = entry?.file_name().into_string()
            && !name.starts_with('.')
        {
            names.push(name);
        }
    }
    Ok(names)
}

/// Remove the directory `dir` and what it holds; then each of `parents` (innermost first)
/// that is left empty.
pub(super) fn remove_tree(dir: &Path, parents: &[PathBuf]) -> io::Result<()> {
    match std::fs::remove_dir_all(dir) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    for parent in parents {
        // Not empty (another entry of the step, or of the run): kept.
        if std::fs::remove_dir(parent).is_err() {
            break;
        }
    }
    Ok(())
}
