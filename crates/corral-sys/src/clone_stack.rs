//! The stack a child cloned with `CLONE_VM` runs on before its exec, and the signal mask
//! it is cloned under: what a PID namespace's init, a stage born in its cgroup and the
//! sandbox's probe share.

use std::io;
use std::sync::Mutex;

/// The stack a `clone(CLONE_VM)` child runs corral's code on before its exec: a PID
/// namespace's init's (`init_start`), a stage's in [`crate::spawn`], the probe's in the
/// sandbox.
///
/// A few are kept for the next clones, whichever thread makes them: an init's is taken
/// by the thread that starts a namespace and given back by the one that ends it, and an
/// init may still be starting on another core while a stage is spawned. A stage's child
/// is done with its stack when `clone` returns (`CLONE_VFORK`: it has exec'd or
/// exited), an init's when its exec closes its status pipe. A fresh mapping
/// costs more than the mapping itself: the child's first touches fault its pages in, and
/// unmapping memory a child on another processor touched sends that processor an
/// interrupt to flush its TLB, which in a virtual machine is an exit to the hypervisor.
pub(crate) struct Stack {
    base: *mut libc::c_void,
}

pub(crate) const STACK_SIZE: usize = 64 * 1024;

/// The kept stacks (null where none is kept), shared by every thread: an init's stack is
/// taken on the thread that starts a namespace and given back on the thread that ends it.
struct Spare([*mut libc::c_void; SPARES]);

/// Enough for an init still starting and a stage being spawned at the same time.
const SPARES: usize = 4;

// SAFETY: the pointers name mappings no child uses any more (see `Stack`'s drop); which
// thread unmaps or hands one out does not matter.
unsafe impl Send for Spare {}

static SPARE: Mutex<Spare> = Mutex::new(Spare([std::ptr::null_mut(); SPARES]));

fn spares() -> std::sync::MutexGuard<'static, Spare> {
    SPARE.lock().unwrap_or_else(|e| e.into_inner())
}

impl Stack {
    /// A kept stack, or a new mapping.
    pub(crate) fn new() -> io::Result<Self> {
        let kept = spares()
            .0
            .iter_mut()
            .map(|kept| std::mem::replace(kept, std::ptr::null_mut()))
            .find(|base| !base.is_null());
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
    /// Keep the stack for a next clone, or unmap it when enough are kept already.
    /// Dropped only once its child is done with it.
    fn drop(&mut self) {
        let base = self.base;
        let kept = spares()
            .0
            .iter_mut()
            .find(|kept| kept.is_null())
            .map(|free| *free = base)
            .is_some();
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
