//! How a PID namespace's init is started: a clone that shares corral's memory until its
//! exec, and the one-way report it sends back.
//!
//! The init is cloned with `CLONE_VM | CLONE_NEWPID` (and `CLONE_NEWNS` where it makes its
//! mounts from the host's), but without `CLONE_VFORK`: the thread that clones it (the
//! maker thread, for a call) is free again at once, while the child, on another core,
//! copies its mounts, mounts `/proc` and execs; whoever takes the namespace reads its
//! report, [`Cloned::report`], which ends when the exec has happened. No command is
//! started in the namespace before that, so nothing in it ever sees corral's memory or
//! descriptors through its pid 1. What the two share meanwhile is made safe by
//! construction:
//!
//! - the child touches only [`InitMemory`], a heap block the parent frees only once the
//!   child is done with it (its exec or its end closed the status pipe: the kernel
//!   switches a task's memory before it closes its descriptors, on exec and on exit), or
//!   it was reaped, and its own copy of the descriptor table;
//! - it makes raw system calls only (the `syscalls` crate), which return their error
//!   instead of writing the C library's `errno`: that lives in the *parent thread's*
//!   thread-local storage, which the child shares;
//! - every signal is blocked in it from its first instruction through its exec.
//!
//! The status pipe closes on the exec with nothing written, or carries [`FAILED`] with
//! the step and its errno.

use std::io::{self, Read};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};

use rustix::pipe::{PipeFlags, pipe_with};
use syscalls::{Sysno, syscall};

use crate::clone_stack::{Signals, Stack};

/// A step failed; a step number and an errno follow, as two native-endian words.
const FAILED: u8 = b'F';
/// Which step of an init's start failed.
pub(crate) const STEP_MOUNTS: i32 = 1;
pub(crate) const STEP_EXEC: i32 = 2;
pub(crate) const STEP_OTHER: i32 = 3;

/// What an init is asked to make its mounts from.
#[derive(Clone, Copy)]
pub(crate) enum InitMounts {
    /// Join this mount namespace (the template, or a sandbox's mounts) and copy it.
    Copy(RawFd),
    /// A copy of the host's, made a slave and (where `detach_host_proc`) without the
    /// host's `/proc`, by the init itself.
    FromHost { detach_host_proc: bool },
}

/// What the program the init execs is: corral's image (a descriptor) or a path.
#[derive(Clone, Copy)]
pub(crate) enum InitProgram {
    Image(RawFd),
    Path {
        path: &'static std::ffi::CStr,
        name: &'static std::ffi::CStr,
    },
}

/// What the child reads, made before the clone; the whole block outlives its use.
#[repr(C)]
struct InitStart {
    image: RawFd,
    lifeline: RawFd,
    status: RawFd,
    template: RawFd,
    detach_host_proc: bool,
    path: *const libc::c_char,
    argv: [*const libc::c_char; 2],
    envp: [*const libc::c_char; 1],
}

/// The memory an init's clone runs on until its exec: its stack and what it reads.
pub(crate) struct InitMemory {
    stack: Stack,
    start: InitStart,
}

// SAFETY: the block's pointers name static strings or its own fields, and nothing reads
// it through them but the child it was made for; moving the box (from the maker thread
// to the call's, say) moves no byte the child uses.
unsafe impl Send for InitMemory {}

/// An init just cloned: not yet known to have exec'd. Dropped without its
/// [`Self::report`], it is killed and waited for before its memory goes.
pub(crate) struct Cloned {
    pid: u32,
    /// The write end of its lifeline.
    lifeline: Option<OwnedFd>,
    status: Option<OwnedFd>,
    memory: Option<Box<InitMemory>>,
}

impl Drop for Cloned {
    fn drop(&mut self) {
        if self.memory.is_some() {
            // A child this process has not reaped: the pid is still its.
            crate::reaper::signal(self.pid, rustix::process::Signal::KILL);
            crate::reaper::wait_for(self.pid);
        }
    }
}

impl std::fmt::Debug for Cloned {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cloned")
            .field("pid", &self.pid)
            .finish_non_exhaustive()
    }
}

/// What an init's status pipe said.
pub(crate) enum Report {
    /// The mounts are made and the exec went through.
    Running,
    /// A step failed (its number and error), or the report could not be read; `reaped` if
    /// the child was collected already. (A child that died without a word reads as
    /// `Running`: its pidfd then says it has exited.)
    Failed {
        step: i32,
        error: io::Error,
        reaped: bool,
    },
}

