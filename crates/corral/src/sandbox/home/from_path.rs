//! Toolchains from what the person runs: the directories of the `PATH` corral was given
//! that the box would hide, put back read-only.
//!
//! The static [`super::TOOLCHAINS`] list names where managers install; a person's real
//! setup is wherever their `PATH` says (a venv in `~/.cache`, a checkout's tools under
//! `/tmp`). So at a run's open each `PATH` directory that lies where the box has a
//! directory of its own (a covered home, `/tmp`) is put back, with what it needs to run:
//!
//! 1. the directory itself ([`Why::Path`]);
//! 2. the prefix each symbolic link in it leads to (a venv's `bin/python` →
//!    `~/.pyenv/versions/3.x/bin/python3.x` puts back `~/.pyenv/versions/3.x`)
//!    ([`Why::Link`]);
//! 3. for a venv's `bin` (a `pyvenv.cfg` beside it), the venv and the prefix its
//!    `home =` names ([`Why::Venv`]);
//! 4. the active environment's prefix, `VIRTUAL_ENV` and `CONDA_PREFIX` ([`Why::Env`]).
//!
//! Each is checked first ([`refusal`]): never `/`, a home or a directory above one, a
//! world-writable directory, another user's, or one holding a read deny; an entry that is
//! empty, `.` or relative is ignored. What is refused is kept with its reason, for the
//! report. Nothing is run to find any of it.

use std::ffi::{OsStr, OsString};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// The most paths derived from the environment: a box keeps at most
/// `corral_sys::box_dirs::MAX_KEPT` paths and leaves the host's mounts as they are past it.
pub(crate) const MOST: usize = 32;

/// How many entries of a `PATH` directory are looked at for links.
const MOST_ENTRIES: usize = 512;

/// Why a path is put back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Why {
    /// A directory on `PATH`.
    Path,
    /// The prefix a link in a `PATH` directory leads to.
    Link,
    /// A venv whose `bin` is on `PATH`, or the prefix its `pyvenv.cfg` names.
    Venv,
    /// The active environment's prefix, from this variable.
    Env(&'static str),
}

impl std::fmt::Display for Why {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Why::Path => f.write_str("from PATH"),
            Why::Link => f.write_str("a link on PATH leads there"),
            Why::Venv => f.write_str("a venv on PATH"),
            Why::Env(name) => write!(f, "from {name}"),
        }
    }
}

/// Why a path is not put back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// Empty, `.` or relative: it names no directory of its own.
    Relative,
    /// `/`, or a home or a directory above one: never the whole home.
    Home,
    /// Anyone may write it.
    WorldWritable,
    /// Another user's.
    OtherUser,
    /// A read deny lies in it.
    HoldsHidden,
    /// Past [`MOST`].
    TooMany,
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Refusal::Relative => "relative, ignored",
            Refusal::Home => "the root or a home, never put back whole",
            Refusal::WorldWritable => "world-writable",
            Refusal::OtherUser => "another user's",
            Refusal::HoldsHidden => "it holds a path the box hides",
            Refusal::TooMany => "past the bound of paths put back",
        })
    }
}

/// The variables an environment is read from: `PATH` and the active environment's.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Env {
    pub path: Option<OsString>,
    pub virtual_env: Option<OsString>,
    pub conda_prefix: Option<OsString>,
}

impl Env {
    /// This process's.
    pub(crate) fn now() -> Env {
        Env {
            path: std::env::var_os("PATH"),
            virtual_env: std::env::var_os("VIRTUAL_ENV"),
            conda_prefix: std::env::var_os("CONDA_PREFIX"),
        }
    }
}

/// Where the box hides the host, and what must never be put back whole.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Hiding<'a> {
    /// The directories the box has its own over (the covered homes, `/tmp`), canonical.
    pub covered: &'a [PathBuf],
    /// The homes, canonical.
    pub homes: &'a [PathBuf],
    /// The read denies, canonical.
    pub denied: &'a [PathBuf],
    /// What is put back already (the list, `home_read`): not derived again.
    pub already: &'a [PathBuf],
}

/// What was derived: put back, and refused with the reason.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Derived {
    pub back: Vec<(PathBuf, Why)>,
    pub refused: Vec<(PathBuf, Refusal)>,
}

