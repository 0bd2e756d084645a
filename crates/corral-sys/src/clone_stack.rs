//! The stack a child cloned with `CLONE_VM | CLONE_VFORK` runs on before its exec, and
//! the signal mask it is cloned under: what a PID namespace's init, a stage born in its
//! cgroup and the sandbox's probe share.

use std::cell::Cell;
use std::io;

/// The stack a `clone(CLONE_VM | CLONE_VFORK)` child runs corral's code on before its
/// exec: the init's here, a stage's in [`crate::spawn`], the probe's in the sandbox.
///
/// Each thread keeps its last one for the next clone. The child is done with it when
/// `clone` returns (it has exec'd or exited), and a fresh mapping costs more than the
/// mapping itself: the child's first touches fault its pages in, and unmapping memory a
/// child on another processor touched sends that processor an interrupt to flush its
/// TLB, which in a virtual machine is an exit to the hypervisor.
pub(crate) struct Stack {
    base: *mut libc::c_void,
}

pub(crate) const STACK_SIZE: usize = 64 * 1024;

/// The calling thread's kept stack (null when none is kept, or one is in use).
struct Spare(Cell<*mut libc::c_void>);

thread_local! {
    static SPARE: Spare = const { Spare(Cell::new(std::ptr::null_mut())) };
}

impl Drop for Spare {
    fn drop(&mut self) {
        let base = self.0.get();
        if !base.is_null() {
            // SAFETY: a mapping made by `Stack::new`, kept here and no longer in use (the
            // thread is exiting, so no clone of it is running).
            unsafe { libc::munmap(base, STACK_SIZE) };
        }
    }
}

impl Stack {
    /// The thread's kept stack, or a new mapping.
    pub(crate) fn new() -> io::Result<Self> {
        let kept = SPARE
            .try_with(|s| s.0.replace(std::ptr::null_mut()))
            .unwrap_or(std::ptr::null_mut());
        if !kept.is_null() {
            return Ok(Self { base: kept });
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
    /// Keep the stack for the thread's next clone, or unmap it when one is kept already.
    fn drop(&mut self) {
        let base = self.base;
        let kept = SPARE
            .try_with(|s| {
                s.0.get().is_null() && {
                    s.0.set(base);
                    true
                }
            })
            .unwrap_or(false);
        if !kept {
            // SAFETY: the mapping made in `new`, no longer in use (the child has exec'd
            // or exited before `clone` returned).
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