impl Cloned {
    /// Clone an init that makes `mounts`, then execs `program`.
    pub(crate) fn start(program: InitProgram, mounts: InitMounts) -> io::Result<Self> {
        let (life_r, life_w) = pipe_with(PipeFlags::CLOEXEC)?;
        let (status_r, status_w) = pipe_with(PipeFlags::CLOEXEC)?;
        let (template, detach_host_proc) = match mounts {
            InitMounts::Copy(fd) => (fd, false),
            InitMounts::FromHost { detach_host_proc } => (-1, detach_host_proc),
        };
        let (image, path, name) = match program {
            InitProgram::Image(fd) => (fd, c"/", c"corral-init"),
            InitProgram::Path { path, name } => (-1, path, name),
        };
        let mut memory = Box::new(InitMemory {
            stack: Stack::new()?,
            start: InitStart {
                image,
                lifeline: life_r.as_raw_fd(),
                status: status_w.as_raw_fd(),
                template,
                detach_host_proc,
                path: path.as_ptr(),
                argv: [name.as_ptr(), std::ptr::null()],
                envp: [std::ptr::null()],
            },
        });
        // A copy of the template is made by the init itself, after it joins it.
        let own_mounts = if template < 0 { libc::CLONE_NEWNS } else { 0 };
        // An ordinary user's namespaces are made inside the boxes' user namespace, which
        // owns them (see `crate::userns::shared`).
        let inside = crate::userns::inside();
        let flags = libc::CLONE_VM | libc::CLONE_NEWPID | own_mounts | libc::SIGCHLD;
        let all = Signals::block_all();
        let top = memory.stack.top();
        let start: *mut InitStart = &raw mut memory.start;
        let cloned = match inside {
            None => {
                // SAFETY: `init_main` runs on the stack in `memory`, and reads only
                // `memory.start` and the static strings it points to; `memory` is a heap
                // block this `Cloned` owns, and it is freed only once the child is done
                // with it (its exec or its end closed the status pipe, or it was reaped).
                // The child shares corral's memory but makes only raw system calls that
                // write no `errno`, and touches nothing else. Every signal the C library
                // lets a thread block is blocked first, the child blocks its two others
                // before anything else, and all stay blocked through its exec, so no
                // handler of corral's can run in it; this thread's mask is restored below.
                let pid = unsafe { libc::clone(init_main, top, flags, start.cast()) };
                if pid < 0 {
                    Err(io::Error::last_os_error())
                } else {
                    Ok(pid as u32)
                }
            }
            Some(user) => {
                let mut made = InitClone {
                    top,
                    flags: flags | libc::CLONE_PARENT,
                    start,
                };
                // SAFETY: as for the direct clone, made by a helper inside the user
                // namespace (see `joined`) from `clone_init`, which makes only that clone
                // (`CLONE_PARENT`: the init is this process's child); `made` lives on
                // this frame through the call.
                unsafe {
                    crate::joined::clone_from_inside(
                        user,
                        libc::CLONE_NEWUSER,
                        clone_init,
                        (&raw mut made).cast(),
                    )
                }
                .map(|pid| pid as u32)
            }
        };
        drop(all);
        let pid = cloned?;
        // The child holds its own copies of these.
        drop((life_r, status_w));
        Ok(Self {
            pid,
            lifeline: Some(life_w),
            status: Some(status_r),
            memory: Some(memory),
        })
    }

    /// Wait until the init has exec'd, or failed to.
    pub(crate) fn report(mut self) -> (u32, Option<OwnedFd>, Report) {
        let lifeline = self.lifeline.take();
        let pid = self.pid;
        // Dropping `self` with its memory still there kills the child and waits for it.
        let reaped = |error: io::Error| Report::Failed {
            step: STEP_OTHER,
            error,
            reaped: true,
        };
        let Some(status) = self.status.take() else {
            drop(self);
            return (pid, lifeline, reaped(io::ErrorKind::NotFound.into()));
        };
        let mut bytes = [0u8; 32];
        let mut got = 0;
        let mut file = std::fs::File::from(status);
        loop {
            match file.read(&mut bytes[got..]) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    drop(self);
                    return (pid, lifeline, reaped(e));
                }
            }
            if got == bytes.len() {
                drop(self);
                let e = io::Error::other("the namespace's init sent more than it may");
                return (pid, lifeline, reaped(e));
            }
        }
        // The pipe ended: the child's exec or its exit closed it, so it is done with its
        // memory.
        drop(self.memory.take());
        let report = match &bytes[..got] {
            [] => Report::Running,
            [FAILED, step @ ..] if step.len() >= 8 => {
                let word = |b: &[u8]| i32::from_ne_bytes([b[0], b[1], b[2], b[3]]);
                Report::Failed {
                    step: word(&step[..4]),
                    error: io::Error::from_raw_os_error(word(&step[4..8])),
                    reaped: false,
                }
            }
            _ => Report::Failed {
                step: STEP_OTHER,
                error: io::Error::other("the namespace's init sent a report it may not"),
                reaped: false,
            },
        };
        (pid, lifeline, report)
    }
}

