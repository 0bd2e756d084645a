//! The one error type of the trace store.

use std::fmt;
use std::path::{Path, PathBuf};

use rusqlite::ErrorCode;

/// What went wrong, coarsely; see [`TraceError::kind`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TraceErrorKind {
    /// The file (or its directory) could not be opened or created.
    Open,
    /// The file is an SQLite database but is damaged or truncated.
    Corrupt,
    /// The file is not a corral trace: not an SQLite database at all, or an
    /// SQLite database that belongs to something else.
    NotATrace,
    /// The store was written by a newer corral with a schema this code does
    /// not know.
    TooNew,
    /// The store, or a run or step in it, does not exist.
    NotFound,
    /// A filesystem operation beside the database (capture directories)
    /// failed.
    Io,
    /// An SQLite statement failed (locked, read-only, constraint, ...).
    Sql,
    /// The caller passed something the store cannot accept (e.g. a run id
    /// that is not usable as a directory name).
    Invalid,
}

/// An error from the trace store. Its message names the store's path and
/// says what the operator can do about it.
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct TraceError(Box<Repr>);

impl TraceError {
    /// The coarse category of this error.
    pub fn kind(&self) -> TraceErrorKind {
        match &*self.0 {
            Repr::Open { .. } => TraceErrorKind::Open,
            Repr::Corrupt { .. } => TraceErrorKind::Corrupt,
            Repr::NotATrace { .. } => TraceErrorKind::NotATrace,
            Repr::TooNew { .. } => TraceErrorKind::TooNew,
            Repr::StoreMissing { .. } | Repr::NoSuch { .. } => TraceErrorKind::NotFound,
            Repr::Io { .. } => TraceErrorKind::Io,
            Repr::Sql { .. } => TraceErrorKind::Sql,
            Repr::Invalid { .. } => TraceErrorKind::Invalid,
        }
    }

    /// Whether trying again later may succeed: the store was locked by another writer,
    /// or the disk was full or failed for a moment. A write that failed this way can be
    /// kept and made again.
    pub fn is_transient(&self) -> bool {
        match &*self.0 {
            Repr::Sql { source, .. } => matches!(
                source.sqlite_error_code(),
                Some(
                    ErrorCode::DatabaseBusy
                        | ErrorCode::DatabaseLocked
                        | ErrorCode::DiskFull
                        | ErrorCode::SystemIoFailure
                )
            ),
            Repr::Io { source, .. } => matches!(
                source.kind(),
                std::io::ErrorKind::StorageFull | std::io::ErrorKind::ResourceBusy
            ),
            _ => false,
        }
    }

