//! The library's one public error type: an opaque struct over a kind.
//!
//! A command that runs and fails is not an error: a non-zero exit, a signal, a timeout and
//! an unavailable program are all outcomes (see [`crate::Status`]). An [`Error`] means the
//! request could not be carried out at all, and its message says what to do instead.

/// What went wrong, for callers that branch on it (a CLI choosing its exit code, an MCP
/// server choosing between a tool error and a protocol error).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The request itself is malformed: empty argv, a NUL byte, a missing directory, a bad
    /// duration, a refused environment override. Fix the request and send it again.
    InvalidRequest,
    /// The trace store could not be opened, read or written.
    Store,
    /// The operating system refused something corral needed (creating a capture file,
    /// spawning a process for a reason other than the program being unavailable).
    Io,
    /// The request was refused before anything ran: a construct the command-line grammar
    /// does not admit, a policy decision, or an approver's answer. Nothing started.
    Refused,
    /// The run was already closed.
    Closed,
}

/// An error from the corral library. Its `Display` is a complete, actionable sentence.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct Error {
    kind: ErrorKind,
    message: String,
    #[source]
    source: Option<Box<dyn std::error::Error + Send + Sync + 'static>>,
    denial: Option<Box<Denial>>,
}

/// Why a request was refused before anything ran, in fields a client can show a model as
/// an ordinary result: a model that reads `refused` with a hint tries something else, where
/// a tool error often ends its run.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Denial {
    /// Refused by the grammar or a rule, or declined by the person asked.
    pub status: DenialStatus,
    /// The rule that decided, as written (`"rm"`, `"git push*"`), when a rule did.
    pub rule: Option<String>,
    /// Where the decision came from: a policy layer's name, `grammar`, `terminal`,
    /// `sandbox`, or `workspace` (a `cd` out of it).
    pub layer: Option<String>,
    /// What to do instead, in one sentence.
    pub hint: String,
}

/// How a request was stopped before anything ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum DenialStatus {
    /// The grammar or the policy refused it.
    Refused,
    /// The person asked said no, or could not be asked.
    Declined,
}

impl DenialStatus {
    /// The word results and the trace use: `refused` or `declined`.
    pub fn word(self) -> &'static str {
        match self {
            DenialStatus::Refused => "refused",
            DenialStatus::Declined => "declined",
        }
    }
}

/// `Result<T, corral::Error>`.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub(crate) fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
            source: None,
            denial: None,
        }
    }

    pub(crate) fn invalid(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::InvalidRequest, message)
    }

    /// A grammar refusal with a sentence added to its message.
    pub(crate) fn refused_noting(refusal: corral_line::Refusal, note: &str) -> Self {
        let mut err = Self::refused(refusal);
        err.message = format!("{}; {note}", err.message);
        err
    }

    /// The same error with a sentence added to its message.
    pub(crate) fn noting(mut self, sentence: &str) -> Self {
        self.message = format!("{} {sentence}", self.message);
        self
    }

    pub(crate) fn refused(refusal: corral_line::Refusal) -> Self {
        let denial = Denial {
            status: DenialStatus::Refused,
            rule: None,
            layer: Some("grammar".into()),
            hint: refusal.reason().to_string(),
        };
        Self {
            kind: ErrorKind::Refused,
            message: format!("refused: {refusal}"),
            source: Some(Box::new(refusal)),
            denial: Some(Box::new(denial)),
        }
    }

    /// A refusal whose message is its whole explanation (no rule or layer to name).
    pub(crate) fn policy(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Refused, message)
    }

    /// A refusal or a declined approval, with its fields.
    pub(crate) fn denied(message: impl Into<String>, denial: Denial) -> Self {
        Self {
            denial: Some(Box::new(denial)),
            ..Self::new(ErrorKind::Refused, message)
        }
    }

    /// Why the request was refused or declined, when it was: the fields a client shows
    /// next to the message.
    pub fn denial(&self) -> Option<&Denial> {
        self.denial.as_deref()
    }

    /// The grammar's refusal, when that is why the request was refused: which construct,
    /// where in the line (a byte span), and why.
    pub fn line_refusal(&self) -> Option<&corral_line::Refusal> {
        self.source.as_ref()?.downcast_ref()
    }

    pub(crate) fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        let context = context.into();
        Self {
            kind: ErrorKind::Io,
            message: format!("{context}: {source}"),
            source: Some(Box::new(source)),
            denial: None,
        }
    }

    /// A bad request found by a caller validating its own input (a CLI flag, a server's
    /// argument), so it is reported and mapped like the library's own.
    pub fn invalid_request(message: impl Into<String>) -> Self {
        Self::invalid(message)
    }

    /// What kind of failure this is.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }
}

impl Error {
    /// A store error told in `message`, which says what it means for the call.
    pub(crate) fn store_saying(message: String, source: corral_trace::TraceError) -> Self {
        Self {
            kind: ErrorKind::Store,
            message,
            source: Some(Box::new(source)),
            denial: None,
        }
    }
}

impl From<corral_trace::TraceError> for Error {
    fn from(e: corral_trace::TraceError) -> Self {
        Self {
            kind: ErrorKind::Store,
            message: e.to_string(),
            source: Some(Box::new(e)),
            denial: None,
        }
    }
}
