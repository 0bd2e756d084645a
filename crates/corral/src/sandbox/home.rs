//! The person's home in the box: a directory of the run's own, with the toolchains put
//! back read-only.
//!
//! A home holds far more secrets than any deny list names (shell history, tokens under
//! `~/.config`, an agent's own API key, mail, notes), so the box sees none of it by
//! default: the home is covered by a directory of the run's own (see
//! `corral_sys::box_dirs`), which commands may write as they would a home, and what a
//! build needs from the real one is put back, read-only, at its path: the toolchains and
//! package managers below ([`TOOLCHAINS`]), and what `[sandbox] home_read` adds. A
//! workspace or writable root in the home is put back writable. The read denies still
//! hold inside what is put back.
//!
//! A toolchain is put back by role: its install (binaries, libraries, the package cache it
//! reads), never its user configuration. Its configuration files and credential stores
//! (the rows of [`derived::CONFIGS`]) are left out of what is put back, and what builds
//! read of them comes as a derived copy without credentials, written into the box's own
//! home at the run's open ([`derive_into`]).
//!
//! What the person runs is put back too: the directories of their `PATH` the box would
//! hide, the prefixes their links lead to, a venv's and the active environment's prefix
//! ([`from_path`]), so the static list need only name what no `PATH` reveals.
//!
//! Root's home, when it is not the person's (root with `HOME` elsewhere, as a CI job
//! sets it; an ordinary user on a host that lets others into `/root`), is covered the
//! same way, its toolchains put back: a job's compilers there still run, and its keys are
//! not read. Other users' homes under `/home` are read denies (`super::reach`).

use std::path::{Path, PathBuf};

pub(crate) mod derived;
pub(crate) mod from_path;

/// What is put back of the home, read-only, where it exists: toolchains, their package
/// caches and the settings builds read that hold no credentials (the configuration that
/// may is derived instead, see [`derived`]). Not `~/.cache`: it holds every other project's
/// build cache and tools' tokens; the box's build caches are the workspace's own (see
/// `super::caches`).
pub const TOOLCHAINS: &[&str] = &[
    ".cargo",
    ".rustup",
    ".pyenv",
    ".rbenv",
    ".nvm",
    ".volta",
    ".fnm",
    ".bun",
    ".deno",
    ".local/bin",
    ".local/lib",
    ".local/share/pnpm",
    ".local/share/uv",
    ".local/share/mise",
    ".local/pipx",
    ".asdf",
    ".sdkman",
    ".jdks",
    ".gradle",
    ".m2",
    "go",
    ".go",
    ".gvm",
    ".ghcup",
    ".cabal",
    ".stack",
    ".elan",
    ".opam",
    ".dotnet",
    ".nuget",
    ".pub-cache",
    ".julia",
    ".conda",
    "miniconda3",
    "anaconda3",
    ".pixi",
    ".rye",
    ".nix-profile",
    ".npm",
    ".config/git/ignore",
    ".config/git/attributes",
];

/// The paths of the home the box sees (read-only): the [`TOOLCHAINS`] and `home_read`'s
/// entries (`~/…`) that exist, as they are named (a symbolic link stays one). A
/// toolchain directory that holds configuration ([`derived::CONFIGS`]) is put back by its
/// other entries, down to the configuration's own directory ([`by_role`]); a `home_read`
/// entry is the person's own choice, put back as named.
pub(crate) fn put_back(home: &Path, home_read: &[String]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for path in candidates(home, home_read) {
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        let rel = path.strip_prefix(home).unwrap_or(&path);
        let toolchain = TOOLCHAINS.iter().any(|t| Path::new(t) == rel);
        if toolchain && meta.is_dir() {
            by_role(&path, rel, &mut out);
        } else {
            out.push(path);
        }
    }
    out
}

/// Put back `path` (`rel` below the home), but for the configuration it holds: a
/// directory with a row of [`derived::CONFIGS`] below it is put back entry by entry, the
/// rows left out.
fn by_role(path: &Path, rel: &Path, out: &mut Vec<PathBuf>) {
    if derived::is_row(rel) {
        return;
    }
    let is_dir = std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir());
    if !is_dir || !derived::holds_row(rel) {
        out.push(path.to_path_buf());
        return;
    }
    let Ok(entries) = std::fs::read_dir(path) else {
        return;
    };
    let mut names: Vec<_> = entries.flatten().map(|e| e.file_name()).collect();
    names.sort();
    for name in names {
        by_role(&path.join(&name), &rel.join(&name), out);
    }
}