    /// Whether another writer held the store locked.
    pub fn is_busy(&self) -> bool {
        match &*self.0 {
            Repr::Sql { source, .. } => matches!(
                source.sqlite_error_code(),
                Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)
            ),
            _ => false,
        }
    }

    /// The path of the trace database this error is about.
    pub fn path(&self) -> &Path {
        match &*self.0 {
            Repr::Open { path, .. }
            | Repr::Corrupt { path, .. }
            | Repr::NotATrace { path, .. }
            | Repr::TooNew { path, .. }
            | Repr::StoreMissing { path }
            | Repr::NoSuch { path, .. }
            | Repr::Io { path, .. }
            | Repr::Sql { path, .. }
            | Repr::Invalid { path, .. } => path,
        }
    }

    fn new(repr: Repr) -> Self {
        TraceError(Box::new(repr))
    }

    pub(crate) fn open(path: &Path, detail: impl Into<String>, source: Option<Source>) -> Self {
        Self::new(Repr::Open {
            path: path.to_owned(),
            detail: detail.into(),
            source,
        })
    }

    pub(crate) fn corrupt(path: &Path, detail: impl Into<String>, source: Option<Source>) -> Self {
        Self::new(Repr::Corrupt {
            path: path.to_owned(),
            detail: detail.into(),
            source,
        })
    }

    pub(crate) fn not_a_trace(
        path: &Path,
        detail: impl Into<String>,
        source: Option<Source>,
    ) -> Self {
        Self::new(Repr::NotATrace {
            path: path.to_owned(),
            detail: detail.into(),
            source,
        })
    }

    pub(crate) fn too_new(path: &Path, found: i64, known: usize) -> Self {
        Self::new(Repr::TooNew {
            path: path.to_owned(),
            found,
            known,
        })
    }

    pub(crate) fn store_missing(path: &Path) -> Self {
        Self::new(Repr::StoreMissing {
            path: path.to_owned(),
        })
    }

    pub(crate) fn no_such(path: &Path, what: String) -> Self {
        Self::new(Repr::NoSuch {
            path: path.to_owned(),
            what,
        })
    }

    pub(crate) fn io(
        path: &Path,
        action: &'static str,
        target: &Path,
        source: std::io::Error,
    ) -> Self {
        Self::new(Repr::Io {
            path: path.to_owned(),
            action,
            target: target.to_owned(),
            source,
        })
    }

    pub(crate) fn invalid(path: &Path, detail: String) -> Self {
        Self::new(Repr::Invalid {
            path: path.to_owned(),
            detail,
        })
    }

    /// Classify an SQLite error raised while doing `action` on the store.
    pub(crate) fn sql(path: &Path, action: &'static str, source: rusqlite::Error) -> Self {
        match source.sqlite_error_code() {
            Some(ErrorCode::NotADatabase) => {
                Self::not_a_trace(path, "file is not a database", Some(Source::Sql(source)))
            }
            Some(ErrorCode::DatabaseCorrupt) => Self::corrupt(
                path,
                "database disk image is malformed",
                Some(Source::Sql(source)),
            ),
            Some(ErrorCode::CannotOpen | ErrorCode::PermissionDenied) => Self::open(
                path,
                "unable to open the database file",
                Some(Source::Sql(source)),
            ),
            code => {
                let hint = match code {
                    Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => {
                        "another process holds it locked; try again"
                    }
                    Some(ErrorCode::ReadOnly) => {
                        "it is read-only; check its permissions and those of its directory"
                    }
                    Some(ErrorCode::DiskFull) => "the disk is full; free space or prune",
                    _ => {
                        "if this persists, move the store aside or point --store/CORRAL_STORE elsewhere"
                    }
                };
                Self::new(Repr::Sql {
                    path: path.to_owned(),
                    action,
                    hint,
                    source,
                })
            }
        }
    }
}

/// The underlying cause, when there is one.
#[derive(Debug)]
pub(crate) enum Source {
    Sql(rusqlite::Error),
    Io(std::io::Error),
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Sql(e) => e.fmt(f),
            Source::Io(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for Source {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Source::Sql(e) => Some(e),
            Source::Io(e) => Some(e),
        }
    }
}

const ELSEWHERE: &str = "point --store/CORRAL_STORE elsewhere";

#[derive(Debug, thiserror::Error)]
enum Repr {
    #[error("cannot open trace store {} ({detail}): check the path and its permissions, or {ELSEWHERE}", path.display())]
    Open {
        path: PathBuf,
        detail: String,
        #[source]
        source: Option<Source>,
    },
    #[error("trace store {} is corrupt ({detail}): move it aside (corral will start a new one) or {ELSEWHERE}", path.display())]
    Corrupt {
        path: PathBuf,
        detail: String,
        #[source]
        source: Option<Source>,
    },
    #[error("trace store {} is not a corral trace ({detail}): move it aside or {ELSEWHERE}", path.display())]
    NotATrace {
        path: PathBuf,
        detail: String,
        #[source]
        source: Option<Source>,
    },
    #[error("trace store {} has schema version {found}, newer than this corral understands (up to {known}): upgrade corral or {ELSEWHERE}", path.display())]
    TooNew {
        path: PathBuf,
        found: i64,
        known: usize,
    },
    #[error("no trace store at {} (the default is $XDG_STATE_HOME/corral/trace.db, i.e. ~/.local/state/corral/trace.db): run something under corral first, or point --store/CORRAL_STORE at an existing store", path.display())]
    StoreMissing { path: PathBuf },
    #[error("trace store {} has no {what}", path.display())]
    NoSuch { path: PathBuf, what: String },
    #[error("trace store {}: cannot {action} {}: {source}", path.display(), target.display())]
    Io {
        path: PathBuf,
        action: &'static str,
        target: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("trace store {}: {action} failed ({source}): {hint}", path.display())]
    Sql {
        path: PathBuf,
        action: &'static str,
        hint: &'static str,
        #[source]
        source: rusqlite::Error,
    },
    #[error("trace store {}: {detail}", path.display())]
    Invalid { path: PathBuf, detail: String },
}
