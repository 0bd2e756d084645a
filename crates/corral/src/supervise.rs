//! Watching started processes until they are over: one thread, one `poll`.
//!
//! A [`Watch`] owns the read ends of a call's output pipes for the whole call. It waits on
//! them and on a pidfd per process at once, so both streams are drained as they fill (no
//! deadlock when a command fills both pipes) and an exit is seen the moment it happens.
//! Deadlines drive everything else:
//!
//! 1. **Timeout.** When the call's deadline passes while a process still runs, the whole
//!    unit gets SIGTERM; after the kill grace, SIGKILL.
//! 2. **Cancel.** A triggered [`Cancel`] ends the unit the same way.
//! 3. **Drain.** When the last process has exited, output still buffered in the pipes is
//!    read to its end. If something the command left behind holds a pipe open, reading
//!    goes on for the drain grace only; then the unit is ended, and if a pipe is still held
//!    by a process that escaped the unit, corral stops reading it rather than hang.
//! 4. **Leftovers.** A command must not outlive its call: whatever is still in the unit
//!    once the processes corral started have exited is ended (SIGTERM, grace, SIGKILL) and
//!    counted, so the result can say so.

use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::process::ExitStatus;
use std::time::{Duration, Instant};

use corral_sys::Signal;
use rustix::event::{PollFd, PollFlags, Timespec, poll};

use crate::cancel::Cancel;
use crate::capture::Sink;
use crate::spawn::{Containment, Proc};

/// The bounds a watch runs under.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    pub deadline: Option<Instant>,
    pub kill_grace: Duration,
    pub drain_grace: Duration,
}

const READ_CHUNK: usize = 256 * 1024;

/// After SIGKILL, how long to go on reading pipes that a process outside the unit holds.
const GIVE_UP_READING: Duration = Duration::from_millis(100);

/// How far corral has gone in ending the unit.
#[derive(Debug, Clone, Copy)]
enum Ending {
    Not,
    Terminating { kill_at: Instant },
    Killed { stop_reading_at: Instant },
}

/// The watch over one call's processes and output.
pub(crate) struct Watch<'a> {
    pipes: Vec<Option<(OwnedFd, usize)>>,
    sinks: &'a mut [Sink],
    buf: Vec<u8>,
    limits: Limits,
    cancel: Option<&'a Cancel>,
    ending: Ending,
    /// The deadline passed while a process ran.
    pub timed_out: bool,
    /// The cancel token fired while a process ran.
    pub cancelled: bool,
    /// It fired urgently ([`Cancel::cancel_now`]) and the unit was killed for it.
    ended_urgently: bool,
    /// The last poll found the token's pipe readable.
    cancel_woke: bool,
    leftovers: usize,
}

impl std::fmt::Debug for Watch<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watch")
            .field("timed_out", &self.timed_out)
            .field("cancelled", &self.cancelled)
            .finish()
    }
}

impl<'a> Watch<'a> {
    /// Watch `pipes` (each `(read end, index of the sink it feeds)`).
    pub(crate) fn new(
        pipes: Vec<(OwnedFd, usize)>,
        sinks: &'a mut [Sink],
        limits: Limits,
        cancel: Option<&'a Cancel>,
    ) -> Self {
        Self {
            pipes: pipes.into_iter().map(Some).collect(),
            sinks,
            buf: vec![0u8; READ_CHUNK],
            limits,
            cancel,
            ending: Ending::Not,
            timed_out: false,
            cancelled: false,
            ended_urgently: false,
            cancel_woke: false,
            leftovers: 0,
        }
    }

    /// Whether the call is being ended (timeout or cancel): start nothing more.
    pub(crate) fn is_ending(&self) -> bool {
        self.timed_out || self.cancelled
    }

