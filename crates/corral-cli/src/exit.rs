//! One place maps every result to an exit status.

use std::process::ExitCode;

/// What a subcommand finished with.
pub enum Done {
    /// Exit with this status (the command's, or 0).
    Status(i32),
}

/// Exit statuses of corral's own failures.
pub const BAD_REQUEST: u8 = 2;
/// The policy or the approver refused the command: nothing ran.
pub const REFUSED: u8 = 123;
pub const CORRAL_FAILED: u8 = 125;
/// What a filter ended by SIGPIPE exits with: the reader of corral's output (`| head`)
/// stopped reading. The call itself ran and is in the trace.
pub const OUTPUT_CLOSED: u8 = 128 + 13;

/// A request corral's CLI itself refuses (a step that does not exist): exits 2, as a
/// library refusal of a bad request does.
#[derive(Debug)]
pub struct BadRequest(pub String);

impl std::fmt::Display for BadRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BadRequest {}

pub fn report(result: anyhow::Result<Done>) -> ExitCode {
    match result {
        Ok(Done::Status(code)) => ExitCode::from(u8::try_from(code.clamp(0, 255)).unwrap_or(1)),
        Err(err) if stdout_closed(&err) => ExitCode::from(OUTPUT_CLOSED),
        Err(err) if err.downcast_ref::<BadRequest>().is_some() => {
            eprintln!("corral: {err}");
            ExitCode::from(BAD_REQUEST)
        }
        // A trace store, a run or a step the request names that does not exist: the
        // request's, not corral's failure.
        Err(err)
            if err
                .downcast_ref::<corral::trace::TraceError>()
                .is_some_and(|e| e.kind() == corral::trace::TraceErrorKind::NotFound) =>
        {
            eprintln!("corral: {err}");
            ExitCode::from(BAD_REQUEST)
        }
        Err(err) => {
            let corral_err = err.downcast_ref::<corral::Error>();
            // A corral error's message is complete; others read better with their causes.
            match corral_err {
                Some(e) => eprintln!("corral: {e}"),
                None => eprintln!("corral: {}", once(&err)),
            }
            if let Some(refusal) = corral_err.and_then(corral::Error::line_refusal) {
                eprint!("{}", point_at(refusal.span.start, refusal.span.end));
            }
            // A rule or an approver said no: the request was well formed. (A line the
            // grammar does not admit is the request's fault: 2, as a usage error.)
            let refused =
                corral_err.is_some_and(|e| e.denial().is_some() && e.line_refusal().is_none());
            let bad_request = corral_err.is_some_and(|e| {
                matches!(
                    e.kind(),
                    corral::ErrorKind::InvalidRequest | corral::ErrorKind::Refused
                )
            });
            ExitCode::from(if refused {
                REFUSED
            } else if bad_request {
                BAD_REQUEST
            } else {
                CORRAL_FAILED
            })
        }
    }
}

/// The error with its causes, each said once: a cause whose text the message already
/// carries (a store error names its SQLite error) is not repeated.
fn once(err: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in err.chain() {
        let said = cause.to_string();
        if text.contains(&said) {
            continue;
        }
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&said);
    }
    text
}

fn stdout_closed(err: &anyhow::Error) -> bool {
    use std::io::ErrorKind::BrokenPipe;
    err.chain().any(|cause| {
        let io = cause.downcast_ref::<std::io::Error>().map(|e| e.kind());
        let json = cause
            .downcast_ref::<serde_json::Error>()
            .and_then(serde_json::Error::io_error_kind);
        io == Some(BrokenPipe) || json == Some(BrokenPipe)
    })
}

/// The line being run, kept so a refusal can be shown under it.
static LINE: std::sync::OnceLock<String> = std::sync::OnceLock::new();

/// Remember the line a refusal will point into.
pub fn remember_line(line: &str) {
    let _ = LINE.set(line.to_string());
}

/// The line, and a caret under the refused construct:
///
/// ```text
///   ls -l $(pwd)
///         ^^^^^^
/// ```
fn point_at(start: usize, end: usize) -> String {
    let Some(line) = LINE.get() else {
        return String::new();
    };
    // Only single-line input can be pointed at simply; a multi-line line names its span.
    if line.contains('\n') || end > line.len() || start > end {
        return String::new();
    }
    let pad = line[..start].chars().count();
    let width = line[start..end].chars().count().max(1);
    format!("  {line}\n  {}{}\n", " ".repeat(pad), "^".repeat(width))
}