impl Derived {
    /// The paths put back.
    pub(crate) fn paths(&self) -> impl Iterator<Item = &PathBuf> {
        self.back.iter().map(|(p, _)| p)
    }

    /// The words for the home layer's detail: empty when nothing was derived.
    pub(crate) fn line(&self) -> String {
        let mut out = String::new();
        if !self.back.is_empty() {
            let back: Vec<String> = self
                .back
                .iter()
                .map(|(p, why)| format!("{} ({why})", p.display()))
                .collect();
            out.push_str(&format!("; put back read-only: {}", back.join(", ")));
        }
        if !self.refused.is_empty() {
            let refused: Vec<String> = self
                .refused
                .iter()
                .map(|(p, why)| format!("{} ({why})", p.display()))
                .collect();
            out.push_str(&format!("; not put back: {}", refused.join(", ")));
        }
        out
    }

    /// Add `path` for `why`, once, unless it is refused or already within one put back.
    fn offer(&mut self, path: &Path, why: Why, hiding: Hiding<'_>) {
        let Ok(path) = path.canonicalize() else {
            return;
        };
        // `/` and the homes are told as refused wherever they are; the rest only where
        // the box hides it.
        let home_like = path == Path::new("/") || hiding.homes.iter().any(|h| h.starts_with(&path));
        if !path.is_dir() || !(home_like || hiding.covered.iter().any(|c| path.starts_with(c))) {
            return;
        }
        if self.back.iter().any(|(b, _)| path.starts_with(b))
            || hiding.already.iter().any(|b| path.starts_with(b))
            || self.refused.iter().any(|(r, _)| *r == path)
        {
            return;
        }
        if let Some(no) = refusal(&path, hiding) {
            self.refused.push((path, no));
        } else if self.back.len() >= MOST {
            self.refused.push((path, Refusal::TooMany));
        } else {
            self.back.retain(|(b, _)| !b.starts_with(&path));
            self.back.push((path, why));
        }
    }
}

/// Add what `derived` put back and refused to the home layer's detail, where the box
/// covers the home.
pub(crate) fn tell(layers: &mut [crate::sandbox::LayerReport], derived: &Derived) {
    use crate::sandbox::{Layer, Level};
    let line = derived.line();
    if line.is_empty() {
        return;
    }
    for layer in layers
        .iter_mut()
        .filter(|l| l.layer == Layer::Home && l.level == Level::Full)
    {
        layer.detail.push_str(&line);
    }
}

/// Derive what `env` reveals of the toolchains the box would hide (see the module docs).
pub(crate) fn derive(env: &Env, hiding: Hiding<'_>) -> Derived {
    let mut out = Derived::default();
    let entries = env.path.as_deref().map(std::env::split_paths);
    for entry in entries.into_iter().flatten() {
        if !entry.is_absolute() {
            if !entry.as_os_str().is_empty() {
                out.refused.push((entry, Refusal::Relative));
            }
            continue;
        }
        out.offer(&entry, Why::Path, hiding);
        if !out
            .back
            .iter()
            .any(|(b, _)| entry.canonicalize().is_ok_and(|e| e.starts_with(b)))
        {
            continue;
        }
        for target in link_targets(&entry) {
            out.offer(&prefix_of(&target), Why::Link, hiding);
        }
        if let Some((venv, home)) = venv_of(&entry) {
            out.offer(&venv, Why::Venv, hiding);
            if let Some(home) = home {
                out.offer(&prefix_of_bin(&home), Why::Venv, hiding);
            }
        }
    }
    for (name, value) in [
        ("VIRTUAL_ENV", &env.virtual_env),
        ("CONDA_PREFIX", &env.conda_prefix),
    ] {
        if let Some(v) = value.as_deref().filter(|v| Path::new(v).is_absolute()) {
            out.offer(Path::new(v), Why::Env(name), hiding);
        }
    }
    out
}

/// Why `dir` (canonical) must not be put back, if it must not.
pub(crate) fn refusal(dir: &Path, hiding: Hiding<'_>) -> Option<Refusal> {
    if dir == Path::new("/") || hiding.homes.iter().any(|h| h.starts_with(dir)) {
        return Some(Refusal::Home);
    }
    let meta = std::fs::metadata(dir).ok()?;
    if meta.mode() & 0o002 != 0 {
        return Some(Refusal::WorldWritable);
    }
    let me = rustix::process::geteuid().as_raw();
    if meta.uid() != me && meta.uid() != 0 {
        return Some(Refusal::OtherUser);
    }
    if hiding.denied.iter().any(|d| d.starts_with(dir)) {
        return Some(Refusal::HoldsHidden);
    }
    None
}

