//! The stack a child cloned with `CLONE_VM` runs on before its exec, and the signal mask
//! it is cloned under: what a PID namespace's init, a stage born in its cgroup and the
//! sandbox's probe share.

use std::cell::Cell;
use std::io;

/// The stack a `clone(CLONE_VM)` child runs corral's code on before its exec: a PID
/// namespace's init's (`init_start`), a stage's in [`crate::spawn`], the probe's in the
/// sandbox.
///
/// Each thread keeps its last two for its next clones: one for an init, which may still
/// be starting on another core while the same thread starts a stage, and one for that
/// stage. A stage's child is done with its stack when `clone` returns (`CLONE_VFORK`: it
/// has exec'd or exited), an init's when its exec closes its status pipe. A fresh mapping
/// costs more than the mapping itself: the child's first touches fault its pages in, and
/// unmapping memory a child on another processor touched sends that processor an
/// interrupt to flush its TLB, which in a virtual machine is an exit to the hypervisor.
pub(crate) struct Stack {
    base: *mut libc::c_void,
}

pub(crate) const STACK_SIZE: usize = 64 * 1024;

/// The calling thread's kept stacks (null where none is kept).
struct Spare([Cell<*mut libc::c_void>; 2]);

thread_local! {
    static SPARE: Spare = const {
        Spare([Cell::new(std::ptr::null_mut()), Cell::new(std::ptr::null_mut())])
    };
}

impl Drop for Spare {
    fn drop(&mut self) {
        for kept in &self.0 {
            let base = kept.get();
            if !base.is_null() {
                // SAFETY: a mapping made by `Stack::new`, kept here and no longer in use
                // (only a child's last use returns it here).
                unsafe { libc::munmap(base, STACK_SIZE) };
            }
        }
    }
}

impl Stack {
    /// One of the thread's kept stacks, or a new mapping.
    pub(crate) fn new() -> io::Result<Self> {
        let kept = SPARE
            .try_with(|s| {
                s.0.iter()
                    .map(|kept| kept.replace(std::ptr::null_mut()))
                    .find(|base| !base.is_null())
            })
            .ok()
            .flatten();
        if let Some(base) = kept {
            return Ok(Self { base });
        }
        // SAFETY: a fresh anonymous private mapping; nothing else refers to it.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                STACK_SIZE,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_STACK,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(Self { base })
    }

    /// The lowest address of the mapping (what `clone3` takes).
    pub(crate) fn base(&self) -> *mut libc::c_void {
        self.base
    }

    /// The stack grows down from here.
    pub(crate) fn top(&mut self) -> *mut libc::c_void {
        // SAFETY: one past the end of the mapping, which is where a stack starts.
        unsafe { self.base.cast::<u8>().add(STACK_SIZE).cast() }
    }
}

impl Drop for Stack {
    /// Keep the stack for the thread's next clone, or unmap it when two are kept already.
    /// Dropped only once its child is done with it.
    fn drop(&mut self) {
        let base = self.base;
        let kept = SPARE
            .try_with(|s| {
                s.0.iter()
                    .find(|kept| kept.get().is_null())
                    .is_some_and(|free| {
                        free.set(base);
                        true
                    })
            })
            .unwrap_or(false);
        if !kept {
            // SAFETY: the mapping made in `new`, no longer in use (see above).
            unsafe { libc::munmap(base, STACK_SIZE) };
        }
    }
}

/// Every signal blocked on the calling thread until dropped.
pub(crate) struct Signals {
    old: libc::sigset_t,
}

impl Signals {
    pub(crate) fn block_all() -> Self {
        // SAFETY: sigfillset and pthread_sigmask on sets owned by this frame.
        unsafe {
            let mut all: libc::sigset_t = std::mem::zeroed();
            let mut old: libc::sigset_t = std::mem::zeroed();
            libc::sigfillset(&mut all);
            libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut old);
            Self { old }
        }
    }
}

impl Drop for Signals {
    fn drop(&mut self) {
        // SAFETY: restores the mask saved in `block_all`.
        unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &self.old, std::ptr::null_mut()) };
    }
}
