//! A handle's writable input: the terminal's master or the stdin pipe's write end.

use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use super::screen::Term;

/// A handle's writable input, and its emulated terminal if it has one.
#[derive(Debug)]
pub(crate) struct Input {
    /// The terminal's master, or the stdin pipe's write end; `None` once closed.
    pub(crate) writer: Mutex<Option<OwnedFd>>,
    pub(crate) term: Option<Arc<Term>>,
    /// The terminal's own way in, for its answers to the program's queries: a second
    /// descriptor of the master, so an answer never waits for a `shell_write` that holds
    /// `writer` while the program is busy (answers and keystrokes interleave, as they do
    /// on a real terminal).
    pub(crate) answers: Mutex<Option<OwnedFd>>,
    /// For a shell that reads its commands from this stdin pipe: what a model writes is
    /// checked as `shell` lines before the shell sees it.
    pub(crate) lines: Option<LineCheck>,
}

/// The commands a model writes to a shell's stdin pipe, checked as `shell` calls are
/// before they are passed on, a complete command at a time. Best-effort: what the shell
/// itself makes of its input (a `read` taking the next line as data, history, `source`
/// of a file written earlier) is not seen.
#[derive(Debug)]
pub(crate) struct LineCheck {
    /// Where the shell started; each command is planned from there.
    pub(crate) cwd: PathBuf,
    /// What was written but not yet passed on: a line without its newline, or lines
    /// that do not yet make a whole command (`for f in *; do`).
    pub(crate) held: Mutex<Vec<u8>>,
}

impl LineCheck {
    pub(crate) fn new(cwd: PathBuf) -> Self {
        Self {
            cwd,
            held: Mutex::default(),
        }
    }
}

impl Input {
    pub(crate) fn writer(&self) -> std::sync::MutexGuard<'_, Option<OwnedFd>> {
        self.writer.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Close the input (the program's end of file, or the terminal's master).
    pub(crate) fn close(&self) {
        self.writer().take();
        self.answers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
    }

    /// Write what the terminal answers the program, as a terminal would: a few bytes,
    /// dropped if the program is not reading its input at all (the master is
    /// non-blocking) or the session is over. Runs on the thread that drains the program's
    /// output, so it never waits.
    pub(crate) fn answer(&self, bytes: &[u8]) {
        // Held only for non-blocking writes of a few bytes.
        let answers = self.answers.lock().unwrap_or_else(|e| e.into_inner());
        let Some(fd) = answers.as_ref() else {
            return;
        };
        let mut rest = bytes;
        while !rest.is_empty() {
            match rustix::io::write(fd, rest) {
                Ok(n) => rest = &rest[n..],
                Err(rustix::io::Errno::INTR) => {}
                Err(_) => break,
            }
        }
    }
}