    /// Wait until every process in `children` has exited, reading output meanwhile and
    /// ending `unit` if the deadline passes or the call is cancelled.
    pub(crate) fn wait(
        &mut self,
        children: &mut [Proc],
        unit: &dyn Containment,
    ) -> io::Result<Vec<ExitStatus>> {
        let pidfds = children
            .iter()
            .map(Proc::pidfd)
            .collect::<io::Result<Vec<_>>>()?;
        let mut statuses: Vec<Option<ExitStatus>> = vec![None; children.len()];
        while statuses.iter().any(Option::is_none) {
            let now = Instant::now();
            self.check_cancel(unit, now)?;
            let wake = match self.ending {
                Ending::Not => self.limits.deadline,
                Ending::Terminating { kill_at } => Some(kill_at),
                Ending::Killed { .. } => None,
            };
            if wake.is_some_and(|w| now >= w) {
                self.escalate(unit, now, true)?;
                if matches!(self.ending, Ending::Killed { .. }) {
                    // A direct child that left the unit (a root command can move itself out
                    // of its cgroup) is still ours to end: unreaped, its pid cannot have
                    // been reused.
                    for (child, status) in children.iter_mut().zip(&statuses) {
                        if status.is_none() {
                            let _ = child.kill();
                        }
                    }
                }
                continue;
            }
            let waiting: Vec<usize> = (0..children.len())
                .filter(|i| statuses[*i].is_none())
                .collect();
            let ready = self.poll(waiting.iter().map(|i| &pidfds[*i]), wake, now)?;
            for (n, i) in waiting.into_iter().enumerate() {
                if ready.get(n).copied().unwrap_or(false) {
                    statuses[i] = children[i].try_wait()?;
                }
            }
        }
        Ok(statuses
            .into_iter()
            .map(|s| s.expect("every child was reaped"))
            .collect())
    }

    /// After the last process exited (and the caller dropped its own write ends): read
    /// the pipes to their end within the drain grace, then end whatever is left in `unit`.
    /// Returns how many leftover processes were ended.
    pub(crate) fn finish(mut self, unit: &dyn Containment) -> io::Result<usize> {
        let drain_until = Instant::now() + self.limits.drain_grace;
        while self.pipes.iter().any(Option::is_some) {
            let now = Instant::now();
            // A cancel during the drain ends what is left at once (and its descriptor,
            // never read, must not keep waking the poll).
            self.check_cancel(unit, now)?;
            let wake = match self.ending {
                Ending::Not => drain_until,
                Ending::Terminating { kill_at } => kill_at,
                Ending::Killed { stop_reading_at } => stop_reading_at,
            };
            if now >= wake {
                self.escalate(unit, now, false)?;
                continue;
            }
            self.poll(std::iter::empty(), Some(wake), now)?;
        }
        if !unit.is_empty() {
            self.leftovers = self
                .leftovers
                .max(end_leftovers(unit, self.limits.kill_grace)?);
        }
        Ok(self.leftovers)
    }

    fn check_cancel(&mut self, unit: &dyn Containment, now: Instant) -> io::Result<()> {
        let Some(cancel) = self.cancel else {
            return Ok(());
        };
        if std::mem::take(&mut self.cancel_woke) && !cancel.is_cancelled() {
            // Woken, and not for an end: for a signal (`shell_signal`). Send what was asked
            // and go on. What is asked after the drain wakes the next poll.
            cancel.drain();
            for signal in cancel.take_signals() {
                unit.signal(signal)?;
            }
        }
        if !self.cancelled && cancel.is_cancelled() {
            self.cancelled = true;
            // Polled again only for an urgent end that comes later.
            cancel.drain();
            if matches!(self.ending, Ending::Not) && !cancel.is_urgent() {
                unit.signal(Signal::TERM)?;
                self.ending = Ending::Terminating {
                    kill_at: now + self.limits.kill_grace,
                };
            }
        }
        if self.cancelled && !self.ended_urgently && cancel.is_urgent() {
            self.ended_urgently = true;
            cancel.drain();
            if !matches!(self.ending, Ending::Killed { .. }) {
                unit.signal(Signal::KILL)?;
                self.ending = Ending::Killed {
                    stop_reading_at: now + GIVE_UP_READING,
                };
            }
        }
        Ok(())
    }

