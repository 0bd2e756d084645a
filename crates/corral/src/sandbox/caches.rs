//! Caches in the box: where the common build tools keep theirs, pointed at one directory
//! per workspace that the sandbox lets commands write.
//!
//! A build or a test in `workspace-write` must not fail because `go build` cannot write
//! `~/.cache/go-build` or `npm` cannot write `~/.npm`. Opening the person's own cache
//! directories would let a command plant files every later build trusts, so instead each
//! workspace gets a cache of its own outside it:
//! `$XDG_CACHE_HOME/corral/workspaces/<name>-<hash>` (else `~/.cache/corral/…`). It is
//! writable in the box and named in every sandbox report ([`super::SandboxReport::caches`]).
//!
//! Not redirected: Cargo (`CARGO_HOME` holds the registry a build reads offline; a fresh one
//! would need the network) and Go's module cache (`GOMODCACHE`, read-only by design and
//! only written when downloading).

use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher};
use std::path::{Path, PathBuf};

/// The variables set, and the subdirectory each points at (`""`: the cache root itself).
pub const CACHE_VARIABLES: &[(&str, &str)] = &[
    ("XDG_CACHE_HOME", ""),
    ("GOCACHE", "go-build"),
    ("npm_config_cache", "npm"),
    ("YARN_CACHE_FOLDER", "yarn"),
    ("PIP_CACHE_DIR", "pip"),
    ("UV_CACHE_DIR", "uv"),
    ("PRE_COMMIT_HOME", "pre-commit"),
    ("GRADLE_USER_HOME", "gradle"),
    ("DENO_DIR", "deno"),
    ("BUN_INSTALL_CACHE_DIR", "bun"),
    ("CCACHE_DIR", "ccache"),
    ("SCCACHE_DIR", "sccache"),
];

/// The cache directory of `workspace` (a canonical path, as a run holds it), or `None`
/// when neither `XDG_CACHE_HOME` nor `HOME` says where caches go. It outlives the run, so
/// that the next build finds its cache; whoever removes the workspace may remove it too.
pub fn dir_for(workspace: &Path) -> Option<PathBuf> {
    let non_empty = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let base =
        non_empty("XDG_CACHE_HOME").or_else(|| non_empty("HOME").map(|h| h.join(".cache")))?;
    // A fixed hasher: the same workspace finds the same cache in every run.
    let hash = BuildHasherDefault::<DefaultHasher>::default().hash_one(workspace);
    let name = workspace
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "root".into());
    Some(
        base.join("corral")
            .join("workspaces")
            .join(format!("{name}-{hash:016x}")),
    )
}

/// Create `dir` (owner only).
pub(crate) fn create(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

/// The variables to set for a call: each one's directory under `dir`, unless the call's
/// environment already points it somewhere the box may write (`writable`).
pub(crate) fn variables(
    dir: &Path,
    env: &[crate::env::Var],
    writable: &[PathBuf],
) -> Vec<(String, String)> {
    CACHE_VARIABLES
        .iter()
        .filter(|(name, _)| {
            !env.iter()
                .any(|(k, v)| k == *name && writable.iter().any(|w| Path::new(v).starts_with(w)))
        })
        .map(|(name, sub)| {
            let path = if sub.is_empty() {
                dir.to_path_buf()
            } else {
                dir.join(sub)
            };
            (name.to_string(), path.display().to_string())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_variable_already_pointing_into_the_box_is_kept() {
        let dir = Path::new("/c");
        let ws = PathBuf::from("/ws");
        let env: Vec<crate::env::Var> = vec![
            ("GOCACHE".into(), "/ws/.gocache".into()),
            ("PIP_CACHE_DIR".into(), "/home/me/.cache/pip".into()),
        ];
        let set = variables(dir, &env, &[ws]);
        assert!(!set.iter().any(|(k, _)| k == "GOCACHE"));
        assert!(set.contains(&("PIP_CACHE_DIR".into(), "/c/pip".into())));
        assert!(set.contains(&("XDG_CACHE_HOME".into(), "/c".into())));
    }

    #[test]
    fn the_same_workspace_gets_the_same_cache() {
        let a = dir_for(Path::new("/work/app"));
        assert_eq!(a, dir_for(Path::new("/work/app")));
        assert_ne!(a, dir_for(Path::new("/other/app")));
    }
}
