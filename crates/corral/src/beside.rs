//! Threads that work beside the thread that starts them, on another core.
//!
//! A thread is started to overlap work with its creator's: the housekeeping beside a run's
//! opening, the PID namespaces' maker beside a call's first steps. The kernel does not
//! always give it the idle core to do that on: a new task is placed where its creator
//! runs when the balancer sees no reason to move it (as on a lightly loaded virtual
//! machine of two cores), and then either the new thread runs first and the creator
//! waits for it to block, or the new thread waits for the creator to. Measured on such a
//! machine, a thread started beside a busy creator ran on the creator's core in nine
//! starts of ten, and the work meant to overlap added up instead.
//!
//! So a thread started here moves itself to the other cores the process may use as its
//! first act, then lets itself be placed anywhere again, and its creator yields once right
//! after starting it, so that a thread placed on the creator's core gets to make that move
//! at once rather than when the creator next blocks: one migration, and the two threads run
//! side by side from then on. (A command-line call took 1.04× as long without the yield,
//! and 1.09× without the move.) Where the process may use one core only, or the affinity
//! cannot be read or set (a seccomp filter, an old kernel), the thread stays where it was
//! placed, which is only slower.

use std::io;
use std::thread::JoinHandle;

use rustix::thread::{CpuSet, sched_getaffinity, sched_getcpu, sched_setaffinity};

/// Start `work` on a thread named `name` that moves off the calling thread's core first.
pub(crate) fn spawn<T, F>(name: &str, work: F) -> io::Result<JoinHandle<T>>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    spawn_off(sched_getcpu(), name, work)
}

/// [`spawn`], moving off core `home`.
fn spawn_off<T, F>(home: usize, name: &str, work: F) -> io::Result<JoinHandle<T>>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    let thread = std::thread::Builder::new()
        .name(name.into())
        .spawn(move || {
            move_off(home);
            work()
        })?;
    // A thread placed on this core runs now, and moves; one placed elsewhere costs this
    // a system call.
    std::thread::yield_now();
    Ok(thread)
}

/// Move the calling thread off core `home` if the process may run elsewhere, and leave
/// it free to be placed on any of its cores afterwards.
fn move_off(home: usize) {
    let Ok(allowed) = sched_getaffinity(None) else {
        return;
    };
    let mut elsewhere: CpuSet = allowed;
    elsewhere.unset(home);
    if elsewhere.count() == 0 {
        return;
    }
    // Setting the narrower set moves the thread now; the wider one only allows it back.
    if sched_setaffinity(None, &elsewhere).is_ok() {
        let _ = sched_setaffinity(None, &allowed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_thread_beside_starts_off_its_creators_core_and_keeps_every_core() {
        let allowed = sched_getaffinity(None).expect("reading this thread's affinity");
        // The creator's core, as `spawn` would read it; named here so the creator moving
        // meanwhile cannot change what is checked.
        let home = sched_getcpu();
        let (cpu, mask) = spawn_off(home, "beside-test", || {
            (sched_getcpu(), sched_getaffinity(None).expect("affinity"))
        })
        .expect("starting the thread")
        .join()
        .expect("the thread ran");
        if allowed.count() > 1 {
            assert_ne!(cpu, home, "the thread started on its creator's core");
        }
        assert_eq!(mask, allowed, "the thread was left bound to fewer cores");
    }

    #[test]
    fn a_thread_beside_returns_its_work() {
        let handle = spawn("beside-test", || 6 * 7).expect("starting the thread");
        assert_eq!(handle.join().expect("the thread ran"), 42);
    }
}
