//! The bearer token every request over HTTP carries, loopback included, and where it
//! comes from.
//!
//! A box with the network on can reach corral's loopback port like any local process; a
//! session it opened would get its own questions and could answer them itself. The token
//! is what it lacks, so it is never optional and never where a box can read it:
//!
//! 1. `--token-file FILE`: refused when FILE lies in the workspace or a root the box
//!    writes; otherwise read, and hidden from every session's box as a read deny.
//! 2. `CORRAL_MCP_TOKEN`: the variable is among the default environment denies
//!    (`*TOKEN*`), so no command sees it.
//! 3. Neither: `mcp-token` in corral's state directory ([`corral::mcp_token_path`]), made
//!    once (256 bits from the kernel's random source, `0600`) and reused on every start,
//!    so a client's configuration stays valid. It is one of corral's own files, which
//!    every box has hidden.
//!
//! Whatever the source, a token shorter than [`MIN_CHARS`] is refused at start.

use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::Error;

/// The fewest characters a token may have: 32 hex digits are 128 bits.
pub const MIN_CHARS: usize = 32;

/// The environment variable that may hold the token.
pub const TOKEN_VAR: &str = "CORRAL_MCP_TOKEN";

/// Where the token comes from, as the operator said.
#[derive(Debug, Clone, Default)]
pub enum TokenSource {
    /// `--token-file FILE`.
    File(PathBuf),
    /// The token itself.
    Given {
        /// The token, as given.
        text: String,
        /// What gave it, for a refusal (`CORRAL_MCP_TOKEN`).
        from: String,
    },
    /// None given: the one in corral's state directory, made there the first time.
    #[default]
    StateDir,
}

/// The token the server requires, and where the operator finds it.
pub(crate) struct Token {
    pub secret: String,
    /// For the startup log: where the token is, and whether it was made now.
    pub whence: String,
}

/// Resolve `source`: `box_reach` is what a session's box reads and writes (the workspace
/// first, then the writable roots), which a token file must lie outside of.
pub(crate) fn resolve(source: &TokenSource, box_reach: &[PathBuf]) -> Result<Token, Error> {
    match source {
        TokenSource::File(path) => {
            let canonical = path.canonicalize().map_err(|e| {
                config(format!(
                    "the token file {} cannot be read ({e}): give a readable file holding the token",
                    path.display()
                ))
            })?;
            refuse_in_reach(path, &canonical, box_reach)?;
            let text = std::fs::read_to_string(&canonical).map_err(|e| {
                config(format!(
                    "the token file {} cannot be read ({e}): give a readable file holding the token",
                    path.display()
                ))
            })?;
            let from = format!("the token file {}", path.display());
            Ok(Token {
                secret: check(&text, &from)?,
                whence: format!("the bearer token is in {}", canonical.display()),
            })
        }
        TokenSource::Given { text, from } => Ok(Token {
            secret: check(text, from)?,
            whence: format!("the bearer token is the one in {from}"),
        }),
        TokenSource::StateDir => {
            let path = corral::mcp_token_path().ok_or_else(|| {
                config(
                    "no state directory to keep the bearer token in: set --state DIR, \
                     CORRAL_STATE_DIR or HOME, or give --token-file FILE or CORRAL_MCP_TOKEN"
                        .to_string(),
                )
            })?;
            let (text, made) = in_state_dir(&path)?;
            let from = format!("the token file {}", path.display());
            let made = if made { "made now" } else { "made earlier" };
            Ok(Token {
                secret: check(&text, &from)?,
                whence: format!(
                    "the bearer token is in {} ({made}, kept for every start with this state directory)",
                    path.display()
                ),
            })
        }
    }
}

fn config(message: String) -> Error {
    Error::Config(message)
}

/// Refuse a token file a box could read or replace: one in the workspace or a writable
/// root.
fn refuse_in_reach(given: &Path, canonical: &Path, box_reach: &[PathBuf]) -> Result<(), Error> {
    let Some((n, root)) = box_reach
        .iter()
        .enumerate()
        .find(|(_, root)| canonical.starts_with(root))
    else {
        return Ok(());
    };
    let what = if n == 0 {
        "the workspace"
    } else {
        "a root the box writes"
    };
    let instead = match corral::mcp_token_path() {
        Some(state) => format!(
            "give no --token-file and corral keeps one in {} (0600, hidden from every box)",
            state.display()
        ),
        None => "or give the token in CORRAL_MCP_TOKEN".to_string(),
    };
    Err(config(format!(
        "the token file {} lies in {what} ({}), where a command in the box can read it and open \
         its own session: put it outside every directory the box reaches, or {instead}",
        given.display(),
        root.display()
    )))
}