/// The files the symbolic links in `dir` lead to, canonical.
fn link_targets(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .take(MOST_ENTRIES)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_symlink()))
        .filter_map(|e| e.path().canonicalize().ok())
        .collect()
}

/// The prefix a program lies in: above its `bin` (or `sbin`), else its directory.
pub(crate) fn prefix_of(program: &Path) -> PathBuf {
    let dir = program.parent().unwrap_or(program);
    prefix_of_bin(dir)
}

/// The prefix above a `bin` (or `sbin`) directory, else the directory.
fn prefix_of_bin(dir: &Path) -> PathBuf {
    let is_bin = dir
        .file_name()
        .is_some_and(|n| n == OsStr::new("bin") || n == OsStr::new("sbin"));
    match dir.parent() {
        Some(up) if is_bin && up != Path::new("/") => up.to_path_buf(),
        _ => dir.to_path_buf(),
    }
}

/// For a venv's `bin` (a `pyvenv.cfg` beside it): the venv, and the directory its
/// `home =` names.
fn venv_of(bin: &Path) -> Option<(PathBuf, Option<PathBuf>)> {
    let venv = bin.parent()?;
    let cfg = std::fs::read_to_string(venv.join("pyvenv.cfg")).ok()?;
    let home = cfg.lines().find_map(|line| {
        let (key, value) = line.split_once('=')?;
        (key.trim() == "home")
            .then(|| PathBuf::from(value.trim()))
            .filter(|p| p.is_absolute())
    });
    Some((venv.to_path_buf(), home))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_venv_on_path_puts_back_itself_and_its_interpreters_prefix() {
        let root = tempfile::tempdir().unwrap();
        let root = root.path().canonicalize().unwrap();
        let home = root.join("me");
        let base = home.join(".pyenv/versions/3.12");
        std::fs::create_dir_all(base.join("bin")).unwrap();
        std::fs::write(base.join("bin/python3.12"), "").unwrap();
        let venv = home.join(".cache/venvs/x");
        std::fs::create_dir_all(venv.join("bin")).unwrap();
        std::fs::write(
            venv.join("pyvenv.cfg"),
            format!("home = {}\n", base.join("bin").display()),
        )
        .unwrap();
        std::os::unix::fs::symlink(base.join("bin/python3.12"), venv.join("bin/python")).unwrap();
        let open = root.join("open");
        std::fs::create_dir_all(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
        let tools = home.join("tools");
        let secret = tools.join(".ssh");
        std::fs::create_dir_all(&secret).unwrap();
        let path = std::env::join_paths([
            venv.join("bin"),
            PathBuf::from("/"),
            home.clone(),
            PathBuf::from("."),
            PathBuf::from(""),
            open.clone(),
            root.clone(),
            tools.clone(),
        ])
        .unwrap();
        let env = Env {
            path: Some(path),
            ..Env::default()
        };
        let hiding = Hiding {
            covered: std::slice::from_ref(&root),
            homes: std::slice::from_ref(&home),
            denied: std::slice::from_ref(&secret),
            already: &[],
        };
        let got = derive(&env, hiding);
        let back: Vec<&PathBuf> = got.paths().collect();
        // The venv holds its `bin`: put back once, whole.
        assert_eq!(back, [&base, &venv], "{got:?}");
        let refused: Vec<(&Path, Refusal)> =
            got.refused.iter().map(|(p, r)| (p.as_path(), *r)).collect();
        assert!(refused.contains(&(&home, Refusal::Home)), "{refused:?}");
        assert!(refused.contains(&(Path::new("."), Refusal::Relative)));
        assert!(refused.contains(&(&open, Refusal::WorldWritable)));
        assert!(refused.contains(&(&root, Refusal::Home)));
        assert!(refused.contains(&(Path::new("/"), Refusal::Home)));
        assert!(refused.contains(&(&tools, Refusal::HoldsHidden)));
        assert!(got.line().contains("(a venv on PATH)"), "{}", got.line());
    }
}