    /// A deadline passed: take the next step in ending the unit.
    fn escalate(&mut self, unit: &dyn Containment, now: Instant, running: bool) -> io::Result<()> {
        match self.ending {
            Ending::Not => {
                if running {
                    self.timed_out = true;
                } else {
                    // Something left behind holds a pipe open past the drain grace.
                    self.leftovers = self.leftovers.max(unit.members().len());
                }
                unit.signal(Signal::TERM)?;
                self.ending = Ending::Terminating {
                    kill_at: now + self.limits.kill_grace,
                };
            }
            Ending::Terminating { .. } => {
                unit.signal(Signal::KILL)?;
                self.ending = Ending::Killed {
                    stop_reading_at: now + GIVE_UP_READING,
                };
            }
            Ending::Killed { .. } => {
                // Only a process outside the unit can still hold the pipe: stop reading.
                self.pipes.iter_mut().for_each(|p| *p = None);
            }
        }
        Ok(())
    }

    /// One `poll` over the open pipes, `extra` descriptors and the cancel token; reads what
    /// is ready. Returns which of `extra` were ready.
    fn poll<'f>(
        &mut self,
        extra: impl Iterator<Item = &'f OwnedFd>,
        wake: Option<Instant>,
        now: Instant,
    ) -> io::Result<Vec<bool>> {
        let mut fds: Vec<PollFd<'_>> = Vec::with_capacity(4);
        for (fd, _) in self.pipes.iter().flatten() {
            fds.push(PollFd::new(fd, PollFlags::IN));
        }
        let open_pipes = fds.len();
        for fd in extra {
            fds.push(PollFd::new(fd, PollFlags::IN));
        }
        let extra_count = fds.len() - open_pipes;
        if let Some(c) = self.cancel.filter(|_| !self.ended_urgently) {
            fds.push(PollFd::from_borrowed_fd(c.fd(), PollFlags::IN));
        }
        let timeout = wake.map(|w| timespec(w.saturating_duration_since(now)));
        match poll(&mut fds, timeout.as_ref()) {
            Ok(_) => {}
            Err(rustix::io::Errno::INTR) => return Ok(vec![false; extra_count]),
            Err(e) => return Err(e.into()),
        }
        let ready: Vec<bool> = fds.iter().map(|f| !f.revents().is_empty()).collect();
        drop(fds);
        if ready.len() > open_pipes + extra_count {
            self.cancel_woke |= ready[open_pipes + extra_count];
        }

        let mut ready_pipes = ready[..open_pipes].iter();
        for slot in self.pipes.iter_mut().filter(|p| p.is_some()) {
            if !ready_pipes.next().copied().unwrap_or(false) {
                continue;
            }
            let (fd, sink) = slot.as_ref().expect("only open pipes are polled");
            match self.sinks[*sink].read_from(fd.as_fd(), &mut self.buf[..]) {
                Ok(0) => *slot = None,
                Ok(_) => {}
                Err(rustix::io::Errno::INTR | rustix::io::Errno::AGAIN) => {}
                Err(_) => *slot = None,
            }
        }
        Ok(ready[open_pipes..open_pipes + extra_count].to_vec())
    }
}

/// End whatever is left in `unit` after its command exited: SIGTERM, up to `grace` for it
/// to go, then SIGKILL. Returns how many processes there were.
fn end_leftovers(unit: &dyn Containment, grace: Duration) -> io::Result<usize> {
    let count = unit.members().len();
    if count == 0 {
        return Ok(0);
    }
    unit.signal(Signal::TERM)?;
    let give_up = Instant::now() + grace;
    while Instant::now() < give_up {
        std::thread::sleep(Duration::from_millis(10));
        if unit.members().is_empty() {
            return Ok(count);
        }
    }
    unit.signal(Signal::KILL)?;
    Ok(count)
}

fn timespec(d: Duration) -> Timespec {
    Timespec {
        tv_sec: d.as_secs() as _,
        tv_nsec: d.subsec_nanos() as _,
    }
}