/// The token as given, trimmed, or why it cannot be one.
fn check(text: &str, from: &str) -> Result<String, Error> {
    let token = text.trim();
    if token.is_empty() {
        return Err(config(format!(
            "{from} is empty: put a token of at least {MIN_CHARS} characters in it \
             (`openssl rand -hex 32` makes one), or give none and corral makes one in its state directory"
        )));
    }
    if token.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(config(format!(
            "{from} holds whitespace or control characters inside the token: a bearer token is one word"
        )));
    }
    let n = token.chars().count();
    if n < MIN_CHARS {
        return Err(config(format!(
            "{from} holds a token of {n} characters: a bearer token needs at least {MIN_CHARS}, \
             so that it cannot be guessed (`openssl rand -hex 32` makes one of 64)"
        )));
    }
    Ok(token.to_string())
}

/// The token in `path`, made there first when there is none: its text, and whether it
/// was made now. Made beside it and linked in, so two servers starting at once agree.
fn in_state_dir(path: &Path) -> Result<(String, bool), Error> {
    let io = |what: &str, e: std::io::Error| {
        config(format!(
            "{what} the bearer token {} failed ({e}): give --token-file FILE or CORRAL_MCP_TOKEN, \
             or a writable --state DIR",
            path.display()
        ))
    };
    match read_own(path) {
        Ok(text) => return Ok((text, false)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(io("reading", e)),
    }
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|e| io("making the directory of", e))?;
    let fresh = std::fs::Permissions::from_mode(0o600);
    let beside = dir.join(format!(".mcp-token.{}", std::process::id()));
    let _ = std::fs::remove_file(&beside);
    let written = (|| {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&beside)?;
        // The mode given to open is masked by the umask; this one is not.
        file.set_permissions(fresh)?;
        let secret = random_hex()?;
        file.write_all(secret.as_bytes())?;
        file.sync_all()?;
        Ok::<_, std::io::Error>(secret)
    })();
    let linked = written.and_then(|secret| std::fs::hard_link(&beside, path).map(|()| secret));
    let _ = std::fs::remove_file(&beside);
    match linked {
        Ok(secret) => Ok((secret, true)),
        // Another server made it first: use that one.
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => read_own(path)
            .map(|text| (text, false))
            .map_err(|e| io("reading", e)),
        Err(e) => Err(io("writing", e)),
    }
}

/// Read the token file `path` only if it is a regular file (a link planted there is not
/// followed: `O_NOFOLLOW`) that no one but its owner may read.
fn read_own(path: &Path) -> std::io::Result<String> {
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
        .open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::other("it is not a regular file"));
    }
    if meta.permissions().mode() & 0o077 != 0 {
        return Err(std::io::Error::other(format!(
            "its mode is {:o}, so others may read it: `chmod 600` it, or remove it and corral makes another",
            meta.permissions().mode() & 0o777
        )));
    }
    let mut text = String::new();
    file.read_to_string(&mut text)?;
    Ok(text)
}

/// 256 bits from the kernel's random source, as 64 hex digits.
fn random_hex() -> std::io::Result<String> {
    let mut bytes = [0u8; 32];
    let mut filled = 0;
    while filled < bytes.len() {
        match rustix::rand::getrandom(&mut bytes[filled..], rustix::rand::GetRandomFlags::empty()) {
            Ok(n) => filled += n,
            Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_or_empty_token_is_refused_with_the_length_needed() {
        let short = check("abc", "CORRAL_MCP_TOKEN").err().unwrap().to_string();
        assert!(short.contains("3 characters"), "{short}");
        assert!(short.contains("at least 32"), "{short}");
        let empty = check("  \n", "CORRAL_MCP_TOKEN").err().unwrap().to_string();
        assert!(empty.contains("is empty"), "{empty}");
        assert!(check(&"a".repeat(32), "x").is_ok());
    }

    #[test]
    fn a_made_token_is_256_bits_kept_0600_and_reused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state/mcp-token");
        let (first, made) = in_state_dir(&path).unwrap();
        assert!(made);
        assert_eq!(first.len(), 64);
        assert!(first.bytes().all(|b| b.is_ascii_hexdigit()));
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let (again, made) = in_state_dir(&path).unwrap();
        assert!(!made);
        assert_eq!(again, first);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let wide = in_state_dir(&path).err().unwrap().to_string();
        assert!(wide.contains("chmod 600"), "{wide}");
    }

    #[test]
    fn a_token_file_in_the_workspace_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().canonicalize().unwrap();
        let file = ws.join("token");
        std::fs::write(&file, "a".repeat(40)).unwrap();
        let refused = resolve(&TokenSource::File(file), std::slice::from_ref(&ws))
            .err()
            .unwrap()
            .to_string();
        assert!(refused.contains("lies in the workspace"), "{refused}");
    }
}
