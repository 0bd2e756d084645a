//! A clone made from inside namespaces this process is not in: how an ordinary user's
//! PID namespaces get their init and their commands.
//!
//! A process is in one user namespace for all its threads, and a multithreaded one cannot
//! `setns` into another. So where corral is not root, whatever must be *born* inside the
//! boxes' user namespace ([`crate::userns::shared`]) is cloned by a helper that joined it:
//! [`clone_from_inside`] clones that helper with `CLONE_VM | CLONE_VFORK` (it borrows
//! corral's memory on a stack of its own while the calling thread waits), the helper
//! `setns`es into the namespaces it is given and runs one function, which makes the real
//! clone with `CLONE_PARENT`, and exits. The process that clone makes is corral's own
//! child, waited on and signalled like any other, born in the helper's namespaces:
//!
//! - a PID namespace's init (`init_start`): the helper joins the user namespace, and the
//!   init's `CLONE_NEWPID | CLONE_NEWNS` then make namespaces that user namespace owns;
//! - a command in that PID namespace ([`crate::spawn`]): the helper joins the init's user
//!   and PID namespaces at once (`setns` on its pidfd), so its children are born in the
//!   PID namespace, and the command's own clone is made from there;
//! - a mount namespace no process holds (the mount template, a run's sandbox mounts:
//!   `mount_template::made_apart`): the helper joins the user namespace, unshares one,
//!   makes its mounts and opens it, its "pid" then the descriptor it opened.
//!
//! The helper also shares corral's descriptor table (`CLONE_FILES`), so a pidfd the real
//! clone makes lands in corral's table. It makes only raw system calls and the one call
//! it is given, and it is reaped before [`clone_from_inside`] returns.

use std::io;
use std::os::fd::RawFd;

/// What the helper is given and gives back, on the caller's frame.
#[repr(C)]
struct Helper {
    /// The namespace descriptor to join, and which kinds (`CLONE_NEW*`).
    fd: RawFd,
    nstype: libc::c_int,
    /// What to run once inside: returns a pid, or a negated errno.
    inside: unsafe extern "C" fn(*mut libc::c_void) -> libc::c_long,
    arg: *mut libc::c_void,
    /// What `inside` returned, or the negated errno of the `setns`.
    ret: libc::c_long,
}

/// Join `nstype` of `fd` in a helper and run `inside(arg)` there; what it returned (a
/// pid, or a negated errno turned into the error). See the module docs.
///
/// # Safety
///
/// `inside` runs in a child that shares this process's memory and descriptor table
/// while the calling thread waits, with every signal blocked: it may make only raw system
/// calls on what `arg` points to (which must outlive this call), and must not return
/// before the clone it makes no longer needs the helper (a `CLONE_VFORK` clone has
/// exec'd or exited; any other was made).
pub(crate) unsafe fn clone_from_inside(
    fd: RawFd,
    nstype: libc::c_int,
    inside: unsafe extern "C" fn(*mut libc::c_void) -> libc::c_long,
    arg: *mut libc::c_void,
) -> io::Result<libc::pid_t> {
    extern "C" fn helper_main(arg: *mut libc::c_void) -> libc::c_int {
        // SAFETY: `arg` is the `Helper` on the frame of `clone_from_inside`, which waits
        // (CLONE_VFORK) until this child has exited.
        let helper = unsafe { &mut *arg.cast::<Helper>() };
        // SAFETY: setns(2) on a descriptor the caller holds open; then the caller's
        // function, under the contract of `clone_from_inside`.
        unsafe {
            helper.ret = if libc::setns(helper.fd, helper.nstype) == 0 {
                (helper.inside)(helper.arg)
            } else {
                -libc::c_long::from(*libc::__errno_location())
            };
        }
        0
    }
    let mut helper = Helper {
        fd,
        nstype,
        inside,
        arg,
        ret: -libc::c_long::from(libc::ECHILD),
    };
    let mut stack = crate::clone_stack::Stack::new()?;
    let flags = libc::CLONE_VM | libc::CLONE_VFORK | libc::CLONE_FILES | libc::SIGCHLD;
    let all = crate::clone_stack::Signals::block_all();
    // SAFETY: `helper_main` runs on `stack`, a mapping of its own that outlives it
    // (CLONE_VFORK: clone returns once the helper has exited), and writes only `helper`,
    // on this frame, and, through the C library's errno, this thread's thread-local
    // storage, while this thread is suspended; every signal is blocked meanwhile, so no
    // handler of corral's runs in it. Its setns changes only its own namespaces, and what
    // it runs is bound by this function's contract.
    let pid = unsafe { libc::clone(helper_main, stack.top(), flags, (&raw mut helper).cast()) };
    drop(all);
    drop(stack);
    if pid < 0 {
        return Err(io::Error::last_os_error());
    }
    // The helper has exited: collect it (a wait for every child elsewhere may have
    // collected it first, which is no failure).
    let mut status = 0;
    // SAFETY: waitpid(2) on the helper just made, with a status word on this frame.
    while unsafe { libc::waitpid(pid, &raw mut status, libc::__WALL) } < 0
        && io::Error::last_os_error().raw_os_error() == Some(libc::EINTR)
    {}
    // SAFETY: written by the helper before it exited; the volatile read keeps the
    // compiler from assuming the value stored before the clone.
    let ret = unsafe { std::ptr::read_volatile(&raw const helper.ret) };
    if ret < 0 {
        return Err(io::Error::from_raw_os_error(-ret as i32));
    }
    libc::pid_t::try_from(ret).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))
}
