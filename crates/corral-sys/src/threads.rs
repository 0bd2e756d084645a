//! Where a thread of this process may run, set by another thread.
//!
//! A thread's affinity is usually set by the thread itself (`sched_setaffinity` on its
//! own id). Set on a thread that has just been started and is still waiting for a core,
//! it moves the thread before it ever runs: no migration of a running thread (which
//! takes the kernel's stopper thread on the core it runs on), and no need for the new
//! thread to run first. What names such a thread from outside is its `pthread_t`, which
//! the standard library's `JoinHandle` gives and the C library's
//! `pthread_setaffinity_np` takes.

use std::io;
use std::os::unix::thread::JoinHandleExt;
use std::thread::JoinHandle;

/// Let the thread behind `thread` run only on the cores in `cpus` (core numbers from 0).
/// An empty `cpus`, or one the kernel refuses (a core the process may not use), is an
/// error and changes nothing.
pub fn set_affinity<T>(thread: &JoinHandle<T>, cpus: &[usize]) -> io::Result<()> {
    // SAFETY: `cpu_set_t` is plain data, for which all zeroes is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &cpu in cpus {
        if cpu >= libc::CPU_SETSIZE as usize {
            return Err(io::Error::from_raw_os_error(libc::EINVAL));
        }
        // SAFETY: `cpu` is below `CPU_SETSIZE`, the number of cores a `cpu_set_t` holds.
        unsafe { libc::CPU_SET(cpu, &mut set) };
    }
    // SAFETY: the `pthread_t` comes from a `JoinHandle` that is borrowed for the call, so
    // the thread has been neither joined nor detached: its handle is valid. `set` is a
    // live `cpu_set_t` of the size passed.
    let status = unsafe {
        libc::pthread_setaffinity_np(
            thread.as_pthread_t(),
            std::mem::size_of::<libc::cpu_set_t>(),
            &set,
        )
    };
    match status {
        0 => Ok(()),
        errno => Err(io::Error::from_raw_os_error(errno)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_started_thread_runs_on_the_cores_it_was_given() {
        let cores: Vec<usize> = (0..64)
            .filter(|&cpu| rustix::thread::sched_getaffinity(None).is_ok_and(|set| set.is_set(cpu)))
            .collect();
        let (go, wait) = std::sync::mpsc::channel::<()>();
        let thread = std::thread::spawn(move || {
            wait.recv().unwrap();
            rustix::thread::sched_getcpu()
        });
        let last = *cores.last().unwrap();
        set_affinity(&thread, &[last]).unwrap();
        go.send(()).unwrap();
        assert_eq!(thread.join().unwrap(), last);
    }

    #[test]
    fn no_core_is_an_error() {
        let thread = std::thread::spawn(|| ());
        assert!(set_affinity(&thread, &[]).is_err());
        thread.join().unwrap();
    }
}
