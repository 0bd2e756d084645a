//! Which workspace policy files a person has trusted, by content.
//!
//! A command that may write the workspace may also write its `corral.toml`, and the next
//! run would load it: `[exec] allow = ["*"]` written by the agent would let the agent run
//! anything. So a workspace file is taken in full only when a person has trusted that exact
//! content (`corral policy trust`, as `direnv allow` does); until then it may tighten the
//! policy (its denies and asks apply at once) but not loosen it (see
//! [`corral_policy::PolicyFile::untrusted`]).
//!
//! Trust is kept in corral's state directory, outside any workspace, in
//! `trusted-policies` there ([`crate::paths::state_dir`]: `--state`, `CORRAL_STATE_DIR`,
//! `$XDG_STATE_HOME/corral`, `~/.local/state/corral`; a store named by
//! `CORRAL_TRUST_STORE` instead): one line per file, `SHA-256 PATH`. Changing a
//! byte of the file, or moving it, makes it untrusted again; a link to a trusted file is
//! not trusted (the path keyed is the link's own).

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::error::{Error, Result};

/// The SHA-256 of `bytes`, in lowercase hex.
pub fn content_hash(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The trust store: which content of which file a person trusted.
#[derive(Debug, Clone)]
pub struct TrustStore {
    path: PathBuf,
}

impl TrustStore {
    /// The store at `path`.
    pub fn at(path: impl Into<PathBuf>) -> Self {
        Self { path: path.into() }
    }

    /// `$CORRAL_TRUST_STORE`, else `trusted-policies` in corral's state directory
    /// ([`crate::paths::state_dir`]: `--state`, `$CORRAL_STATE_DIR`,
    /// `$XDG_STATE_HOME/corral`, `~/.local/state/corral`); `None` when none is set.
    pub fn default_location() -> Option<Self> {
        if let Some(path) = std::env::var_os("CORRAL_TRUST_STORE").filter(|v| !v.is_empty()) {
            return Some(Self::at(path));
        }
        Some(Self::at(
            crate::paths::state_dir()?.path.join("trusted-policies"),
        ))
    }

    /// Where the store is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn entries(&self) -> Vec<(String, String)> {
        std::fs::read_to_string(&self.path)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.split_once(' '))
            .map(|(h, p)| (h.to_string(), p.to_string()))
            .collect()
    }

    /// Whether a person trusted `file` with exactly the content `bytes`.
    pub fn is_trusted(&self, file: &Path, bytes: &[u8]) -> bool {
        let key = key(file);
        let entries = self.entries();
        let mut named = entries.iter().filter(|(_, p)| *p == key).peekable();
        // The hash is the cost (and, the first time, the processor's features probed for
        // it): a file the store does not name is untrusted whatever its content.
        if named.peek().is_none() {
            return false;
        }
        let hash = content_hash(bytes);
        named.any(|(h, _)| *h == hash)
    }

    /// Trust `file` with the content it has now; returns that content's hash.
    pub fn trust(&self, file: &Path) -> Result<String> {
        let bytes = read_regular(file).map_err(|e| {
            Error::invalid(format!(
                "{} cannot be read ({e}): name a policy file that exists",
                file.display()
            ))
        })?;
        corral_policy::config::parse(
            &String::from_utf8_lossy(&bytes),
            &file.display().to_string(),
            "project",
        )
        .map_err(|e| Error::invalid(format!("not trusted, it does not parse: {e}")))?;
        let key = key(file);
        let hash = content_hash(&bytes);
        let mut entries: Vec<(String, String)> = self
            .entries()
            .into_iter()
            .filter(|(_, p)| *p != key)
            .collect();
        entries.push((hash.clone(), key));
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir)
                .map_err(|e| Error::io(format!("creating {}", dir.display()), e))?;
        }
        let text: String = entries.iter().map(|(h, p)| format!("{h} {p}\n")).collect();
        let tmp = self.path.with_extension("tmp");
        std::fs::write(&tmp, text)
            .and_then(|()| std::fs::rename(&tmp, &self.path))
            .map_err(|e| Error::io(format!("writing {}", self.path.display()), e))?;
        Ok(hash)
    }
}

/// The whole of the regular file at `path`, followed if a link (a person may trust a
/// `corral.toml` that links to a file of theirs), but never waited on or read if it is a
/// named pipe or a device: a command may have made the workspace's `corral.toml` one,
/// and `corral policy trust` would hang on it.
pub(crate) fn read_regular(path: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(
            rustix::fs::OFlags::NONBLOCK.bits() as i32 | rustix::fs::OFlags::NOCTTY.bits() as i32,
        )
        .open(path)?;
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file (a directory, a device or a pipe)",
        ));
    }
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// The file's absolute path, as the store keys it: its directory resolved, its own name
/// kept. A symbolic link is keyed where it is, not where it points: a `corral.toml` a
/// command links to a policy trusted elsewhere is not that policy's trust.
fn key(file: &Path) -> String {
    let dir = match file.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    match (std::fs::canonicalize(dir), file.file_name()) {
        (Ok(dir), Some(name)) => dir.join(name),
        _ => file.to_path_buf(),
    }
    .display()
    .to_string()
}
