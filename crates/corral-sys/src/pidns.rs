//! A PID namespace per call, shown to its commands by a `/proc` of its own.
//!
//! When the first process of a PID namespace (its *init*) exits, the kernel kills every
//! other process in the namespace with SIGKILL, whatever session, group or cgroup it moved
//! to. That is the one ending nothing can step out of, and this module builds a namespace
//! around a call for it:
//!
//! - [`PidNamespace::new`] forks a copy of corral as the init of a new PID and mount
//!   namespace (`clone(CLONE_NEWPID | CLONE_NEWNS)`). The copy runs only raw system calls:
//!   it closes every descriptor it inherited, makes its mounts receive the host's but not
//!   send its own (`MS_SLAVE`), mounts a fresh `/proc` for the namespace (so what a command
//!   reads there agrees with `getpid()`), ignores SIGCHLD (so the kernel reaps the orphans
//!   it inherits), reports that it is ready, and blocks reading a pipe whose write end only
//!   corral holds. Corral's dropping the namespace, or dying, closes that pipe; the init
//!   exits and takes everything in the namespace with it.
//! - [`PidNamespace::spawn`] starts a command in the namespace without making it the init's
//!   child: the calling thread switches the namespace its children are born in
//!   (`setns(CLONE_NEWPID)` changes only that thread's `pid_for_children`), spawns, and
//!   switches back. The command stays corral's child, waited on and signalled as any other.
//! - [`enter_mounts_before_exec`] has the child join the init's mount namespace (and
//!   return to its working directory, which `setns` resets) before exec.
//!
//! It needs `CAP_SYS_ADMIN` (root) and Linux 5.9 (`setns` on a pidfd, `close_range`).

use std::ffi::CString;
use std::io::{self, Read};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command};
use std::sync::{Arc, Mutex, OnceLock};

use rustix::event::{PollFd, PollFlags, Timespec, poll};
use rustix::pipe::{PipeFlags, pipe_with};
use rustix::process::{Pid, Signal, WaitOptions};

/// A PID namespace (and the mount namespace its `/proc` lives in), held open by its init.
#[derive(Debug)]
pub struct PidNamespace {
    /// The init's pid, as corral sees it.
    init: u32,
    /// The namespace's inode, which `/proc/PID/ns/pid` of every process in it names.
    ns: u64,
    /// Names the init for as long as it is open; `setns` takes it to enter the namespaces.
    pidfd: Arc<OwnedFd>,
    /// The write end of the init's lifeline: closing it ends the init.
    lifeline: Option<OwnedFd>,
}

impl PidNamespace {
    /// Make a namespace and its init. Fails without `CAP_SYS_ADMIN`, where `/proc` cannot
    /// be mounted, or on kernels older than 5.9.
    pub fn new() -> io::Result<Self> {
        reap_pending();
        let (life_r, life_w) = pipe_with(PipeFlags::CLOEXEC)?;
        let (mut status_r, status_w) = {
            let (r, w) = pipe_with(PipeFlags::CLOEXEC)?;
            (std::fs::File::from(r), w)
        };
        let (life_fd, status_fd) = (life_r.as_raw_fd(), status_w.as_raw_fd());
        let args = argument_area();
        let flags = (libc::CLONE_NEWPID | libc::CLONE_NEWNS | libc::SIGCHLD) as libc::c_ulong;
        // SAFETY: a raw clone(2) without CLONE_VM and without a new stack behaves as
        // fork(2): the child gets a copy of this address space with only the calling
        // thread. The child runs `init_main`, which makes only raw system calls on values
        // computed before the clone, never returns, and neither allocates nor locks, so
        // no lock another thread held at the clone is ever waited on.
        let ret = unsafe { libc::syscall(libc::SYS_clone, flags, 0usize, 0usize, 0usize, 0usize) };
        if ret == 0 {
            // SAFETY: this is the child of the clone above (see there).
            unsafe { init_main(life_fd, status_fd, args) }
        }
        if ret < 0 {
            return Err(io::Error::last_os_error());
        }
        let init = ret as u32;
        drop((life_r, status_w));
        let mut status = [0u8; 4];
        let ready = status_r.read_exact(&mut status);
        let errno = i32::from_ne_bytes(status);
        if ready.is_err() || errno != 0 {
            // The init has exited (or is about to): collect it before reporting.
            wait_blocking(init);
            return Err(match ready {
                Err(e) => e,
                Ok(()) => io::Error::from_raw_os_error(errno),
            });
        }
        let pidfd = match crate::pidfd::open(init) {
            Ok(fd) => fd,
            Err(e) => {
                drop(life_w);
                wait_blocking(init);
                return Err(e);
            }
        };
        let ns = namespace_of(init);
        let ns = match ns {
            Some(ns) => ns,
            None => {
                drop(life_w);
                wait_blocking(init);
                return Err(io::Error::other("the namespace's init vanished"));
            }
        };
        Ok(Self {
            init,
            ns,
            pidfd: Arc::new(pidfd),
            lifeline: Some(life_w),
        })
    }

