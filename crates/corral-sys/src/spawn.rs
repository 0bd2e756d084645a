//! Start a program without copying corral's address space, born in its cgroup.
//!
//! [`spawn`] does what `posix_spawn` does, with the two things the C library's cannot:
//! `clone3` with `CLONE_VM | CLONE_VFORK` (the child borrows corral's memory on a stack of
//! its own while the calling thread waits, so nothing is copied) plus `CLONE_PIDFD` (a
//! pidfd from birth) and, where a group is given, `CLONE_INTO_CGROUP`: the child is in its
//! v2 cgroup from its first instruction, without the migration a write to `cgroup.procs`
//! pays (and the RCU grace period that migration can wait on).
//!
//! Between the clone and the exec the child runs only raw system calls, described by a
//! [`Launch`] made beforehand: its three standard descriptors, a process group, a
//! parent-death signal, writes of `0` to v1 `tasks` (or `cgroup.procs`) files (a v1
//! controller such as `pids` has no clone-time placement; see [`crate::cgroup::open_tasks`]
//! for why `tasks`), the mount namespace to join, its working directory, the sandbox's
//! confinement, every signal's disposition back to the default and an empty mask, then
//! `execve`. A failure before the exec sends its errno back through memory the two share.
//!
//! [`into_cgroup_supported`] says whether the kernel has `CLONE_INTO_CGROUP` (Linux 5.7)
//! and `clone3` is not filtered; where it has not, callers fall back to a forked child that
//! moves itself (see [`crate::cgroup::join_before_exec`]). Only x86-64 and aarch64 have the
//! few instructions that start the child on its stack; elsewhere it reports unsupported.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;
use std::sync::OnceLock;

use rustix::process::Signal;

/// At most this many v1 groups a child joins.
const MAX_JOINS: usize = 4;

/// Everything the child does between its birth and its exec, prepared before the clone.
#[derive(Debug)]
pub struct Launch {
    path: CString,
    argv: Vec<CString>,
    envp: Vec<CString>,
    cwd: CString,
    /// stdin, stdout, stderr, in that order.
    pub stdio: [Option<OwnedFd>; 3],
    /// `setpgid(0, pgid)` in the child: 0 leads a new group.
    pub process_group: Option<i32>,
    /// `PR_SET_PDEATHSIG`: the signal the child gets when the spawning thread exits.
    pub death_signal: Option<Signal>,
    /// A v2 group's directory (`O_PATH` or read-only): the child is born in it.
    pub cgroup: Option<RawFd>,
    /// `tasks` (or `cgroup.procs`) of v1 groups the child moves itself into before it
    /// execs.
    joins: [RawFd; MAX_JOINS],
    joined: usize,
    /// A process whose mount namespace the child joins (a pidfd), before its `chdir`.
    pub mount_namespace: Option<RawFd>,
    /// The sandbox the child confines itself to, after its `chdir` (as a forked child's
    /// hook would): namespaces, mounts, Landlock, seccomp, all raw system calls on what the
    /// confinement built beforehand.
    pub confinement: Option<crate::sandbox::Confinement>,
    /// The stage's redirects, opened inside its confinement (see
    /// [`crate::box_redirects`]); without one, after the `chdir`.
    pub redirects: Option<std::sync::Arc<crate::box_redirects::Redirects>>,
    /// The pidfd of a PID namespace's init made inside the boxes' user namespace (an
    /// ordinary user's, see [`crate::pidns::PidNamespace::born_through_helper`]): the
    /// child is born in that init's user and PID namespaces, cloned by a helper that
    /// joined them (see `joined`), and is still this process's child.
    pub born_in: Option<RawFd>,
    /// `setsid` and make descriptor 0 (a terminal's slave) the controlling terminal,
    /// after the standard descriptors are in place. Not with a process group.
    pub controlling_terminal: bool,
    /// Add this to the child's niceness and make `RLIMIT_NICE` 0 (see
    /// [`crate::priority`]); 0 leaves both.
    pub nice: u8,
    /// Per-process bounds set in the child (see [`crate::rlimits`]).
    pub rlimits: crate::rlimits::Rlimits,
}

