//! The signal that must end corral now: a second SIGINT, SIGTERM or SIGHUP, or a first one
//! the process did not answer in time.
//!
//! A command that runs things answers the first signal itself: `corral exec` ends its
//! call's unit and exits 128+N, `corral mcp` ends its calls and closes its run. If that
//! work is stuck (a store that does not answer, a kernel call that waits), the person's
//! Ctrl-C or a service manager's SIGTERM must still end corral and everything it started.
//! [`install`] arranges that:
//!
//! - where the command said it answers signals ([`answered_here`]), the first signal arms
//!   an alarm of [`GRACE`]; if the process is still there when it rings, or a second
//!   signal arrives first, the units are killed and corral exits `128+N` at once;
//! - where it did not (corral is still starting, or a command with nothing to end), the
//!   first signal does that at once.
//!
//! "The units" are what every containment unit of this process registered while it
//! lived: each process group a pipeline leads ([`hold_group`]) and each cgroup
//! ([`hold_cgroup`]), kept in fixed tables of atomics so that the handler reads them
//! without a lock or an allocation. Killing them is `kill(-pgid, SIGKILL)` and a write of
//! `1` to the group's `cgroup.kill`; corral's direct children (a PID namespace's init
//! among them) also die with it through their parent-death signal. Everything the handler
//! does is async-signal-safe: atomic loads, `kill(2)`, `openat(2)`, `write(2)`,
//! `close(2)`, `_exit(2)`.

use std::io;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

/// How long the first signal may go unanswered before corral ends itself.
pub const GRACE: std::time::Duration = std::time::Duration::from_secs(3);

/// How many process groups and cgroups can be registered at once; a unit past the
/// table's size is still ended by its own code and by the next corral's sweep.
const SLOTS: usize = 128;

#[allow(clippy::declare_interior_mutable_const)]
const EMPTY: AtomicI32 = AtomicI32::new(0);
/// Live process groups (their pgids), 0 for a free slot.
static GROUPS: [AtomicI32; SLOTS] = [EMPTY; SLOTS];
/// Live cgroups (a descriptor of each group's directory, plus one), 0 for a free slot.
static CGROUPS: [AtomicI32; SLOTS] = [EMPTY; SLOTS];
/// The first terminating signal received, 0 before one.
static FIRST: AtomicI32 = AtomicI32::new(0);
/// Whether the running command answers the first signal itself.
static ANSWERED: AtomicBool = AtomicBool::new(false);
static INSTALLED: AtomicBool = AtomicBool::new(false);

/// A registration in one of the tables, removed when dropped.
#[derive(Debug)]
pub struct Held {
    table: &'static [AtomicI32; SLOTS],
    slot: usize,
}

impl Drop for Held {
    fn drop(&mut self) {
        self.table[self.slot].store(0, Ordering::Release);
    }
}

fn hold(table: &'static [AtomicI32; SLOTS], value: i32) -> Option<Held> {
    (value > 0).then_some(())?;
    table.iter().enumerate().find_map(|(slot, cell)| {
        cell.compare_exchange(0, value, Ordering::AcqRel, Ordering::Relaxed)
            .ok()
            .map(|_| Held { table, slot })
    })
}

/// Register a process group a unit leads, for as long as the returned value lives.
pub fn hold_group(pgid: u32) -> Option<Held> {
    hold(&GROUPS, i32::try_from(pgid).ok()?)
}

/// Register a cgroup v2 group by a descriptor of its directory, which must stay open as
/// long as the returned value lives.
pub fn hold_cgroup(dir: RawFd) -> Option<Held> {
    hold(&CGROUPS, dir.checked_add(1)?)
}

/// Say whether the command now running answers the first signal itself (see the module
/// docs): `true` once its own handlers are in place.
pub fn answered_here(yes: bool) {
    ANSWERED.store(yes, Ordering::Release);
}

/// The first terminating signal received, if any.
pub fn received() -> Option<i32> {
    match FIRST.load(Ordering::Acquire) {
        0 => None,
        sig => Some(sig),
    }
}

/// Install the handlers for SIGINT, SIGTERM, SIGHUP and SIGALRM, once per process. They
/// run beside any handler registered through `signal-hook` (tokio's, the command line's),
/// whichever was installed first.
pub fn install() -> io::Result<()> {
    if INSTALLED.swap(true, Ordering::AcqRel) {
        return Ok(());
    }
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGALRM] {
        // A hangup ignored on entry (`nohup`) was asked for: it stays ignored here.
        if sig == libc::SIGHUP && crate::signals::ignored(sig) {
            continue;
        }
        // SAFETY: `on_signal` is async-signal-safe: it reads and writes atomics and makes
        // only the system calls named in the module docs.
        unsafe { signal_hook_registry::register_sigaction(sig, on_signal) }?;
    }
    Ok(())
}

/// The handler: see the module docs.
fn on_signal(info: &libc::siginfo_t) {
    let sig = info.si_signo;
    if sig == libc::SIGALRM {
        if let Some(first) = received() {
            end_now(first);
        }
        return;
    }
    let first = FIRST.compare_exchange(0, sig, Ordering::AcqRel, Ordering::Acquire);
    if first.is_ok() && ANSWERED.load(Ordering::Acquire) {
        let secs = u32::try_from(GRACE.as_secs()).unwrap_or(3);
        // SAFETY: alarm(2) is async-signal-safe and takes no pointer.
        unsafe { libc::alarm(secs) };
        return;
    }
    end_now(sig);
}

/// Kill every registered unit and exit `128 + sig`.
fn end_now(sig: i32) -> ! {
    for cell in &GROUPS {
        let pgid = cell.load(Ordering::Acquire);
        if pgid > 0 {
            // SAFETY: kill(2) with a negative pid signals that process group only.
            unsafe { libc::kill(-pgid, libc::SIGKILL) };
        }
    }
    for cell in &CGROUPS {
        let dir = cell.load(Ordering::Acquire) - 1;
        if dir >= 0 {
            // SAFETY: openat(2), write(2) and close(2) on a NUL-terminated static name,
            // a one-byte static buffer and the descriptor just opened.
            unsafe {
                let fd = libc::openat(
                    dir,
                    c"cgroup.kill".as_ptr(),
                    libc::O_WRONLY | libc::O_CLOEXEC,
                );
                if fd >= 0 {
                    libc::write(fd, b"1".as_ptr().cast(), 1);
                    libc::close(fd);
                }
            }
        }
    }
    // SAFETY: _exit(2) ends the process without running any of its code.
    unsafe { libc::_exit(128 + sig) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slot_is_taken_once_and_freed_on_drop() {
        let a = hold_group(4_000_001).unwrap();
        let b = hold_group(4_000_002).unwrap();
        assert_ne!(a.slot, b.slot);
        let slot = a.slot;
        drop(a);
        assert_eq!(GROUPS[slot].load(Ordering::Acquire), 0);
        assert!(hold_group(0).is_none(), "0 would signal corral's own group");
    }
}