/// What [`clone_init`] clones, from inside the user namespace.
#[repr(C)]
struct InitClone {
    top: *mut libc::c_void,
    flags: libc::c_int,
    start: *mut InitStart,
}

/// The clone of an init, made by the helper that joined the user namespace: its pid or
/// a negated errno.
unsafe extern "C" fn clone_init(arg: *mut libc::c_void) -> libc::c_long {
    // SAFETY: `arg` is the `InitClone` on the frame of `Cloned::start`, which waits for
    // the helper; the clone is the one described there.
    unsafe {
        let made = &*arg.cast::<InitClone>();
        let pid = libc::clone(init_main, made.top, made.flags, made.start.cast());
        if pid < 0 {
            -libc::c_long::from(*libc::__errno_location())
        } else {
            libc::c_long::from(pid)
        }
    }
}

/// The init of a new PID namespace, until its exec: see the module docs and `pidns`'s.
///
/// Runs in the child of the clone in [`Cloned::start`], on its own stack, sharing
/// corral's memory while corral's thread goes on. Only raw system calls on what `start`
/// points to; on failure, the step and its errno go down the status pipe.
extern "C" fn init_main(start: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `start` is the `InitStart` in the `InitMemory` of `Cloned::start`, which
    // outlives this child's use of it.
    let start = unsafe { &*start.cast::<InitStart>() };
    // SAFETY: raw system calls on descriptor numbers and static or caller-owned
    // NUL-terminated strings; none of them writes `errno` or any memory but this stack.
    unsafe {
        // Every signal blocked, the C library's own two included (`sigfillset` leaves
        // them out), until the exec: no handler of corral's may run on this stack.
        let all: u64 = !0;
        let _ = syscall!(
            Sysno::rt_sigprocmask,
            libc::SIG_BLOCK,
            &raw const all,
            std::ptr::null::<u64>(),
            std::mem::size_of::<u64>()
        );
        let failed = |status: RawFd, step: i32, errno: syscalls::Errno| -> libc::c_int {
            let mut words = [0u8; 9];
            words[0] = FAILED;
            let [s0, s1, s2, s3] = step.to_ne_bytes();
            let [e0, e1, e2, e3] = errno.into_raw().to_ne_bytes();
            words[1..].copy_from_slice(&[s0, s1, s2, s3, e0, e1, e2, e3]);
            let _ = syscall!(Sysno::write, status, words.as_ptr(), words.len());
            let _ = syscall!(Sysno::exit_group, 1);
            0
        };
        // The template first, while its descriptor is open: join it (which needs this
        // child's own filesystem context, as a clone without CLONE_FS has), then copy it.
        if start.template >= 0
            && let Err(e) = syscall!(Sysno::setns, start.template, libc::CLONE_NEWNS)
                .and_then(|_| syscall!(Sysno::unshare, libc::CLONE_NEWNS))
        {
            return failed(start.status, STEP_MOUNTS, e);
        }
        let fail = |e| failed(start.status, STEP_OTHER, e);
        // Mounts, unless the template's copy has them so already: receive the host's,
        // send none (before anything is unmounted, or the unmount would reach the host);
        // then a /proc of this namespace, with the host's taken away beneath it where the
        // kernel allows, so unmounting it cannot show the host's processes again.
        let none = std::ptr::null::<libc::c_char>();
        if start.template < 0
            && let Err(e) = syscall!(
                Sysno::mount,
                none,
                c"/".as_ptr(),
                none,
                libc::MS_REC | libc::MS_SLAVE,
                none
            )
        {
            return fail(e);
        }
        if start.detach_host_proc {
            let _ = syscall!(Sysno::umount2, c"/proc".as_ptr(), libc::MNT_DETACH);
        }
        let flags = libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
        if let Err(e) = syscall!(
            Sysno::mount,
            c"proc".as_ptr(),
            c"/proc".as_ptr(),
            c"proc".as_ptr(),
            flags,
            none
        ) {
            return fail(e);
        }
        // Every signal stays blocked, as it was at the clone, through the exec and after
        // it: no handler of corral's can run in this child, the exec sets every handler
        // back to the default, and the init needs no signal (SIGKILL, its only ending
        // besides the lifeline, cannot be blocked). That spares resetting each of the
        // sixty-odd dispositions by hand, as a program's start must. Orphans it inherits
        // are reaped by the kernel: SIGCHLD is ignored , which survives the exec.
        if let Err(e) = ignore_sigchld() {
            return fail(e);
        }
        // The status pipe moves above every descriptor the init keeps (and stays
        // close-on-exec, so the exec closes it: that is the success signal); the
        // lifeline becomes stdin; stdout and stderr are the null device; all else goes,
        // so the init holds no other call's pipe open.
        let status = match syscall!(Sysno::fcntl, start.status, libc::F_DUPFD_CLOEXEC, 3) {
            Ok(fd) => fd as RawFd,
            Err(e) => return failed(start.status, STEP_OTHER, e),
        };
        let fail = |e| failed(status, STEP_OTHER, e);
        // The image, if any, just above it (close-on-exec too: the exec closes it).
        let mut image = -1;
        if start.image >= 0 {
            match syscall!(Sysno::fcntl, start.image, libc::F_DUPFD_CLOEXEC, status + 1) {
                Ok(fd) => image = fd as RawFd,
                Err(e) => return fail(e),
            }
        }
        // Stdin is the lifeline, without close-on-exec, so it survives the exec.
        let stdin = if start.lifeline == 0 {
            Ok(0)
        } else {
            syscall!(Sysno::dup3, start.lifeline, 0, 0)
        };
        if let Err(e) = stdin.and_then(|_| syscall!(Sysno::fcntl, 0, libc::F_SETFD, 0)) {
            return fail(e);
        }
        let close_range = |first: u32, last: u32| syscall!(Sysno::close_range, first, last, 0);
        if status > 1
            && let Err(e) = close_range(1, status as u32 - 1)
        {
            return fail(e);
        }
        // Everything above the status pipe but the image.
        let kept = if image > status { image } else { status };
        if image > status + 1
            && let Err(e) = close_range(status as u32 + 1, image as u32 - 1)
        {
            return fail(e);
        }
        if let Err(e) = close_range(kept as u32 + 1, u32::MAX) {
            return fail(e);
        }
        // The lowest free descriptor is 1 now.
        let null = syscall!(
            Sysno::openat,
            libc::AT_FDCWD,
            c"/dev/null".as_ptr(),
            libc::O_RDWR
        );
        match null {
            Ok(1) => {}
            Ok(_) => return fail(syscalls::Errno::EBADF),
            Err(e) => return fail(e),
        }
        if let Err(e) = syscall!(Sysno::dup3, 1, 2, 0) {
            return fail(e);
        }
        let _ = syscall!(Sysno::chdir, c"/".as_ptr());
        let exec = if image >= 0 {
            syscall!(
                Sysno::execveat,
                image,
                c"".as_ptr(),
                start.argv.as_ptr(),
                start.envp.as_ptr(),
                libc::AT_EMPTY_PATH
            )
        } else {
            syscall!(
                Sysno::execve,
                start.path,
                start.argv.as_ptr(),
                start.envp.as_ptr()
            )
        };
        match exec {
            Err(e) => failed(status, STEP_EXEC, e),
            Ok(_) => 0,
        }
    }
}

/// `rt_sigaction(SIGCHLD, SIG_IGN)` with the kernel's own structure (the C library's
/// differs): a handler, flags, a restorer no ignored signal needs, and the mask, in the
/// order of every architecture but MIPS, which the build refuses.
///
/// # Safety
/// A raw system call on a structure on this stack.
unsafe fn ignore_sigchld() -> Result<usize, syscalls::Errno> {
    #[cfg(any(target_arch = "mips", target_arch = "mips64"))]
    compile_error!("the init's start assumes the kernel's sigaction with the handler first");
    #[repr(C)]
    struct KernelSigaction {
        handler: usize,
        flags: libc::c_ulong,
        restorer: usize,
        mask: u64,
    }
    let ignore = KernelSigaction {
        handler: libc::SIG_IGN,
        flags: 0,
        restorer: 0,
        mask: 0,
    };
    // SAFETY: see the function's contract; the kernel reads `ignore` and eight bytes of
    // mask, and writes nothing back (no old action asked for).
    unsafe {
        syscall!(
            Sysno::rt_sigaction,
            libc::SIGCHLD,
            &raw const ignore,
            std::ptr::null::<KernelSigaction>(),
            std::mem::size_of::<u64>()
        )
    }
}
