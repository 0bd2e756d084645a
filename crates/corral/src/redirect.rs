//! Redirect targets: resolved when the line is planned, so the path that is checked is the
//! file that is opened, and checked again when the stage starts, so a target that changed
//! in between (an earlier stage replaced a symlink) is not opened behind the check's back.
//! A sandboxed stage opens them itself, inside its box, without following a symlink (see
//! `corral_sys::box_redirects`); an unconfined one has them opened by corral.
//!
//! Three kinds of target never reach a file:
//!
//! - `/dev/stdin`, `/dev/stdout`, `/dev/stderr` and `/dev/fd/0`–`2` (also through
//!   `/proc/self/fd`) name the command's own descriptors. A shell opens them in the
//!   command's process; corral plans them before the process exists, so it makes them
//!   what they mean: a copy of descriptor 0, 1 or 2 at that point.
//! - Anything else under `/proc/self`, `/proc/thread-self` or `/dev/fd`, and any `/proc`
//!   entry of a thread in corral's memory (its own threads, a child not yet exec'd) would
//!   be corral's, not the command's: its environment, its open files. Refused.
//! - Writes into corral's own state (the trace and its captures). Refused.

use std::path::{Component, Path, PathBuf};

use crate::error::{Error, Result};

/// What a written target turned out to be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Target {
    /// A file, at this resolved path.
    File(PathBuf),
    /// One of the command's own descriptors (0, 1 or 2).
    Descriptor(u8),
}

/// Resolve `target` as written, from `cwd`. `writing` says whether it will be written;
/// `protected` are directories no redirect may write into.
pub(crate) fn resolve(
    cwd: &Path,
    target: &str,
    writing: bool,
    protected: &[PathBuf],
) -> Result<Target> {
    if target.is_empty() {
        return Err(Error::invalid("a redirect target is empty: name a file"));
    }
    let joined = cwd.join(target);
    if let Some(fd) = own_descriptor(&joined) {
        return match fd {
            0..=2 => Ok(Target::Descriptor(fd as u8)),
            _ => Err(own_process(target)),
        };
    }
    if names_own_process(&joined) {
        return Err(own_process(target));
    }
    let resolved = resolve_path(&joined).map_err(|e| {
        Error::invalid(format!(
            "redirect target {target} cannot be resolved ({}): name a reachable file",
            plain(&e)
        ))
    })?;
    if names_own_process(&resolved) {
        return Err(own_process(target));
    }
    if writing && let Some(dir) = protected.iter().find(|p| resolved.starts_with(p)) {
        return Err(Error::invalid(format!(
            "redirect target {target} is inside corral's own state or policy ({}): commands may not write there; a person changes the policy with an editor, outside corral",
            dir.display()
        )));
    }
    Ok(Target::File(resolved))
}

/// Resolve `joined` through every existing part: canonical where the file exists,
/// otherwise the deepest existing ancestor made canonical with the rest appended as
/// written (no lexical `..` folding: the kernel decides what `missing/../f` means).
pub(crate) fn resolve_path(joined: &Path) -> std::io::Result<PathBuf> {
    if let Ok(existing) = joined.canonicalize() {
        return Ok(existing);
    }
    let mut rest = Vec::new();
    let mut at = joined;
    loop {
        let Some(parent) = at.parent() else {
            return Ok(joined.to_path_buf());
        };
        rest.push(
            at.file_name()
                .map(PathBuf::from)
                .unwrap_or_else(|| PathBuf::from("..")),
        );
        match parent.canonicalize() {
            Ok(base) => {
                let mut out = base;
                for part in rest.iter().rev() {
                    out.push(part);
                }
                return Ok(out);
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => at = parent,
            Err(e) => return Err(e),
        }
    }
}

/// `/dev/stdin`, `/dev/stdout`, `/dev/stderr`, `/dev/fd/N`, `/proc/self/fd/N`,
/// `/proc/thread-self/fd/N`: the descriptor number.
fn own_descriptor(path: &Path) -> Option<u32> {
    let text = path.to_str()?;
    match text {
        "/dev/stdin" => return Some(0),
        "/dev/stdout" => return Some(1),
        "/dev/stderr" => return Some(2),
        _ => {}
    }
    ["/dev/fd/", "/proc/self/fd/", "/proc/thread-self/fd/"]
        .iter()
        .find_map(|prefix| text.strip_prefix(prefix))
        .and_then(|n| n.parse().ok())
}

/// Whether `path` is inside this process's own `/proc` entry or `/dev/fd`.
fn names_own_process(path: &Path) -> bool {
    let mut parts = path
        .components()
        .skip_while(|c| matches!(c, Component::RootDir));
    match (parts.next(), parts.next()) {
        (Some(Component::Normal(a)), Some(Component::Normal(b))) if a == "proc" => {
            // Any id of a thread (or a not yet exec'd child) in corral's memory.
            b == "self"
                || b == "thread-self"
                || b.to_str()
                    .and_then(|id| id.parse::<u32>().ok())
                    .is_some_and(corral_sys::own_process::shares_memory)
        }
        (Some(Component::Normal(a)), Some(Component::Normal(b))) => a == "dev" && b == "fd",
        _ => false,
    }
}

fn own_process(target: &str) -> Error {
    Error::invalid(format!(
        "redirect target {target} would be corral's own process, not the command's: only /dev/stdin, \
         /dev/stdout, /dev/stderr and /dev/fd/0-2 are supported there"
    ))
}

/// An I/O error's message without the "(os error N)" suffix.
pub(crate) fn plain(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_descriptors_become_copies() {
        let cwd = Path::new("/tmp");
        assert_eq!(
            resolve(cwd, "/dev/stdout", true, &[]).unwrap(),
            Target::Descriptor(1)
        );
        assert_eq!(
            resolve(cwd, "/dev/fd/2", true, &[]).unwrap(),
            Target::Descriptor(2)
        );
        assert_eq!(
            resolve(cwd, "/proc/self/fd/0", false, &[]).unwrap(),
            Target::Descriptor(0)
        );
    }

    #[test]
    fn the_rest_of_corrals_own_process_is_refused() {
        let cwd = Path::new("/tmp");
        for t in [
            "/dev/fd/5",
            "/proc/self/environ",
            "/proc/thread-self/fd/9",
            "/proc/self/fd/7",
        ] {
            assert!(resolve(cwd, t, false, &[]).is_err(), "{t}");
        }
        let mine = format!("/proc/{}/environ", std::process::id());
        assert!(resolve(cwd, &mine, false, &[]).is_err());
    }

    #[test]
    fn a_missing_directory_resolves_through_what_exists() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        assert_eq!(
            resolve_path(&base.join("a/b/f")).unwrap(),
            base.join("a/b/f")
        );
    }

    #[test]
    fn writes_into_protected_state_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let err = resolve(&base, "trace.db", true, std::slice::from_ref(&base)).unwrap_err();
        assert!(err.to_string().contains("corral's own state"), "{err}");
        assert!(resolve(&base, "trace.db", false, std::slice::from_ref(&base)).is_ok());
    }
}
