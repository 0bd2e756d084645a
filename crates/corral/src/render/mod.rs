//! The one rendering of a result, the same on every surface: a status line with the wall
//! time, then labelled `[stdout]` and `[stderr]` sections, with elisions stated exactly.
//!
//! ```text
//! exit 1 · 0.42s
//! [stdout]
//! running 12 tests
//! [… 48211 bytes, 602 lines omitted; read them with output {"step":17,"stream":"stdout","lines":"41-642"} …]
//! test result: FAILED. 11 passed; 1 failed
//! [stderr]
//! error: test failed
//! ```

use std::fmt::Write;
use std::time::Duration;

pub mod person;

use crate::capture::Window;
use crate::capture::failures::FailureBlock;
use crate::outcome::{StageReport, Status, StreamReport};
use crate::output::{Pointer, Source, StreamName};

/// Signal names for the numbers a command is likely to die of.
pub(crate) fn signal_name(signal: i32) -> Option<&'static str> {
    Some(match signal {
        1 => "SIGHUP",
        2 => "SIGINT",
        3 => "SIGQUIT",
        4 => "SIGILL",
        6 => "SIGABRT",
        7 => "SIGBUS",
        8 => "SIGFPE",
        9 => "SIGKILL",
        11 => "SIGSEGV",
        13 => "SIGPIPE",
        14 => "SIGALRM",
        15 => "SIGTERM",
        24 => "SIGXCPU",
        25 => "SIGXFSZ",
        _ => return None,
    })
}

/// `1.23s`, `12ms`, `2m03s`: short and unambiguous.
pub(crate) fn duration(d: Duration) -> String {
    let ms = d.as_millis();
    if ms < 1000 {
        format!("{ms}ms")
    } else if ms < 60_000 {
        format!("{:.2}s", d.as_secs_f64())
    } else {
        let s = d.as_secs();
        format!("{}m{:02}s", s / 60, s % 60)
    }
}

/// The status line: what happened and how long it took.
pub(crate) fn status_line(status: &Status, wall: Duration) -> String {
    let what = match status {
        Status::Exited { code } => format!("exit {code}"),
        Status::Signaled { signal } => match signal_name(*signal) {
            Some(name) => format!("killed by {name} (signal {signal})"),
            None => format!("killed by signal {signal}"),
        },
        Status::TimedOut { after } => format!(
            "timed out after {}: the command and everything it started were ended; \
             pass a longer timeout if it needs more time",
            duration(*after)
        ),
        Status::Cancelled => {
            "cancelled: the command and everything it started were ended".to_string()
        }
        Status::OutOfMemory { limit_bytes } => format!(
            "ended: it reached its memory limit ({}); the command and everything it started \
             were ended. Use less memory at once (fewer parallel jobs), or have a person raise \
             the limit (`--memory`, `[limits] memory`)",
            crate::config::human_bytes(*limit_bytes)
        ),
        Status::Running { handle } => format!(
            "still running: it is now handle {handle}; poll it with shell_poll (wait_ms waits \
             for output), end it with shell_kill"
        ),
        Status::Unavailable { reason, .. } => format!("unavailable: {reason}"),
        Status::TooLong {
            program,
            bytes,
            longest,
        } => format!(
            "not started: the argument list of `{program}` is too long for the kernel ({bytes} \
             bytes of arguments and environment, the longest argument {longest} bytes): pass the \
             data in a file or on stdin instead"
        ),
    };
    if matches!(status, Status::Unavailable { .. } | Status::TooLong { .. }) {
        what
    } else {
        format!("{what} · {}", duration(wall))
    }
}

/// The whole observation for a finished call.
pub(crate) fn observation(
    status: &Status,
    wall: Duration,
    stages: &[StageReport],
    [stdout, stderr]: [&StreamReport; 2],
    leftovers: usize,
    source: Source,
    pointer: &Pointer,
) -> String {
    let mut out = status_line(status, wall);
    out.push('\n');
    // A line still running as a handle has no stage's end to tell yet: its status line
    // says it runs, and which handle it is.
    if stages.len() > 1 && !matches!(status, Status::Running { .. }) {
        out.push_str(&stage_line(stages));
    }
    if leftovers > 0 {
        let _ = writeln!(
            out,
            "note: ended {leftovers} process{} the command left running; use shell_start for commands meant to keep running",
            if leftovers == 1 { "" } else { "es" }
        );
    }
    for (name, stream) in [(StreamName::Stdout, stdout), (StreamName::Stderr, stderr)] {
        let label = name.word();
        if stream.bytes == 0 {
            continue;
        }
        let _ = writeln!(out, "[{label}]");
        if let Some(error) = &stream.capture_error {
            let _ = writeln!(
                out,
                "[the capture stopped taking bytes: {error}; the rest was read and counted, not kept]"
            );
        }
        push_text(&mut out, &stream.window.head);
        if stream.window.is_elided() {
            // Lines are numbered in the capture as `output` reads it: the omitted ones
            // start after the head's.
            let first = stream.window.head.matches('\n').count() as u64 + 1;
            let last = first + stream.window.omitted_lines.saturating_sub(1);
            // Within one line (a line longer than the window) there are no lines to name:
            // the bytes are.
            let within_a_line = stream.window.omitted_lines == 0 && stream.window.head_bytes > 0;
            let read = if within_a_line {
                let start = stream.window.head_bytes;
                let end = start + stream.window.omitted_bytes - 1;
                pointer.call(source.stream(name), ("bytes", &format!("{start}-{end}")))
            } else {
                pointer.call(source.stream(name), ("lines", &format!("{first}-{last}")))
            };
            match &stream.window.failures {
                None if within_a_line => {
                    let _ = writeln!(
                        out,
                        "[… {} bytes of line {first} omitted; read them with {read} …]",
                        stream.window.omitted_bytes,
                    );
                }
                None => {
                    let _ = writeln!(
                        out,
                        "[… {} bytes, {} lines omitted; read them with {read} …]",
                        stream.window.omitted_bytes, stream.window.omitted_lines,
                    );
                }
                Some(failures) => push_failures(&mut out, &stream.window, failures, &read),
            }
            push_text(&mut out, &stream.window.tail);
        }
    }
    if stdout.bytes == 0 && stderr.bytes == 0 && !matches!(status, Status::Unavailable { .. }) {
        out.push_str("(no output)\n");
    }
    out
}