impl Launch {
    /// A launch of `path` with `argv` (its `argv[0]` included), environment `env` as
    /// `NAME=value` strings, in `cwd`. Fails on a NUL byte in any of them.
    pub fn new(
        path: &std::path::Path,
        argv: impl IntoIterator<Item = impl Into<Vec<u8>>>,
        env: impl IntoIterator<Item = impl Into<Vec<u8>>>,
        cwd: &std::path::Path,
    ) -> io::Result<Self> {
        let c = |bytes: Vec<u8>| {
            CString::new(bytes).map_err(|_| {
                io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "a NUL byte in a program's argument, environment or path",
                )
            })
        };
        Ok(Self {
            path: c(path.as_os_str().as_encoded_bytes().to_vec())?,
            argv: argv
                .into_iter()
                .map(|a| c(a.into()))
                .collect::<io::Result<_>>()?,
            envp: env
                .into_iter()
                .map(|e| c(e.into()))
                .collect::<io::Result<_>>()?,
            cwd: c(cwd.as_os_str().as_encoded_bytes().to_vec())?,
            stdio: [None, None, None],
            process_group: None,
            death_signal: None,
            cgroup: None,
            joins: [-1; MAX_JOINS],
            joined: 0,
            mount_namespace: None,
            confinement: None,
            redirects: None,
            born_in: None,
            nice: 0,
            rlimits: crate::rlimits::Rlimits::default(),
            controlling_terminal: false,
        })
    }

    /// Have the child write `0` to `procs` (a v1 group's `tasks` or `cgroup.procs`, open for
    /// writing) before it execs. The descriptor must stay open until [`spawn`] returns.
    pub fn join(&mut self, procs: RawFd) -> io::Result<()> {
        let slot = self.joins.get_mut(self.joined).ok_or_else(|| {
            io::Error::new(io::ErrorKind::InvalidInput, "too many cgroups to join")
        })?;
        *slot = procs;
        self.joined += 1;
        Ok(())
    }
}

/// A child started by [`spawn`]: waited on by its pid, signalled through its pidfd.
#[derive(Debug)]
pub struct Child {
    pid: u32,
    pidfd: OwnedFd,
    status: Option<ExitStatus>,
}

impl Child {
    /// Its pid, as corral sees it.
    pub fn id(&self) -> u32 {
        self.pid
    }

    /// Its pidfd, readable once it exits.
    pub fn pidfd(&self) -> &OwnedFd {
        &self.pidfd
    }

    /// SIGKILL, unless it was already reaped.
    pub fn kill(&mut self) -> io::Result<()> {
        if self.status.is_some() {
            return Ok(());
        }
        Ok(rustix::process::pidfd_send_signal(
            &self.pidfd,
            Signal::KILL,
        )?)
    }

    /// Its exit status if it has exited (reaping it), without blocking.
    pub fn try_wait(&mut self) -> io::Result<Option<ExitStatus>> {
        self.wait_with(libc::WNOHANG)
    }

    /// Wait for it to exit.
    pub fn wait(&mut self) -> io::Result<ExitStatus> {
        loop {
            if let Some(status) = self.wait_with(0)? {
                return Ok(status);
            }
        }
    }

    fn wait_with(&mut self, options: libc::c_int) -> io::Result<Option<ExitStatus>> {
        if let Some(status) = self.status {
            return Ok(Some(status));
        }
        let mut raw: libc::c_int = 0;
        // SAFETY: waitpid(2) on our own child, writing its status to a local.
        let got = unsafe { libc::waitpid(self.pid as libc::pid_t, &mut raw, options) };
        match got {
            0 => Ok(None),
            n if n > 0 => {
                let status = ExitStatus::from_raw(raw);
                self.status = Some(status);
                Ok(Some(status))
            }
            _ => {
                let e = io::Error::last_os_error();
                if e.kind() == io::ErrorKind::Interrupted {
                    Ok(None)
                } else {
                    Err(e)
                }
            }
        }
    }
}

