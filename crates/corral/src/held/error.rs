//! Why a held change could not be kept, shown, applied or dropped: each a sentence that
//! says what to do instead.

use std::path::PathBuf;

use super::workspace::Conflict;
use crate::person;

/// `Result<T, HeldError>`.
pub type Result<T, E = HeldError> = std::result::Result<T, E>;

/// Why a held-change operation failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HeldError {
    /// No held change has this ID (or it is not an ID at all).
    #[error("{}", unknown(.id, .known))]
    Unknown {
        /// The ID asked for.
        id: String,
        /// The IDs held now, oldest first.
        known: Vec<String>,
    },
    /// The file changed since the call started: applying would overwrite that work.
    #[error(
        "not applied: {} changed since the call started, and applying would overwrite that; \
         nothing was changed. Edit it by hand, then `corral review drop {}`",
        person::path(&.0.entry.path),
        .0.entry.id
    )]
    Conflict(Box<Conflict>),
    /// The path is not a plain relative path inside the workspace (`..`, an absolute path,
    /// nothing at all).
    #[error(
        "refused: {} is not a plain path inside the workspace ({why}); nothing was held or written",
        person::path(.path)
    )]
    Path {
        /// The path as given.
        path: PathBuf,
        /// What is wrong with it.
        why: &'static str,
    },
    /// A run id or step that cannot name a directory of the store.
    #[error(
        "refused: run {} step {step} cannot be held: a run id is letters, digits, `-` and `_`, \
         and a step a number from 0",
        person::value(.run)
    )]
    Run {
        /// The run id as given.
        run: String,
        /// The step as given.
        step: i64,
    },
    /// A directory on the way to the file is a symlink or a mount now: nothing is written
    /// through it.
    #[error(
        "not applied: a directory on the way to {} is a symlink or a mount, and nothing is \
         written through one; nothing was changed. Put a real directory there, or edit the \
         file by hand and `corral review drop {id}`",
        person::path(.path)
    )]
    Through {
        /// The held change.
        id: String,
        /// The file, relative to the workspace.
        path: PathBuf,
    },
    /// The stored change is not whole (its held version does not match its hash, or its
    /// record cannot be read).
    #[error(
        "the held change {id} is damaged ({what}), so it cannot be shown or applied: drop it \
         with `corral review drop {id}`"
    )]
    Damaged {
        /// The held change.
        id: String,
        /// What is wrong.
        what: String,
    },
    /// The operating system refused a read or a write.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// Why it failed.
        #[source]
        source: std::io::Error,
    },
}

impl HeldError {
    /// An I/O failure while doing `context`, as `map_err` takes it.
    pub(super) fn io(context: impl Into<String>) -> impl Fn(std::io::Error) -> HeldError {
        let context = context.into();
        move |source| HeldError::Io {
            context: context.clone(),
            source,
        }
    }

    /// The conflict, when that is why an apply was refused.
    pub fn conflict(&self) -> Option<&Conflict> {
        match self {
            HeldError::Conflict(c) => Some(c),
            _ => None,
        }
    }
}

/// How many known IDs an unknown one's error names.
const KNOWN_SHOWN: usize = 10;

fn unknown(id: &str, known: &[String]) -> String {
    let id = person::value(id);
    match known {
        [] => format!("no held change {id}: nothing is held"),
        _ if known.len() > KNOWN_SHOWN => format!(
            "no held change {id}; {} are held (`corral review` lists them)",
            known.len()
        ),
        _ => format!(
            "no held change {id}; held now: {} (`corral review` lists them)",
            known.join(", ")
        ),
    }
}

impl From<HeldError> for crate::Error {
    fn from(e: HeldError) -> Self {
        match e {
            HeldError::Io { context, source } => crate::Error::io(context, source),
            HeldError::Through { .. } => crate::Error::policy(e.to_string()),
            HeldError::Damaged { .. } => crate::Error::io(
                "reading a held change",
                std::io::Error::new(std::io::ErrorKind::InvalidData, e.to_string()),
            ),
            _ => crate::Error::invalid(e.to_string()),
        }
    }
}
