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
//! hold inside what is put back (`~/.cargo/credentials.toml`).

use std::path::{Path, PathBuf};

/// What is put back of the home, read-only, where it exists: toolchains, their package
/// caches and the settings builds read.
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
    ".gitconfig",
    ".config/git",
];

/// The paths of the home the box sees (read-only): the [`TOOLCHAINS`] and `home_read`'s
/// entries (`~/…`) that exist, as they are named (a symbolic link stays one).
pub(crate) fn put_back(home: &Path, home_read: &[String]) -> Vec<PathBuf> {
    let extra = home_read
        .iter()
        .filter_map(|p| p.strip_prefix("~/"))
        .map(|p| p.trim_end_matches('/'));
    TOOLCHAINS
        .iter()
        .copied()
        .chain(extra)
        .filter(|rel| !rel.is_empty())
        .map(|rel| home.join(rel))
        .filter(|p| std::fs::symlink_metadata(p).is_ok())
        .collect()
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
        assert_eq!(names, [".cargo", ".gitconfig", "tools", ".local-usr"]);
        assert!(whole_home(&["~".into()]));
        assert!(!whole_home(&["~/tools".into()]));
    }
}