/// Whether this kernel lets [`spawn`] place a child in a cgroup at birth
/// (`CLONE_INTO_CGROUP`, Linux 5.7) and this architecture can start one on its own stack.
/// Probed once, with a `clone3` that the kernel refuses before it makes a process.
pub fn into_cgroup_supported() -> bool {
    static SUPPORTED: OnceLock<bool> = OnceLock::new();
    *SUPPORTED.get_or_init(|| {
        if !cfg!(any(target_arch = "x86_64", target_arch = "aarch64")) {
            return false;
        }
        let mut args = CloneArgs::zeroed();
        // A descriptor number no process can have open (above any `nr_open`): a kernel
        // that knows the flag fails on the descriptor (EBADF); one that does not fails on
        // the flag or the size (EINVAL, E2BIG); a filter answers ENOSYS or EPERM. With
        // CLONE_VM and no stack, nothing would be copied on the way to the failure.
        args.flags = (libc::CLONE_VM as u64) | CLONE_INTO_CGROUP;
        args.cgroup = i32::MAX as u64;
        // SAFETY: clone3(2) with arguments the kernel rejects before it creates a task;
        // the struct lives on this frame for the call.
        let ret = unsafe {
            libc::syscall(
                libc::SYS_clone3,
                &raw mut args,
                std::mem::size_of::<CloneArgs>(),
            )
        };
        ret < 0 && io::Error::last_os_error().raw_os_error() == Some(libc::EBADF)
    })
}

/// Start `launch`: see the module docs. The returned child has exec'd (or the call fails
/// with the errno that stopped it, the child already reaped).
pub fn spawn(launch: &Launch) -> io::Result<Child> {
    if !into_cgroup_supported() {
        return Err(io::Error::from_raw_os_error(libc::ENOSYS));
    }
    let argv: Vec<*const libc::c_char> = launch
        .argv
        .iter()
        .map(|a| a.as_ptr())
        .chain(std::iter::once(std::ptr::null()))
        .collect();
    let envp: Vec<*const libc::c_char> = launch
        .envp
        .iter()
        .map(|e| e.as_ptr())
        .chain(std::iter::once(std::ptr::null()))
        .collect();
    let raw = |fd: &Option<OwnedFd>| fd.as_ref().map_or(-1, AsRawFd::as_raw_fd);
    let mut start = ChildStart {
        path: launch.path.as_ptr(),
        argv: argv.as_ptr(),
        envp: envp.as_ptr(),
        cwd: launch.cwd.as_ptr(),
        stdio: [
            raw(&launch.stdio[0]),
            raw(&launch.stdio[1]),
            raw(&launch.stdio[2]),
        ],
        process_group: launch.process_group.unwrap_or(-1),
        death_signal: launch.death_signal.map_or(0, |s| s.as_raw()),
        parent: std::process::id() as libc::pid_t,
        joins: launch.joins,
        joined: launch.joined,
        mount_namespace: launch.mount_namespace.unwrap_or(-1),
        confinement: launch
            .confinement
            .as_ref()
            .map_or(std::ptr::null(), std::ptr::from_ref),
        redirects: launch
            .redirects
            .as_deref()
            .map_or(std::ptr::null(), std::ptr::from_ref),
        last_signal: libc::SIGRTMAX(),
        in_user_namespace: launch.born_in.is_some(),
        nice: launch.nice,
        rlimits: launch.rlimits,
        controlling_terminal: launch.controlling_terminal,
        errno: 0,
    };
    let stack = crate::clone_stack::Stack::new()?;
    let mut pidfd: RawFd = -1;
    let mut args = CloneArgs::zeroed();
    args.flags = (libc::CLONE_VM | libc::CLONE_VFORK | libc::CLONE_PIDFD) as u64;
    args.pidfd = (&raw mut pidfd) as u64;
    args.exit_signal = libc::SIGCHLD as u64;
    args.stack = stack.base() as u64;
    args.stack_size = crate::clone_stack::STACK_SIZE as u64;
    if let Some(group) = launch.cgroup {
        args.flags |= CLONE_INTO_CGROUP;
        args.cgroup = group as u64;
    }
    let all = crate::clone_stack::Signals::block_all();
    let ret = match launch.born_in {
        // SAFETY: `child_main` runs on `stack`, a mapping of its own that outlives it
        // (CLONE_VFORK: this returns only once the child has exec'd or exited). It shares
        // corral's memory but writes only to its stack, to `start.errno` and, through the
        // C library's errno, to this thread's thread-local storage, while this thread is
        // suspended. Every signal is blocked first, so no handler of corral's can run in
        // the child, which sets every disposition back to the default before it
        // unblocks; this thread's mask is restored below. `start`, `args` and what they
        // point to live on this frame.
        None => unsafe { clone3_run(&mut args, child_main, (&raw mut start).cast()) },
        Some(init) => {
            // A clone3 with CLONE_PARENT takes its parent's exit signal, and must name none.
            args.flags |= libc::CLONE_PARENT as u64;
            args.exit_signal = 0;
            let mut stage = StageClone {
                args: &raw mut args,
                start: &raw mut start,
            };
            // SAFETY: the same clone, made by a helper that joined the init's user and PID
            // namespaces (see `joined`) and waits for it (CLONE_VFORK) before it exits;
            // `CLONE_PARENT` makes the child this process's. `stage` and what it points
            // to live on this frame through the call.
            match unsafe {
                crate::joined::clone_from_inside(
                    init,
                    libc::CLONE_NEWUSER | libc::CLONE_NEWPID,
                    clone_stage,
                    (&raw mut stage).cast(),
                )
            } {
                Ok(pid) => libc::c_long::from(pid),
                Err(e) => -libc::c_long::from(e.raw_os_error().unwrap_or(libc::EPERM)),
            }
        }
    };
    drop(all);
    drop(stack);
    if ret < 0 {
        return Err(io::Error::from_raw_os_error(-ret as i32));
    }
    let pid = ret as u32;
    // SAFETY: CLONE_PIDFD stored a new descriptor, owned by nobody else, in `pidfd`.
    let pidfd = unsafe { OwnedFd::from_raw_fd(pidfd) };
    // SAFETY: read after the child exec'd or exited; the volatile read keeps the compiler
    // from assuming the value it stored before the clone.
    let errno = unsafe { std::ptr::read_volatile(&raw const start.errno) };
    let mut child = Child {
        pid,
        pidfd,
        status: None,
    };
    if errno != 0 {
        let _ = child.wait();
        return Err(io::Error::from_raw_os_error(errno));
    }
    Ok(child)
}

