//! One live handle: its processes watched by a thread of their own, its output in a
//! capture file, a cursor for polls, and a condition variable that wakes a waiting poll
//! when output or the exit arrives.
//!
//! The killer is kept apart from the waiter: `shell_kill` triggers the handle's cancel
//! token, and the watching thread, which is the only one that waits on the processes,
//! ends the unit (SIGTERM, grace, SIGKILL) and records how it ended.

use std::fs::File;
use std::io::{self, Write};
use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::input::Input;
use super::screen::Term;
use crate::cancel::Cancel;
use crate::capture::Layout;
use crate::handle::request::HandleState;

/// What changes while a handle lives.
#[derive(Debug)]
pub(crate) struct Progress {
    pub state: HandleState,
    /// Where the capture's bytes are (every byte printed so far, and the cap).
    pub layout: Layout,
    /// The logical offset the next poll starts at.
    pub cursor: u64,
    /// Set by a kill or the end of the run, before the cancel fires: how to report the end.
    pub ending: Option<HandleState>,
    /// Once it ended: the directory a `cd` entered, when that `cd` was the last thing the
    /// line ran (what a `yield_ms` call that ended in time keeps, as a foreground one does).
    pub ended_in: Option<PathBuf>,
    /// Once it ended: how each stage of its line ended (what a `yield_ms` call that ended
    /// in time reports, as a foreground one does).
    pub stages: Option<Vec<crate::outcome::StageReport>>,
}

/// A background handle of this run.
#[derive(Debug)]
pub(crate) struct Live {
    pub id: u32,
    pub line: String,
    pub capture: PathBuf,
    pub cancel: Cancel,
    progress: Mutex<Progress>,
    changed: Condvar,
    pub(crate) thread: Mutex<Option<JoinHandle<()>>>,
    /// A writable input (`tty` or `stdin` handles), and the terminal's screen.
    pub(crate) input: Option<Input>,
    /// What it changes in the workspace, recorded as its step's files (none for a line
    /// known not to write, or a run that records nothing).
    pub(crate) files: Option<crate::undo::HandleFiles>,
    /// What of its unit may still run after the unit's drop, left there by its watcher
    /// (see `background::watch`: the last sweep waits for it).
    pub(crate) remains: Arc<crate::spawn::RemainsSlot>,
}

impl Live {
    /// Whether it runs on a terminal (corral's emulated one or a person's).
    pub(crate) fn is_terminal(&self) -> bool {
        self.input.as_ref().is_some_and(|i| i.term.is_some())
    }

    pub(crate) fn new(
        id: u32,
        line: String,
        capture: PathBuf,
        cap: u64,
        input: Option<Input>,
        files: Option<crate::undo::HandleFiles>,
    ) -> io::Result<Self> {
        Ok(Self {
            id,
            line,
            capture,
            cancel: Cancel::new()?,
            progress: Mutex::new(Progress {
                state: HandleState::Running,
                layout: Layout { total: 0, cap },
                cursor: 0,
                ending: None,
                ended_in: None,
                stages: None,
            }),
            changed: Condvar::new(),
            thread: Mutex::new(None),
            input,
            files,
            remains: Arc::default(),
        })
    }

    pub(crate) fn progress(&self) -> MutexGuard<'_, Progress> {
        self.progress.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Wait until there is output past the cursor, the handle ended, or `wait` passed.
    pub(crate) fn wait_for_news(&self, wait: Duration) -> MutexGuard<'_, Progress> {
        let until = Instant::now() + wait;
        let mut progress = self.progress();
        while progress.state == HandleState::Running && progress.layout.total <= progress.cursor {
            let now = Instant::now();
            if now >= until {
                break;
            }
            progress = self
                .changed
                .wait_timeout(progress, until - now)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        progress
    }

    /// Wait until the handle has ended, or `wait` passed.
    pub(crate) fn wait_for_end(&self, wait: Duration) {
        let until = Instant::now() + wait;
        let mut progress = self.progress();
        while progress.state == HandleState::Running {
            let now = Instant::now();
            if now >= until {
                return;
            }
            progress = self
                .changed
                .wait_timeout(progress, until - now)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    /// After input was written while `since` bytes had been printed: wait until the
    /// handle ended, `until` passed, or what it printed since has gone `quiet`.
    pub(crate) fn settle(&self, since: u64, until: Instant, quiet: Duration) {
        let mut progress = self.progress();
        let mut seen = progress.layout.total;
        let mut last = Instant::now();
        while progress.state == HandleState::Running {
            let now = Instant::now();
            if progress.layout.total != seen {
                seen = progress.layout.total;
                last = now;
            }
            let mut wake = until;
            if seen > since {
                wake = wake.min(last + quiet);
            }
            if now >= wake {
                break;
            }
            progress = self
                .changed
                .wait_timeout(progress, wake - now)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    /// The watching thread reports bytes written or the end.
    pub(crate) fn update(&self, f: impl FnOnce(&mut Progress)) {
        f(&mut self.progress());
        self.changed.notify_all();
    }

    /// Wait for the watching thread to finish (after a kill or at the end of the run).
    pub(crate) fn join(&self) {
        let thread = self.thread.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(thread) = thread {
            let _ = thread.join();
        }
    }

    /// Read the held bytes of `[from, to)` from the capture.
    pub(crate) fn read(&self, layout: Layout, from: u64, to: u64) -> io::Result<Vec<u8>> {
        if from >= to {
            return Ok(Vec::new());
        }
        layout.read(&File::open(&self.capture)?, from, to)
    }
}

/// The capture's tee: counts what the sink wrote and wakes waiting polls.
pub(crate) struct Notify(pub Arc<Live>);

impl Notify {
    /// Write a terminal's answers to the program's input (see `super::queries`).
    pub(crate) fn answer(&self, bytes: &[u8]) {
        if let Some(input) = &self.0.input {
            input.answer(bytes);
        }
    }
}

impl Write for Notify {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.update(|p| p.layout.total += buf.len() as u64);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// The capture's tee for a terminal handle: the screen first (and the terminal's answers
/// to what the program asked, written back to its input), then the waiting polls.
pub(crate) struct ScreenTee {
    pub term: Arc<Term>,
    pub notify: Notify,
}

impl Write for ScreenTee {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let answers = self.term.feed(buf);
        if !answers.is_empty() {
            self.notify.answer(&answers);
        }
        self.notify.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
