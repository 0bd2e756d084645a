//! Watching a started command until it is over: one thread, one `poll`.
//!
//! The loop waits on the output pipes and on a pidfd per process at once, so both streams
//! are drained as they fill (no deadlock when a command fills both pipes) and an exit is
//! seen the moment it happens. Deadlines drive everything else:
//!
//! 1. **Timeout.** When the deadline passes while a process still runs, the whole unit gets
//!    SIGTERM; after the kill grace, SIGKILL.
//! 2. **Drain.** When every process has exited, output still buffered in the pipes is read
//!    to its end. If something the command left behind holds a pipe open, reading goes on
//!    for the drain grace only; then the unit is ended the same way, and if a pipe is still
//!    held by a process that escaped the unit, corral stops reading it rather than hang.
//! 3. **Cancel.** A triggered [`Cancel`] ends the unit the same way as a timeout.
//! 4. **Leftovers.** A command must not outlive its call: whatever is still in the unit
//!    once the processes corral started have exited is ended (SIGTERM, grace, SIGKILL) and
//!    counted, so the result can say so.

use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::process::{Child, ExitStatus};
use std::time::{Duration, Instant};

use corral_sys::Signal;
use rustix::event::{PollFd, PollFlags, Timespec, poll};

use crate::cancel::Cancel;
use crate::capture::Sink;
use crate::spawn::Containment;

/// The bounds a watch runs under.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    pub deadline: Option<Instant>,
    pub kill_grace: Duration,
    pub drain_grace: Duration,
}

/// A started command: its processes and the read ends of its output pipes.
#[derive(Debug)]
pub(crate) struct Started {
    pub children: Vec<Child>,
    /// `(pipe, index of the sink it feeds)`.
    pub pipes: Vec<(OwnedFd, usize)>,
}

/// How a watched command ended.
#[derive(Debug)]
pub(crate) struct Ended {
    /// One per child, in spawn order.
    pub statuses: Vec<ExitStatus>,
    pub timed_out: bool,
    /// The call was cancelled while the command ran, and corral ended it.
    pub cancelled: bool,
    /// Processes still in the unit after the command's own processes exited, which corral
    /// then ended.
    pub leftovers: usize,
}

const READ_CHUNK: usize = 256 * 1024;

/// After SIGKILL, how long to go on reading pipes that a process outside the unit holds.
const GIVE_UP_READING: Duration = Duration::from_millis(100);

enum Phase {
    Running,
    Terminating { kill_at: Instant },
    Killed { stop_reading_at: Instant },
}

/// Watch `started` to its end, feeding `sinks`, within `limits`.
pub(crate) fn watch(
    mut started: Started,
    unit: &dyn Containment,
    sinks: &mut [Sink],
    limits: Limits,
    cancel: Option<&Cancel>,
) -> io::Result<Ended> {
    let pidfds = started
        .children
        .iter()
        .map(|c| corral_sys::pidfd::open(c.id()))
        .collect::<io::Result<Vec<_>>>()?;
    let mut statuses: Vec<Option<ExitStatus>> = vec![None; started.children.len()];
    let mut pipes: Vec<Option<(OwnedFd, usize)>> = started.pipes.drain(..).map(Some).collect();
    let mut buf = vec![0u8; READ_CHUNK];
    let mut phase = Phase::Running;
    let mut timed_out = false;
    let mut cancelled = false;
    let mut drain_until: Option<Instant> = None;
    let mut leftovers = 0;

    loop {
        let all_exited = statuses.iter().all(Option::is_some);
        let reading = pipes.iter().any(Option::is_some);
        if all_exited && !reading {
            break;
        }
        let now = Instant::now();
        if !cancelled && !all_exited && cancel.is_some_and(Cancel::is_cancelled) {
            cancelled = true;
            unit.signal(Signal::TERM)?;
            phase = Phase::Terminating {
                kill_at: now + limits.kill_grace,
            };
        }
        if all_exited && drain_until.is_none() {
            drain_until = Some(now + limits.drain_grace);
        }
        let wake = match phase {
            Phase::Running => earliest(limits.deadline, drain_until),
            Phase::Terminating { kill_at } => Some(kill_at),
            Phase::Killed { stop_reading_at } => all_exited.then_some(stop_reading_at),
        };
        if wake.is_some_and(|w| now >= w) {
            match phase {
                Phase::Running => {
                    if all_exited {
                        // Something left behind holds a pipe open past the drain grace.
                        leftovers = leftovers.max(unit.members().len());
                    } else {
                        timed_out = true;
                    }
                    unit.signal(Signal::TERM)?;
                    phase = Phase::Terminating {
                        kill_at: now + limits.kill_grace,
                    };
                }
                Phase::Terminating { .. } => {
                    unit.signal(Signal::KILL)?;
                    phase = Phase::Killed {
                        stop_reading_at: now + GIVE_UP_READING,
                    };
                }
                Phase::Killed { .. } => {
                    // Only a process outside the unit can still hold the pipe: stop reading.
                    pipes.iter_mut().for_each(|p| *p = None);
                }
            }
            continue;
        }

        let mut fds: Vec<PollFd<'_>> = Vec::with_capacity(pipes.len() + pidfds.len() + 1);
        for (fd, _) in pipes.iter().flatten() {
            fds.push(PollFd::new(fd, PollFlags::IN));
        }
        for (fd, status) in pidfds.iter().zip(&statuses) {
            if status.is_none() {
                fds.push(PollFd::new(fd, PollFlags::IN));
            }
        }
        // The cancel token wakes the poll; the check at the top of the loop acts on it.
        if let Some(c) = cancel.filter(|_| !cancelled) {
            fds.push(PollFd::from_borrowed_fd(c.fd(), PollFlags::IN));
        }
        let timeout = wake.map(|w| timespec(w.saturating_duration_since(now)));
        match poll(&mut fds, timeout.as_ref()) {
            Ok(_) => {}
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return Err(e.into()),
        }
        let ready: Vec<bool> = fds.iter().map(|f| !f.revents().is_empty()).collect();
        drop(fds);

        let mut ready = ready.into_iter();
        for slot in pipes.iter_mut().filter(|p| p.is_some()) {
            if !ready.next().unwrap_or(false) {
                continue;
            }
            let (fd, sink) = slot.as_ref().expect("only open pipes are polled");
            match rustix::io::read(fd.as_fd(), &mut buf[..]) {
                Ok(0) => *slot = None,
                Ok(n) => sinks[*sink].write(&buf[..n])?,
                Err(rustix::io::Errno::INTR | rustix::io::Errno::AGAIN) => {}
                Err(_) => *slot = None,
            }
        }
        for (child, status) in started.children.iter_mut().zip(statuses.iter_mut()) {
            if status.is_none() && ready.next().unwrap_or(false) {
                *status = child.try_wait()?;
            }
        }
    }

    if !unit.is_empty() {
        leftovers = leftovers.max(end_leftovers(unit, limits.kill_grace)?);
    }
    Ok(Ended {
        statuses: statuses
            .into_iter()
            .map(|s| s.expect("every child was reaped"))
            .collect(),
        timed_out,
        cancelled,
        leftovers,
    })
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

fn earliest(a: Option<Instant>, b: Option<Instant>) -> Option<Instant> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

fn timespec(d: Duration) -> Timespec {
    Timespec {
        tv_sec: d.as_secs() as _,
        tv_nsec: d.subsec_nanos() as _,
    }
}