const CLONE_INTO_CGROUP: u64 = 0x2_0000_0000;

/// What [`clone_stage`] clones, from inside an init's namespaces.
#[repr(C)]
struct StageClone {
    args: *mut CloneArgs,
    start: *mut ChildStart,
}

/// A stage's clone, made by the helper inside an init's namespaces: its pid or a
/// negated errno, once the stage has exec'd or exited (CLONE_VFORK).
unsafe extern "C" fn clone_stage(arg: *mut libc::c_void) -> libc::c_long {
    // SAFETY: `arg` is the `StageClone` on the frame of `spawn`, whose clone it names.
    unsafe {
        let stage = &*arg.cast::<StageClone>();
        clone3_run(&mut *stage.args, child_main, stage.start.cast())
    }
}

/// `struct clone_args` up to its `cgroup` field (`CLONE_ARGS_SIZE_VER2`).
#[repr(C)]
#[derive(Debug)]
struct CloneArgs {
    flags: u64,
    pidfd: u64,
    child_tid: u64,
    parent_tid: u64,
    exit_signal: u64,
    stack: u64,
    stack_size: u64,
    tls: u64,
    set_tid: u64,
    set_tid_size: u64,
    cgroup: u64,
}

impl CloneArgs {
    fn zeroed() -> Self {
        Self {
            flags: 0,
            pidfd: 0,
            child_tid: 0,
            parent_tid: 0,
            exit_signal: 0,
            stack: 0,
            stack_size: 0,
            tls: 0,
            set_tid: 0,
            set_tid_size: 0,
            cgroup: 0,
        }
    }
}

