//! The contract's wall time, held while a tool call or the gate runs.
//!
//! The limits are checked between turns; a call in flight would otherwise run on to its
//! own timeout (15 minutes by default) past a `--wall-time 3s`. So while a task with a
//! wall time is driven, its calls get a token that fires at the deadline, or as soon as
//! the caller's own interrupt fires: the call ends (its step `cancelled`), and the loop
//! then ends the run with the wall-time limit.

use std::time::{Duration, Instant};

use rustix::event::{PollFd, PollFlags, Timespec, poll};

use crate::Cancel;

/// Run `body` with the token its calls should end on: `interrupt` itself where there is
/// no wall time, else one that fires at `started + limit` or when `interrupt` fires.
pub(super) fn held<R>(
    limit: Option<Duration>,
    started: Instant,
    interrupt: Option<&Cancel>,
    body: impl FnOnce(Option<&Cancel>) -> R,
) -> R {
    let Some(limit) = limit else {
        return body(interrupt);
    };
    let (Ok(stop), Ok(over)) = (Cancel::new(), Cancel::new()) else {
        // No pipe for a token: the limit is still checked between turns.
        return body(interrupt);
    };
    let deadline = started + limit;
    std::thread::scope(|scope| {
        scope.spawn(|| watch(deadline, interrupt, &stop, &over));
        let result = body(Some(&stop));
        over.cancel();
        result
    })
}

/// Fire `stop` at `deadline` or when `interrupt` fires; return early once `over` fires.
fn watch(deadline: Instant, interrupt: Option<&Cancel>, stop: &Cancel, over: &Cancel) {
    loop {
        if over.is_cancelled() {
            return;
        }
        if interrupt.is_some_and(Cancel::is_cancelled) {
            stop.cancel();
            return;
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            stop.cancel();
            return;
        }
        let timeout = Timespec {
            tv_sec: left.as_secs() as _,
            tv_nsec: left.subsec_nanos() as _,
        };
        let over_fd = over.fd();
        let interrupt_fd = interrupt.map(Cancel::fd);
        let mut fds = vec![PollFd::new(&over_fd, PollFlags::IN)];
        if let Some(fd) = &interrupt_fd {
            fds.push(PollFd::new(fd, PollFlags::IN));
        }
        // An error (EINTR) only sends the loop round again.
        let _ = poll(&mut fds, Some(&timeout));
    }
}