/// The marker of a window whose middle holds failure lines: the count, the lines, then
/// exactly what is still left out and how to read it.
///
/// ```text
/// [… 48211 bytes, 602 lines omitted; 3 of them look like failures:
/// 411-    def test_ledger():
/// 412:E       AssertionError: ledger imbalance
/// --
/// 590:FAILED tests/test_ledger.py::test_ledger - AssertionError
///  … 48090 bytes, 599 lines still omitted; read them with output {…"lines":"41-642"} …]
/// ```
fn push_failures(out: &mut String, window: &Window, failures: &FailureBlock, read: &str) {
    let count = if failures.exact {
        failures.matches.to_string()
    } else {
        format!("at least {}", failures.matches)
    };
    let shown = if failures.shown_matches < failures.matches {
        format!(", {} shown", failures.shown_matches)
    } else {
        String::new()
    };
    let look = if failures.matches == 1 && failures.exact {
        "1 of them looks like a failure".to_string()
    } else {
        format!("{count} of them look like failures")
    };
    let _ = writeln!(
        out,
        "[… {} bytes, {} lines omitted; {look}{shown}:",
        window.omitted_bytes, window.omitted_lines,
    );
    out.push_str(&failures.text());
    if failures.shows_dropped() {
        out.push_str(
            " (lines marked `dropped` were past the capture cap: shown here, not kept for reading back)\n",
        );
    }
    let _ = writeln!(
        out,
        " … {} bytes, {} lines still omitted; read them with {read} …]",
        window.omitted_bytes.saturating_sub(failures.shown_bytes),
        window.omitted_lines.saturating_sub(failures.shown_lines),
    );
}

/// `stages: grep x f → exit 1 | wc -l → exit 0`, `make → exit 2 ; make test → not run`:
/// what a shell would have hidden, joined as the line joined them.
fn stage_line(stages: &[StageReport]) -> String {
    let mut line = String::from("stages: ");
    for (i, s) in stages.iter().enumerate() {
        if i > 0 {
            let joint = if s.joint.is_empty() { "|" } else { s.joint };
            let _ = write!(line, " {joint} ");
        }
        line.push_str(&stage_part(s));
    }
    line.push('\n');
    line
}

/// One stage of the stages line: its argv, cut at 40 characters, and how it ended.
fn stage_part(s: &StageReport) -> String {
    let mut argv = corral_line::display_argv(&s.argv);
    if argv.chars().count() > 40 {
        argv = argv.chars().take(39).collect::<String>() + "…";
    }
    let how = match &s.status {
        None => "not run".to_string(),
        Some(Status::Exited { code }) => format!("exit {code}"),
        Some(Status::Signaled { signal }) => match signal_name(*signal) {
            Some(name) => name.to_string(),
            None => format!("signal {signal}"),
        },
        Some(Status::Unavailable { .. }) => "unavailable".to_string(),
        Some(Status::TooLong { .. }) => "too long".to_string(),
        Some(Status::TimedOut { .. }) => "timed out".to_string(),
        Some(Status::Cancelled) => "cancelled".to_string(),
        Some(Status::OutOfMemory { .. }) => "out of memory".to_string(),
        Some(Status::Running { .. }) => "running".to_string(),
    };
    format!("{argv} → {how}")
}

/// Append `text`, ending it with a newline so the next label starts a line.
fn push_text(out: &mut String, text: &str) {
    out.push_str(text);
    if !text.is_empty() && !text.ends_with('\n') {
        out.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_naturally() {
        assert_eq!(duration(Duration::from_millis(12)), "12ms");
        assert_eq!(duration(Duration::from_millis(1234)), "1.23s");
        assert_eq!(duration(Duration::from_secs(123)), "2m03s");
    }
}

#[cfg(test)]
mod failure_blocks;