    /// Start `cmd` inside the namespace, as a child of the calling thread. Give `cmd`
    /// [`enter_mounts_before_exec`] first, so its `/proc` is the namespace's.
    pub fn spawn(&self, cmd: &mut Command) -> io::Result<Child> {
        let home = own_process()?;
        setns(self.pidfd.as_raw_fd(), libc::CLONE_NEWPID)?;
        let spawned = cmd.spawn();
        // Returning to this thread's own active namespace is always allowed to a thread
        // that could enter one of its children a moment ago.
        if let Err(back) = setns(home.as_raw_fd(), libc::CLONE_NEWPID) {
            if let Ok(mut child) = spawned {
                let _ = child.kill();
                let _ = child.wait();
            }
            return Err(back);
        }
        spawned
    }

    /// The init, for [`enter_mounts_before_exec`].
    pub fn init(&self) -> Arc<OwnedFd> {
        Arc::clone(&self.pidfd)
    }

    /// End the init, and with it everything in the namespace. `false` if it had already
    /// exited.
    pub fn kill(&self) -> bool {
        rustix::process::pidfd_send_signal(&*self.pidfd, Signal::KILL).is_ok()
    }

    /// What the init has adopted and their descendants: processes in the namespace
    /// whose parent exited. Zombies included, for a moment, until the init's kernel
    /// reaping collects them.
    pub fn orphans(&self) -> Vec<u32> {
        crate::reaper::descendants(self.init)
    }

    /// Send `signal` to each of [`Self::orphans`] that is still in the namespace; `true`
    /// if any was. A pid alone could have been reused by the time it is signalled (the
    /// init reaps at once): each is pinned with a pidfd first, then checked to be in
    /// this namespace while that pidfd shows it alive.
    pub fn signal_orphans(&self, signal: Signal) -> bool {
        let mut any = false;
        for pid in self.orphans() {
            let Ok(fd) = crate::pidfd::open(pid) else {
                continue;
            };
            let inside = namespace_of(pid) == Some(self.ns);
            // Still alive after the check, so the /proc entry read was this process's.
            if inside && !exited(&fd) {
                any |= rustix::process::pidfd_send_signal(&fd, signal).is_ok();
            }
        }
        any
    }

    /// Whether the init is still running (a namespace whose init exited takes no more
    /// processes).
    pub fn is_alive(&self) -> bool {
        !exited(&self.pidfd)
    }
}

impl Drop for PidNamespace {
    fn drop(&mut self) {
        self.kill();
        self.lifeline = None;
        // The init exits once every process in the namespace is gone, zombies corral has
        // not yet waited on included, and the kernel takes a moment to tear the namespace
        // down: collect it now if it is gone, or when the next namespace is made.
        if !reap(self.init) {
            pending()
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(self.init);
        }
    }
}

/// In the child `cmd` spawns (inside `init`'s PID namespace): join `init`'s mount
/// namespace, where `/proc` shows that PID namespace, then return to the working
/// directory `cmd` was given (`setns` resets it to the namespace's root).
///
/// A working directory with a NUL byte cannot be entered; the spawn fails on it anyway.
pub fn enter_mounts_before_exec(cmd: &mut Command, init: Arc<OwnedFd>) {
    let cwd = cmd
        .get_current_dir()
        .and_then(|dir| CString::new(dir.as_os_str().as_encoded_bytes()).ok());
    let hook = move || -> io::Result<()> {
        // Raw setns(2) and chdir(2) on a descriptor and a string made before the fork;
        // errors are built from an errno without allocating.
        setns(init.as_raw_fd(), libc::CLONE_NEWNS)?;
        if let Some(cwd) = &cwd {
            // SAFETY: a NUL-terminated string owned by the closure, alive for the call.
            if unsafe { libc::chdir(cwd.as_ptr()) } != 0 {
                return Err(io::Error::last_os_error());
            }
        }
        Ok(())
    };
    // SAFETY: the hook runs in the forked child before exec. It makes two raw system
    // calls on values the closure owns (an open descriptor kept alive by its Arc, which is
    // not dropped in the child, and a CString allocated before the fork), and neither
    // allocates, locks nor logs.
    unsafe {
        cmd.pre_exec(hook);
    }
}