/// What `child_main` needs, made before the clone.
#[repr(C)]
struct ChildStart {
    path: *const libc::c_char,
    argv: *const *const libc::c_char,
    envp: *const *const libc::c_char,
    cwd: *const libc::c_char,
    stdio: [RawFd; 3],
    process_group: libc::pid_t,
    death_signal: libc::c_int,
    parent: libc::pid_t,
    joins: [RawFd; MAX_JOINS],
    joined: usize,
    mount_namespace: RawFd,
    /// Null, or the confinement in the caller's `Launch`, alive while the parent waits.
    confinement: *const crate::sandbox::Confinement,
    /// Null, or the redirects in the caller's `Launch`, alive while the parent waits.
    redirects: *const crate::box_redirects::Redirects,
    last_signal: libc::c_int,
    /// Born in the boxes' user namespace already: the confinement does not join it.
    in_user_namespace: bool,
    controlling_terminal: bool,
    nice: u8,
    rlimits: crate::rlimits::Rlimits,
    /// Written by the child when a step fails; 0 means it exec'd.
    errno: libc::c_int,
}

/// `clone3(args)`; the child calls `f(arg)` on the stack `args` names and exits with what
/// it returns. Returns the child's pid, or a negated errno.
///
/// # Safety
///
/// `args` must name a stack the child may use until it execs or exits, and (with
/// CLONE_VM) `f` may touch only memory that stays valid while the parent waits.
#[cfg(target_arch = "x86_64")]
unsafe fn clone3_run(
    args: &mut CloneArgs,
    f: extern "C" fn(*mut libc::c_void) -> libc::c_int,
    arg: *mut libc::c_void,
) -> libc::c_long {
    let ret: libc::c_long;
    // SAFETY: the syscall returns twice. The parent (rax != 0) leaves at once with the
    // registers the constraints name. The child (rax == 0) runs on its new stack, 16-byte
    // aligned at its top, calls `f(arg)` (kept in r12 and r13, which the syscall
    // preserves) and exits with its result; it never returns into the compiled code.
    unsafe {
        std::arch::asm!(
            "syscall",
            "test rax, rax",
            "jnz 2f",
            "mov rdi, r13",
            "call r12",
            "mov edi, eax",
            "mov eax, 60",
            "syscall",
            "ud2",
            "2:",
            inlateout("rax") libc::SYS_clone3 => ret,
            in("rdi") std::ptr::from_mut(args),
            in("rsi") std::mem::size_of::<CloneArgs>(),
            in("r12") f,
            in("r13") arg,
            lateout("rcx") _,
            lateout("r11") _,
            options(nostack),
        );
    }
    ret
}

