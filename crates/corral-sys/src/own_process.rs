//! corral's own process, kept from what it runs.
//!
//! A command corral starts runs as the same user, so without more it could read corral's
//! `/proc/<pid>/environ` (the provider's API key corral strips from every command's
//! environment), `mem`, `maps`, `fd` and `cwd`. Inside the box, Landlock already refuses
//! those of every process outside the box's domain (its ptrace scoping, Linux 5.13);
//! [`make_private`] is the fallback for a host without Landlock and for commands run
//! outside the box: it marks corral non-dumpable (`PR_SET_DUMPABLE` = 0), so its `/proc`
//! entries belong to root and a ptrace-mode check against it fails for an ordinary user.
//! A child gets its own dumpable state back at its `exec`.
//!
//! The user namespace of corral's boxes must exist first: an ordinary user writes its
//! maps through a helper's `/proc` entries, which a non-dumpable parent's fork would
//! give to root. [`make_private`] makes it, where it will be used, before the mark.

/// Make the boxes' user namespace (where it applies), then mark this process
/// non-dumpable. Idempotent.
pub fn make_private() -> std::io::Result<()> {
    let _ = crate::userns::shared();
    // SAFETY: prctl(2) with constant integer arguments.
    if unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Whether this process is marked non-dumpable.
pub fn is_private() -> bool {
    // SAFETY: prctl(2) with constant integer arguments; it only reads the flag.
    unsafe { libc::prctl(libc::PR_GET_DUMPABLE, 0, 0, 0, 0) == 0 }
}

/// Whether process (or thread) `pid` runs in this process's memory: one of its threads,
/// or a child cloned with `CLONE_VM` that has not exec'd yet. Such a one's `/proc` entries
/// are open to a child of corral's before its exec (it shares that memory too), whatever
/// Landlock says, so corral never opens them on a command's behalf.
pub fn shares_memory(pid: u32) -> bool {
    const KCMP_VM: libc::c_int = 1;
    let Ok(other) = libc::pid_t::try_from(pid) else {
        return false;
    };
    // SAFETY: kcmp(2) compares two processes' kernel objects by pid; it reads no memory
    // of ours.
    let same = unsafe { libc::syscall(libc::SYS_kcmp, libc::getpid(), other, KCMP_VM, 0, 0) };
    match same {
        0 => true,
        r if r > 0 => false,
        // No kcmp (a kernel without CONFIG_KCMP, a filter): this process's own threads.
        _ => std::path::Path::new(&format!("/proc/self/task/{pid}")).exists(),
    }
}