/// Whether this host lets corral make a namespace and move a thread in and out of it.
pub fn probe() -> io::Result<()> {
    let ns = PidNamespace::new()?;
    let home = own_process()?;
    setns(ns.pidfd.as_raw_fd(), libc::CLONE_NEWPID)?;
    setns(home.as_raw_fd(), libc::CLONE_NEWPID)
}

/// The init of a new PID namespace: hold it open until the lifeline closes.
///
/// # Safety
///
/// Only in the child of the clone in [`PidNamespace::new`], with `args` as
/// [`argument_area`] read it before the clone.
unsafe fn init_main(lifeline: RawFd, status: RawFd, args: Option<(usize, usize)>) -> ! {
    // Its command line reads `corral-init`, not a copy of corral's (which `ps` and
    // `pgrep` would count as a second corral).
    if let Some((start, len)) = args {
        let title = b"corral-init";
        // SAFETY: the argument area of this process's own copy of corral's memory, as
        // the kernel reported it: mapped, writable (the top of the main stack), `len`
        // bytes long. Plain stores; nothing is allocated.
        unsafe {
            std::ptr::write_bytes(start as *mut u8, 0, len);
            std::ptr::copy_nonoverlapping(
                title.as_ptr(),
                start as *mut u8,
                title.len().min(len - 1),
            );
        }
    }
    // Everything but the two pipe ends goes: the init must not keep another call's pipe
    // open, nor corral's stdio.
    let (low, high) = (lifeline.min(status) as u32, lifeline.max(status) as u32);
    let ranges = [
        (0, low.checked_sub(1)),
        (low + 1, high.checked_sub(1)),
        (high + 1, Some(u32::MAX)),
    ];
    for (first, last) in ranges {
        if let Some(last) = last.filter(|last| *last >= first) {
            // SAFETY: close_range(2) on numbers; no memory is touched.
            unsafe { libc::syscall(libc::SYS_close_range, first, last, 0u32) };
        }
    }
    let fail = |status: RawFd| -> ! {
        // SAFETY: errno is a thread-local int; write(2) of a stack buffer; _exit(2).
        unsafe {
            let errno = (*libc::__errno_location()).to_ne_bytes();
            libc::write(status, errno.as_ptr().cast(), errno.len());
            libc::_exit(1)
        }
    };
    // SAFETY: prctl(2), mount(2), signal(2) and chdir(2) with static NUL-terminated
    // strings.
    unsafe {
        // What `ps` in the namespace shows for pid 1.
        libc::prctl(libc::PR_SET_NAME, c"corral-init".as_ptr());
        let none = std::ptr::null();
        if libc::mount(
            none,
            c"/".as_ptr(),
            none,
            libc::MS_REC | libc::MS_SLAVE,
            none.cast(),
        ) != 0
        {
            fail(status);
        }
        let flags = libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
        if libc::mount(
            c"proc".as_ptr(),
            c"/proc".as_ptr(),
            c"proc".as_ptr(),
            flags,
            none.cast(),
        ) != 0
        {
            fail(status);
        }
        libc::signal(libc::SIGCHLD, libc::SIG_IGN);
        libc::chdir(c"/".as_ptr());
    }
    let ready = 0i32.to_ne_bytes();
    // SAFETY: write(2) of a stack buffer, close(2) of our own descriptor.
    unsafe {
        libc::write(status, ready.as_ptr().cast(), ready.len());
        libc::close(status);
    }
    let mut byte = 0u8;
    loop {
        // SAFETY: read(2) into a stack byte.
        let n = unsafe { libc::read(lifeline, (&raw mut byte).cast(), 1) };
        // SAFETY: errno is a thread-local int.
        if n == 0 || (n < 0 && unsafe { *libc::__errno_location() } != libc::EINTR) {
            // SAFETY: _exit(2) ends the process without running anything else.
            unsafe { libc::_exit(0) }
        }
    }
}

/// Where this process's command line lives, `(start, length)`: fields 48 and 49 of
/// `/proc/self/stat`. Read once.
fn argument_area() -> Option<(usize, usize)> {
    static AREA: OnceLock<Option<(usize, usize)>> = OnceLock::new();
    *AREA.get_or_init(|| {
        let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
        // Field 3 follows the command name's closing parenthesis; field N is at N - 3.
        let fields: Vec<&str> = stat[stat.rfind(')')? + 1..].split_whitespace().collect();
        let start: usize = fields.get(45)?.parse().ok()?;
        let end: usize = fields.get(46)?.parse().ok()?;
        (end > start).then_some((start, end - start))
    })
}