/// Write the derived copies of the configuration of the person's home (`$HOME`) into
/// `home_dir`, and of root's home when it is not the person's into `other_dir`: the box's
/// own homes, at the run's open. What was made, for the report.
pub(crate) fn derive_into(home_dir: &Path, other_dir: &Path) -> derived::Derived {
    let home = std::env::var_os("HOME");
    let mut made = covered_from(home.as_deref(), &[])
        .map(|h| derived::write(&h, Some(home_dir)))
        .unwrap_or_default();
    if let Some(root) = other_home(home.as_deref()) {
        let root_made = derived::write(&root, Some(other_dir));
        made.includes_left.extend(root_made.includes_left);
    }
    made
}

/// What the box gets of the person's configuration, in a line for the report: the
/// derived copies, and what is not put back that a build may miss. Read once per process.
pub(crate) fn configuration() -> &'static str {
    static LINE: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    LINE.get_or_init(|| {
        let made = covered_from(std::env::var_os("HOME").as_deref(), &[])
            .map(|h| derived::write(&h, None))
            .unwrap_or_default();
        made.line()
    })
}

/// What [`put_back`] looks for: every [`TOOLCHAINS`] and `home_read` entry in `home`.
pub(crate) fn candidates<'a>(
    home: &'a Path,
    home_read: &'a [String],
) -> impl Iterator<Item = PathBuf> + 'a {
    let extra = home_read
        .iter()
        .filter_map(|p| p.strip_prefix("~/"))
        .map(|p| p.trim_end_matches('/'));
    TOOLCHAINS
        .iter()
        .copied()
        .chain(extra)
        .filter(|rel| !rel.is_empty())
        .map(move |rel| home.join(rel))
}

/// Root's home.
const ROOT_HOME: &str = "/root";

/// Root's home, canonical, when it is a directory and neither holds nor lies in the
/// person's home `home` (`$HOME`, as set): the box covers it as it does the home.
pub(crate) fn other_home(home: Option<&std::ffi::OsStr>) -> Option<PathBuf> {
    let root = Path::new(ROOT_HOME).canonicalize().ok()?;
    let home = home
        .filter(|h| !h.is_empty())
        .and_then(|h| Path::new(h).canonicalize().ok());
    let apart = home
        .as_ref()
        .is_none_or(|h| !h.starts_with(&root) && !root.starts_with(h));
    (root.is_dir() && apart).then_some(root)
}

/// A path in `home` (absolute, or `~/…`) that a failed command's `stderr` says is not
/// there, and the host has: hidden by the box's home. With the `home_read` entry that
/// would put it back (its first component below the home).
pub(crate) fn hidden_in_home(stderr: &str, home: &Path) -> Option<(PathBuf, String)> {
    const MISSING: &[&str] = &[
        "no such file or directory",
        "errno 2]",
        "enoent",
        "not found",
    ];
    stderr.lines().find_map(|line| {
        let lower = line.to_ascii_lowercase();
        if !MISSING.iter().any(|m| lower.contains(m)) {
            return None;
        }
        let tilde = line
            .split(|c: char| c.is_whitespace() || "'\"`:".contains(c))
            .filter_map(|w| w.strip_prefix("~/"))
            .map(|rest| home.join(rest));
        super::denied::absolute_paths(line)
            .into_iter()
            .chain(tilde)
            .filter(|p| p.starts_with(home) && p.as_path() != home)
            .find(|p| std::fs::symlink_metadata(p).is_ok())
            .and_then(|p| {
                let first = p.strip_prefix(home).ok()?.components().next()?;
                let entry = format!("~/{}", first.as_os_str().to_string_lossy());
                Some((p, entry))
            })
    })
}