/// As on x86-64: `svc 0` returns twice; the child calls `f(arg)` from x20 and x21 (x19
/// is LLVM's own and cannot be an operand).
#[cfg(target_arch = "aarch64")]
unsafe fn clone3_run(
    args: &mut CloneArgs,
    f: extern "C" fn(*mut libc::c_void) -> libc::c_int,
    arg: *mut libc::c_void,
) -> libc::c_long {
    let ret: libc::c_long;
    // SAFETY: as for x86-64: the child (x0 == 0) runs on its own stack, calls `f(arg)`
    // from callee-saved registers the syscall preserves and exits; it never returns.
    unsafe {
        std::arch::asm!(
            "svc 0",
            "cbnz x0, 2f",
            "mov x0, x21",
            "blr x20",
            "mov x8, 93",
            "svc 0",
            "brk 0",
            "2:",
            inlateout("x0") std::ptr::from_mut(args) => ret,
            in("x1") std::mem::size_of::<CloneArgs>(),
            in("x8") libc::SYS_clone3,
            in("x20") f,
            in("x21") arg,
            lateout("x30") _,
            options(nostack),
        );
    }
    ret
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
unsafe fn clone3_run(
    _args: &mut CloneArgs,
    _f: extern "C" fn(*mut libc::c_void) -> libc::c_int,
    _arg: *mut libc::c_void,
) -> libc::c_long {
    -(libc::ENOSYS as libc::c_long)
}

/// The child until its exec: see the module docs. Runs on its own stack in corral's
/// memory while the parent thread waits; only raw system calls on what `start` holds.
extern "C" fn child_main(arg: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `arg` is the `ChildStart` on the frame of `spawn`, alive while that frame
    // waits for this child; the child is its only writer meanwhile.
    let start = unsafe { &mut *arg.cast::<ChildStart>() };
    // SAFETY: raw system calls on descriptor numbers and NUL-terminated strings made
    // before the clone, and the confinement's, which are raw system calls on what it built
    // before the clone (it allocates, locks and logs nothing, and its errors are errnos);
    // errno is read right after the call that set it.
    unsafe {
        let fail = |start: &mut ChildStart| -> libc::c_int {
            std::ptr::write_volatile(&raw mut start.errno, *libc::__errno_location());
            libc::_exit(127)
        };
        // Standard descriptors: one that sits below 3 where another goes is moved up
        // first, so no dup2 overwrites a source still to be used.
        let mut fds = start.stdio;
        for fd in &mut fds {
            if (0..3).contains(fd) {
                *fd = libc::fcntl(*fd, libc::F_DUPFD_CLOEXEC, 3);
                if *fd < 0 {
                    return fail(start);
                }
            }
        }
        for (target, fd) in fds.iter().enumerate() {
            if *fd >= 0 && libc::dup2(*fd, target as libc::c_int) < 0 {
                return fail(start);
            }
        }
        if start.controlling_terminal
            && (libc::setsid() < 0 || libc::ioctl(0, libc::TIOCSCTTY, 0) != 0)
        {
            return fail(start);
        }
        if start.process_group >= 0 && libc::setpgid(0, start.process_group) != 0 {
            return fail(start);
        }
        if start.death_signal != 0 {
            if libc::prctl(libc::PR_SET_PDEATHSIG, start.death_signal as libc::c_ulong) != 0 {
                return fail(start);
            }
            // The parent may have died already: then no signal will come. (A parent
            // outside the child's PID namespace reads as 0.)
            let now = libc::getppid();
            if now != 0 && now != start.parent {
                *libc::__errno_location() = libc::ESRCH;
                return fail(start);
            }
        }
        if start.nice > 0 && crate::priority::lower(start.nice).is_err() {
            return fail(start);
        }
        if start.rlimits.apply().is_err() {
            return fail(start);
        }
        for fd in &start.joins[..start.joined] {
            if libc::write(*fd, c"0".as_ptr().cast(), 1) != 1 {
                return fail(start);
            }
        }
        if start.mount_namespace >= 0 && libc::setns(start.mount_namespace, libc::CLONE_NEWNS) != 0
        {
            return fail(start);
        }
        if libc::chdir(start.cwd) != 0 {
            return fail(start);
        }
        let redirects = start.redirects.as_ref();
        let confined = match start.confinement.as_ref() {
            Some(confinement) => confinement.apply_in_child(redirects, start.in_user_namespace),
            None => redirects.map_or(Ok(()), |r| r.apply()),
        };
        if let Err(e) = confined {
            *libc::__errno_location() = e.raw_os_error().unwrap_or(libc::EPERM);
            return fail(start);
        }
        crate::signals::reset(start.last_signal);
        libc::execve(start.path, start.argv, start.envp);
        fail(start)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    #[test]
    fn a_child_runs_with_its_descriptors_directory_and_environment() {
        if !into_cgroup_supported() {
            eprintln!("skipped: no CLONE_INTO_CGROUP here");
            return;
        }
        let (mut r, w) = std::io::pipe().unwrap();
        let dir = std::env::temp_dir();
        let mut launch = Launch::new(
            std::path::Path::new("/bin/sh"),
            ["sh", "-c", "echo \"$X $(pwd)\"; exit 3"],
            ["X=x"],
            &dir,
        )
        .unwrap();
        launch.stdio[1] = Some(w.into());
        let mut child = spawn(&launch).unwrap();
        drop(launch);
        let mut out = String::new();
        r.read_to_string(&mut out).unwrap();
        assert_eq!(
            out,
            format!("x {}\n", dir.canonicalize().unwrap().display())
        );
        assert_eq!(child.wait().unwrap().code(), Some(3));
    }

    #[test]
    fn a_missing_program_fails_the_spawn_with_its_errno() {
        if !into_cgroup_supported() {
            eprintln!("skipped: no CLONE_INTO_CGROUP here");
            return;
        }
        let launch = Launch::new(
            std::path::Path::new("/nonexistent/program"),
            ["program"],
            Vec::<Vec<u8>>::new(),
            std::path::Path::new("/"),
        )
        .unwrap();
        let e = spawn(&launch).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
    }
}