/// Whether the process `pidfd` names has exited (its pidfd reads as ready).
fn exited(pidfd: &OwnedFd) -> bool {
    let mut fds = [PollFd::new(pidfd, PollFlags::IN)];
    let zero = Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    !matches!(poll(&mut fds, Some(&zero)), Ok(0))
}

/// The inode of process `pid`'s PID namespace.
fn namespace_of(pid: u32) -> Option<u64> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(format!("/proc/{pid}/ns/pid"))
        .ok()
        .map(|m| m.ino())
}

/// `setns(2)` with a namespace type; no allocation, safe between fork and exec.
fn setns(fd: RawFd, nstype: libc::c_int) -> io::Result<()> {
    // SAFETY: setns(2) on a descriptor number; the kernel checks it.
    if unsafe { libc::setns(fd, nstype) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// A pidfd for corral itself, the way back to its own PID namespace.
fn own_process() -> io::Result<&'static OwnedFd> {
    static OWN: OnceLock<Result<OwnedFd, i32>> = OnceLock::new();
    OWN.get_or_init(|| {
        crate::pidfd::open(std::process::id()).map_err(|e| e.raw_os_error().unwrap_or(0))
    })
    .as_ref()
    .map_err(|errno| io::Error::from_raw_os_error(*errno))
}

/// Inits that had not exited when their namespace was dropped.
fn pending() -> &'static Mutex<Vec<u32>> {
    static PENDING: OnceLock<Mutex<Vec<u32>>> = OnceLock::new();
    PENDING.get_or_init(Mutex::default)
}

fn reap_pending() {
    pending()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .retain(|pid| !reap(*pid));
}

fn reap(pid: u32) -> bool {
    let Some(pid) = i32::try_from(pid).ok().and_then(Pid::from_raw) else {
        return true;
    };
    !matches!(
        rustix::process::waitpid(Some(pid), WaitOptions::NOHANG),
        Ok(None)
    )
}

fn wait_blocking(pid: u32) {
    if let Some(pid) = i32::try_from(pid).ok().and_then(Pid::from_raw) {
        let _ = rustix::process::waitpid(Some(pid), WaitOptions::empty());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root() -> bool {
        rustix::process::geteuid().is_root()
    }

    #[test]
    fn a_command_started_inside_sees_its_own_pids_and_proc() {
        if !root() || probe().is_err() {
            eprintln!("skipped: no PID namespaces for this process");
            return;
        }
        let ns = PidNamespace::new().unwrap();
        let mut cmd = Command::new("sh");
        cmd.args([
            "-c",
            "echo $$ $PPID; read -r s < /proc/self/stat; echo ${s%% *}",
        ])
        .stdout(std::process::Stdio::piped());
        enter_mounts_before_exec(&mut cmd, ns.init());
        let out = ns.spawn(&mut cmd).unwrap().wait_with_output().unwrap();
        let text = String::from_utf8(out.stdout).unwrap();
        // The init is 1; the command is the namespace's second process; its parent
        // (corral) is outside, so 0; /proc agrees with getpid().
        assert_eq!(text, "2 0\n2\n");
    }

    #[test]
    fn dropping_the_namespace_kills_what_left_everything_else() {
        if !root() || probe().is_err() {
            eprintln!("skipped: no PID namespaces for this process");
            return;
        }
        let ns = PidNamespace::new().unwrap();
        let mut cmd = Command::new("sh");
        // A daemon in a session of its own that outlives its parent.
        cmd.args(["-c", "setsid sleep 1000 >/dev/null &"])
            .stdout(std::process::Stdio::piped());
        let out = ns.spawn(&mut cmd).unwrap().wait_with_output().unwrap();
        assert!(out.status.success());
        let init = ns.init;
        let before = crate::reaper::processes()
            .iter()
            .filter(|p| p.ppid == init && !p.zombie)
            .count();
        assert!(before >= 1, "the orphan went to the namespace's init");
        drop(ns);
        // The kill is sent at once; the kernel delivers it a moment later.
        let live = || {
            crate::reaper::processes()
                .iter()
                .filter(|p| p.ppid == init && !p.zombie)
                .count()
        };
        let until = std::time::Instant::now() + std::time::Duration::from_secs(2);
        while live() > 0 && std::time::Instant::now() < until {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert_eq!(live(), 0);
    }
}