/// The path the box hides that kept a stage's program from starting (`reason`, the
/// stage's "could not be started: No such file or directory"): the program, where it lies
/// in `home`, or the interpreter its `#!` line names there. With the `home_read` entry
/// that shows it: the program's prefix (above its `bin`), never the home itself. A program
/// in a writable root (`writable`) below the home is the workspace's: not read by name.
pub(crate) fn hidden_program(
    reason: &str,
    home: &Path,
    writable: &[PathBuf],
) -> Option<(PathBuf, String)> {
    if !reason.contains("No such file or directory") {
        return None;
    }
    let in_home = |p: &Path| p.starts_with(home) && p != home;
    let program = super::denied::absolute_paths(reason)
        .into_iter()
        .find(|p| std::fs::symlink_metadata(p).is_ok())?;
    // The box's own home is writable too: only a root inside it is the workspace's.
    let in_root = |p: &Path| {
        writable
            .iter()
            .any(|w| p.starts_with(w) && !home.starts_with(w))
    };
    let hidden = if in_home(&program) && !in_root(&program) {
        interpreter(&program)
            .filter(|i| in_home(i) && std::fs::symlink_metadata(i).is_ok())
            .unwrap_or(program)
    } else {
        return None;
    };
    let mut prefix = from_path::prefix_of(&hidden);
    if !in_home(&prefix) {
        let first = hidden.strip_prefix(home).ok()?.components().next()?;
        prefix = home.join(first);
    }
    let rest = prefix.strip_prefix(home).ok()?;
    Some((hidden, format!("~/{}", rest.display())))
}

/// The interpreter a script's `#!` line names, if it names an absolute one.
fn interpreter(program: &Path) -> Option<PathBuf> {
    use std::io::Read;
    let mut head = [0u8; 256];
    let n = std::fs::File::open(program).ok()?.read(&mut head).ok()?;
    let line = head[..n].strip_prefix(b"#!")?;
    let line = line.split(|b| *b == b'\n').next()?;
    let line = std::str::from_utf8(line).ok()?;
    let path = line.split_whitespace().next()?;
    Some(PathBuf::from(path)).filter(|p| p.is_absolute())
}

/// The person's home as the box covers it: `$HOME`, canonical, unless it is `/` or not a
/// directory, or `home_read` keeps it whole (`"~"`).
pub(crate) fn covered(home_read: &[String]) -> Option<PathBuf> {
    covered_from(std::env::var_os("HOME").as_deref(), home_read)
}

/// [`covered`] for the home `home` names.
pub(crate) fn covered_from(
    home: Option<&std::ffi::OsStr>,
    home_read: &[String],
) -> Option<PathBuf> {
    home.filter(|h| !h.is_empty())
        .and_then(|h| Path::new(h).canonicalize().ok())
        .filter(|h| h.is_dir() && h != Path::new("/"))
        .filter(|_| !whole_home(home_read))
}

/// Whether `home_read` keeps the whole home readable (`"~"`): then the box has no home of
/// its own.
pub(crate) fn whole_home(home_read: &[String]) -> bool {
    home_read.iter().any(|p| p == "~" || p == "~/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_exists_of_the_toolchains_and_home_read_is_put_back() {
        let home = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(home.path().join(".cargo/bin")).unwrap();
        std::fs::write(home.path().join(".cargo/config.toml"), "[build]\n").unwrap();
        std::fs::write(
            home.path().join(".cargo/credentials.toml"),
            "token = \"x\"\n",
        )
        .unwrap();
        std::fs::write(home.path().join(".gitconfig"), "[user]\n").unwrap();
        std::fs::create_dir_all(home.path().join("tools")).unwrap();
        std::os::unix::fs::symlink("/usr", home.path().join(".local-usr")).unwrap();
        let back = put_back(
            home.path(),
            &["~/tools/".into(), "~/.local-usr".into(), "~/absent".into()],
        );
        let names: Vec<_> = back
            .iter()
            .map(|p| p.strip_prefix(home.path()).unwrap().display().to_string())
            .collect();
        // The toolchain's install, not its configuration; the configuration is derived.
        assert_eq!(names, [".cargo/bin", "tools", ".local-usr"]);
        assert!(whole_home(&["~".into()]));
        std::fs::write(home.path().join("tools/notes"), "n").unwrap();
        let (path, entry) = hidden_in_home(
            &format!(
                "cat: {}/tools/notes: No such file or directory",
                home.path().display()
            ),
            home.path(),
        )
        .unwrap();
        assert_eq!(path, home.path().join("tools/notes"));
        assert_eq!(entry, "~/tools");
        assert!(hidden_in_home("cat: ~/absent: No such file or directory", home.path()).is_none());
        assert!(!whole_home(&["~/tools".into()]));
    }
}
