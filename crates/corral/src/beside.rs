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
//! So the creator of a thread started here moves it to the other cores the process may
//! use right after starting it, before it has run, then lets it be placed anywhere again:
//! the thread waits for a core elsewhere, and the two run side by side from then on.
//! (A command-line call took 1.09× as long without the move.) A thread that has not run
//! yet moves without the kernel's stopper thread and without a turn on the creator's
//! core: an earlier version, where the thread moved itself and its creator yielded to let
//! it, cost the creator 100 µs of each start. Where the process may use one core only, or
//! the affinity cannot be read or set (a seccomp filter, an old kernel), the thread stays
//! where it was placed, which is only slower.

use std::io;
use std::thread::JoinHandle;

use rustix::thread::{CpuSet, sched_getaffinity, sched_getcpu};

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
    let thread = std::thread::Builder::new().name(name.into()).spawn(work)?;
    move_off(&thread, home);
    Ok(thread)
}

/// Move `thread` off core `home` if the process may run elsewhere, and leave it free to
/// be placed on any of its cores afterwards.
fn move_off<T>(thread: &JoinHandle<T>, home: usize) {
    let Ok(allowed) = sched_getaffinity(None) else {
        return;
    };
    let cores = |set: &CpuSet| -> Vec<usize> {
        (0..CpuSet::MAX_CPU)
            .filter(|&cpu| set.is_set(cpu))
            .collect()
    };
    let mut elsewhere: CpuSet = allowed;
    elsewhere.unset(home);
    if elsewhere.count() == 0 {
        return;
    }
    // Setting the narrower set moves the thread now; the wider one only allows it back.
    if corral_sys::threads::set_affinity(thread, &cores(&elsewhere)).is_ok() {
        let _ = corral_sys::threads::set_affinity(thread, &cores(&allowed));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_thread_beside_starts_off_its_creators_core_and_keeps_every_core() {
        let allowed = sched_getaffinity(None).expect("reading this thread's affinity");
        // The move is a best effort: the new thread can run before its creator moves it,
        // and on a loaded 2-core machine (the other tests of this binary run beside it)
        // that is common. It must take at least once in a hundred tries.
        let mut off = false;
        for _ in 0..100 {
            // The creator's core, as `spawn` would read it.
            let home = sched_getcpu();
            let (started, wait) = std::sync::mpsc::channel::<()>();
            let thread = spawn_off(home, "beside-test", move || {
                // Where it starts is read first; its mask once its creator started it.
                let cpu = sched_getcpu();
                wait.recv().expect("the creator said go");
                (cpu, sched_getaffinity(None).expect("affinity"))
            })
            .expect("starting the thread");
            started.send(()).expect("the thread waits");
            let (cpu, mask) = thread.join().expect("the thread ran");
            assert_eq!(mask, allowed, "the thread was left bound to fewer cores");
            off |= cpu != home;
            if off || allowed.count() < 2 {
                return;
            }
        }
        assert!(
            off,
            "the thread started on its creator's core five times in a row"
        );
    }

    #[test]
    fn a_thread_beside_returns_its_work() {
        let handle = spawn("beside-test", || 6 * 7).expect("starting the thread");
        assert_eq!(handle.join().expect("the thread ran"), 42);
    }
}
