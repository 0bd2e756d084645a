//! A PID namespace per call, shown to its commands by a `/proc` of its own.
//!
//! When the first process of a PID namespace (its *init*) exits, the kernel kills every
//! other process in the namespace with SIGKILL, whatever session, group or cgroup it moved
//! to. That is the one ending nothing can step out of, and this module builds a namespace
//! around a call for it:
//!
//! - [`PidNamespace::new`] starts the init: a `clone(CLONE_VM | CLONE_NEWPID)` child on a
//!   small stack of its own, which runs only raw system calls until it execs (see
//!   `init_start`). Before the exec it takes a mount namespace of its own, a copy of
//!   the template (`mount_template`: the host's mounts, receiving the host's but never
//!   sending its own, without the host's `/proc`; where no template can be made, it copies
//!   the host's and makes them so itself); mounts a fresh `/proc` for the namespace, so
//!   what a command reads there agrees with `getpid()` (in a container's user namespace
//!   the old one stays beneath it); ignores SIGCHLD, so the kernel reaps the orphans it
//!   inherits; and keeps only the lifeline (the read end of a pipe whose write end only
//!   corral holds) as its stdin. The program it execs, named
//!   `corral-init`, is corral's own few-dozen-byte static image on x86-64 (see
//!   `init_image`: no loader, no library to start) and the system's `cat` elsewhere or
//!   where the image cannot run: it reads its stdin until the lifeline closes, which
//!   happens when corral drops the namespace or dies, and then exits and takes everything
//!   in the namespace with it. Nothing of corral's memory stays behind in it. Dropping
//!   the namespace kills the init and reaps it, at once if it is gone or else on a thread
//!   that waits for it, so no exited init lingers until the next call.
//! - [`PidNamespace::begin_with`] returns as soon as the init is cloned, and
//!   [`Starting::ready`] once it has exec'd: a call starts its namespace first and takes
//!   it when it has a command to start, having done its own start meanwhile.
//! - [`PidNamespace::enter`] makes the calling thread's next children be born in the
//!   namespace (`setns(CLONE_NEWPID)` changes only that thread's `pid_for_children`) until
//!   the guard it returns is dropped. A command spawned meanwhile stays corral's child,
//!   waited on and signalled as any other.
//! - [`enter_mounts_before_exec`] has the child join the init's mount namespace (and
//!   return to its working directory, which `setns` resets) before exec.
//!
//! It needs `CAP_SYS_ADMIN` (root), Linux 5.9 (`setns` on a pidfd, `close_range`) and,
//! where corral's image cannot run, a `cat` in `/bin` or `/usr/bin`.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::process::CommandExt;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::Duration;

use rustix::process::Signal;

use crate::init_start::{Cloned, InitMounts, InitProgram, Report, STEP_EXEC, STEP_MOUNTS};
pub use crate::sandbox_mounts::SandboxMounts;

/// A PID namespace (and the mount namespace its `/proc` lives in), held open by its init.
#[derive(Debug)]
pub struct PidNamespace {
    /// The init's pid, as corral sees it.
    init: u32,
    /// The namespace's inode, which `/proc/PID/ns/pid` of every process in it names:
    /// read when first needed (a `/proc` lookup costs more than the rest of a start), while
    /// the init, corral's child, holds its pid (`None` once it has exited).
    ns: OnceLock<Option<u64>>,
    /// Names the init for as long as it is open; `setns` takes it to enter the namespaces.
    pidfd: Arc<OwnedFd>,
    /// The write end of the init's lifeline: closing it ends the init.
    lifeline: Option<OwnedFd>,
    /// The [`SandboxMounts`] its init copied, if it copied any.
    copied: Option<u64>,
    /// Made inside the boxes' user namespace (an ordinary user's): see
    /// [`Self::born_through_helper`].
    in_user_namespace: bool,
}

/// A namespace whose init is being started: [`PidNamespace::begin_with`] returns once it
/// is cloned, and [`Self::ready`] once it has exec'd, while the caller did other work.
/// Dropped unused, it is made ready and ended like any namespace.
#[derive(Debug)]
pub struct Starting(Begun);

#[derive(Debug)]
enum Begun {
    /// Made whole (no template to copy, no program to run, or the clone failed).
    Made(io::Result<PidNamespace>),
    /// Cloned: its report is still to be read.
    Cloned {
        init: Box<Cloned>,
        copied: Option<u64>,
    },
    /// Taken by [`Starting::ready`].
    Taken,
}

impl Starting {
    /// The namespace, once its init has exec'd; commands may be started in it.
    pub fn ready(mut self) -> io::Result<PidNamespace> {
        match std::mem::replace(&mut self.0, Begun::Taken) {
            Begun::Made(made) => made,
            Begun::Cloned { init, copied } => match PidNamespace::from_report(*init) {
                Ok(mut ns) => {
                    ns.copied = copied;
                    Ok(ns)
                }
                // The template could not be copied, or the program would not run: make it
                // again the way that finds out why and turns to the fallbacks (the host's
                // mounts, `cat`).
                Err(Failed::Mounts(_) | Failed::Exec(_)) => PidNamespace::made_with(None),
                Err(Failed::Other(e)) => Err(e),
            },
            Begun::Taken => Err(io::ErrorKind::NotFound.into()),
        }
    }
}

impl Drop for Starting {
    fn drop(&mut self) {
        if matches!(self.0, Begun::Cloned { .. }) {
            let begun = std::mem::replace(&mut self.0, Begun::Taken);
            drop(Self(begun).ready());
        }
    }
}

/// Set once the host refused to run corral's image: `cat` is the init from then on.
static IMAGE_REFUSED: AtomicBool = AtomicBool::new(false);

impl PidNamespace {
    /// Make a namespace and its init. Fails without `CAP_SYS_ADMIN`, where `/proc` cannot
    /// be mounted, on kernels older than 5.9, or without an init to run (corral's image, or
    /// a `cat`).
    pub fn new() -> io::Result<Self> {
        Self::new_with(None)
    }

    /// [`Self::new`], the init's mounts copied from `sandbox` where it still stands for
    /// the host's mounts (see [`SandboxMounts`]; [`Self::copied`] says whether it did).
    pub fn new_with(sandbox: Option<&SandboxMounts>) -> io::Result<Self> {
        Self::begin_with(sandbox).ready()
    }

    /// Start making a namespace as [`Self::new_with`] does, returning once its init is
    /// cloned: the init copies its mounts and execs on another core while the caller goes
    /// on, and [`Starting::ready`] waits for its exec.
    pub fn begin_with(sandbox: Option<&SandboxMounts>) -> Starting {
        reap_pending();
        let (Some(template), Ok(program)) = (crate::mount_template::current(), Self::program())
        else {
            return Starting(Begun::Made(Self::made_with(sandbox)));
        };
        let (from, copied) = copied_from(sandbox, &template);
        // The template (or the sandbox's mounts) need stay open only through the clone:
        // the child has its own copy of the descriptor table from then on.
        match Cloned::start(program, InitMounts::Copy(from.as_raw_fd())) {
            Ok(init) => Starting(Begun::Cloned {
                init: Box::new(init),
                copied,
            }),
            Err(e) => Starting(Begun::Made(Err(e))),
        }
    }

    /// The program an init execs: corral's image unless the host refused it, else `cat`.
    fn program() -> io::Result<InitProgram> {
        if !IMAGE_REFUSED.load(Ordering::Relaxed)
            && let Some(image) = crate::init_image::descriptor()
        {
            return Ok(InitProgram::Image(image));
        }
        let cat = init_program()?;
        Ok(InitProgram::Path {
            path: &cat.path,
            name: &cat.name,
        })
    }

    /// A namespace made whole, each init's exec waited for: from the template where
    /// there is one, else from the host's mounts.
    fn made_with(sandbox: Option<&SandboxMounts>) -> io::Result<Self> {
        // The mounts are copied from the template where there is one (see
        // `mount_template`); an init that cannot join or copy it stops its use.
        if let Some(template) = crate::mount_template::current() {
            let (from, copied) = copied_from(sandbox, &template);
            match Self::with_init(InitMounts::Copy(from.as_raw_fd())) {
                Err(Failed::Mounts(_)) => crate::mount_template::refuse(),
                made => {
                    return made
                        .map(|mut ns| {
                            ns.copied = copied;
                            ns
                        })
                        .map_err(Failed::into_io);
                }
            }
        }
        // Mounts a user namespace inherits are locked to it: the host's `/proc` stays.
        let detach_host_proc =
            crate::mount_template::initial_user_namespace() && crate::userns::inside().is_none();
        Self::with_init(InitMounts::FromHost { detach_host_proc }).map_err(Failed::into_io)
    }

    /// The [`SandboxMounts::id`] of the mounts its init copied, if it copied a sandbox's.
    pub fn copied(&self) -> Option<u64> {
        self.copied
    }

    /// Make the namespace with corral's own init image where it can be run (see
    /// `init_image`), else `cat`; an image the host refuses to run is not tried again.
    fn with_init(mounts: InitMounts) -> Result<Self, Failed> {
        let program = Self::program()?;
        match Self::start(program, mounts) {
            Err(Failed::Exec(e))
                if matches!(program, InitProgram::Image(_))
                    && matches!(
                        e.raw_os_error(),
                        Some(libc::EACCES | libc::ENOEXEC | libc::EPERM)
                    ) =>
            {
                IMAGE_REFUSED.store(true, Ordering::Relaxed);
                Self::start(Self::program()?, mounts)
            }
            made => made,
        }
    }

    /// Make the namespace with an init that execs `program`, waiting for the exec.
    fn start(program: InitProgram, mounts: InitMounts) -> Result<Self, Failed> {
        Self::from_report(Cloned::start(program, mounts)?)
    }

    /// The namespace `init` starts, once it has exec'd.
    fn from_report(init: Cloned) -> Result<Self, Failed> {
        let (pid, lifeline, report) = init.report();
        if let Report::Failed {
            step,
            error,
            reaped,
        } = report
        {
            drop(lifeline);
            if !reaped {
                crate::reaper::wait_for(pid);
            }
            return Err(Failed::at(step, error));
        }
        // From here a failure must end the init (closing the lifeline) before waiting.
        let opened = crate::pidfd::open(pid).and_then(|pidfd| {
            if exited(&pidfd) {
                return Err(io::Error::other("the namespace's init exited at once"));
            }
            Ok(pidfd)
        });
        let pidfd = match opened {
            Ok(opened) => opened,
            Err(e) => {
                drop(lifeline);
                crate::reaper::signal(pid, Signal::KILL);
                crate::reaper::wait_for(pid);
                return Err(Failed::Other(e));
            }
        };
        Ok(Self {
            init: pid,
            ns: OnceLock::new(),
            pidfd: Arc::new(pidfd),
            lifeline,
            copied: None,
            in_user_namespace: crate::userns::inside().is_some(),
        })
    }

    /// Until the returned guard is dropped, the calling thread's children are born in
    /// this namespace. Give what is spawned meanwhile [`enter_mounts_before_exec`] too, so
    /// its `/proc` is the namespace's.
    ///
    /// If the thread cannot return to its own namespace when the guard drops (the kernel
    /// always allows it to a thread that could enter), the process aborts: carrying on
    /// would start every later command of that thread in the wrong namespace.
    pub fn enter(&self) -> io::Result<Inside> {
        let home = own_process()?;
        setns(self.pidfd.as_raw_fd(), libc::CLONE_NEWPID)?;
        Ok(Inside {
            home,
            _thread: std::marker::PhantomData,
        })
    }

    /// Whether a command is started in it by being born there
    /// ([`crate::spawn::Launch::born_in`] with [`Self::init`]) rather than from a thread
    /// that [`Self::enter`]s it: so where it was made inside the boxes' user namespace (an
    /// ordinary user's), whose PID namespaces no thread of corral's may enter.
    pub fn born_through_helper(&self) -> bool {
        self.in_user_namespace
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
        // The init is one thread (corral's image, or `cat`): its main thread's children
        // are all of them.
        crate::reaper::with_descendants(crate::reaper::main_thread_children(self.init))
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
            let own = *self.ns.get_or_init(|| namespace_of(self.init));
            let inside = own.is_some() && namespace_of(pid) == own;
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
        // down: collect it now if it is gone, else as soon as it is, on a thread that
        // waits for it (so no exited init lingers between calls), or failing that when
        // the next namespace is made.
        if !crate::reaper::reap(self.init) && !reap_when_gone(self.init) {
            pending()
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(self.init);
        }
    }
}

/// Which step of a namespace's start failed.
#[derive(Debug)]
enum Failed {
    /// Joining or copying the template.
    Mounts(io::Error),
    /// The init's exec.
    Exec(io::Error),
    /// Anything else.
    Other(io::Error),
}

impl Failed {
    fn at(step: i32, e: io::Error) -> Self {
        match step {
            STEP_MOUNTS => Self::Mounts(e),
            STEP_EXEC => Self::Exec(e),
            _ => Self::Other(e),
        }
    }

    fn into_io(self) -> io::Error {
        match self {
            Self::Mounts(e) | Self::Exec(e) | Self::Other(e) => e,
        }
    }
}

impl From<io::Error> for Failed {
    fn from(e: io::Error) -> Self {
        Self::Other(e)
    }
}

/// The way to the thread that waits for ended inits: started on first use, and let go by
/// [`settle`] once it has nothing left to wait for.
static REAPER: Mutex<Option<std::sync::mpsc::Sender<u32>>> = Mutex::new(None);

/// Hand `init` to the thread that waits for ended inits, started if none is running;
/// `false` if that thread cannot be had.
fn reap_when_gone(init: u32) -> bool {
    let mut reaper = REAPER.lock().unwrap_or_else(|e| e.into_inner());
    if reaper.is_none() {
        let (tx, rx) = std::sync::mpsc::channel::<u32>();
        let started = std::thread::Builder::new()
            .name("corral-init-reaper".into())
            .spawn(move || {
                // Until `settle` lets go of the sender, and what was sent before is done.
                for pid in rx {
                    crate::reaper::wait_for(pid);
                    Ending::get().done();
                }
            });
        if started.is_err() {
            return false;
        }
        *reaper = Some(tx);
    }
    Ending::get().begin();
    let sent = reaper.as_ref().is_some_and(|tx| tx.send(init).is_ok());
    if !sent {
        Ending::get().done();
        *reaper = None;
    }
    sent
}

/// How many ended inits the reaper thread has yet to collect.
struct Ending {
    count: Mutex<usize>,
    collected: Condvar,
}

impl Ending {
    fn get() -> &'static Self {
        static ENDING: Ending = Ending {
            count: Mutex::new(0),
            collected: Condvar::new(),
        };
        &ENDING
    }

    fn begin(&self) {
        *self.count.lock().unwrap_or_else(|e| e.into_inner()) += 1;
    }

    /// Whether no ended init waits to be collected.
    fn none_left(&self) -> bool {
        *self.count.lock().unwrap_or_else(|e| e.into_inner()) == 0
    }

    fn done(&self) {
        let mut count = self.count.lock().unwrap_or_else(|e| e.into_inner());
        *count = count.saturating_sub(1);
        if *count == 0 {
            self.collected.notify_all();
        }
    }
}

/// Wait, at most `limit`, until every init an ended namespace left behind has been
/// collected; `true` when none is left. For a process about to exit: an init it had not
/// collected would outlive it as a zombie of whatever adopts it, and an init that is
/// not a subreaper may never collect it. Inits of namespaces still in use are not
/// waited for. With nothing left to collect, the thread that collects them ends too.
pub fn settle(limit: Duration) -> bool {
    let ending = Ending::get();
    let count = ending.count.lock().unwrap_or_else(|e| e.into_inner());
    let (count, _) = ending
        .collected
        .wait_timeout_while(count, limit, |n| *n > 0)
        .unwrap_or_else(|e| e.into_inner());
    let reaper_done = *count == 0;
    drop(count);
    if reaper_done {
        // Nothing left for the reaper thread: it ends now, beside what the caller does
        // next, rather than being woken to end when the process exits (a new one starts
        // if another init ends later).
        let mut reaper = REAPER.lock().unwrap_or_else(|e| e.into_inner());
        if Ending::get().none_left() {
            *reaper = None;
        }
    }
    reap_pending();
    reaper_done
        && pending()
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_empty()
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

/// Make now what a process's first namespace would make first: the mount template its
/// init copies and corral's init image. Neither holds a process: a namespace made next
/// starts at its clone. Harmless where namespaces cannot be made (the first one finds
/// out).
pub fn warm() {
    if crate::mount_template::current().is_some() {
        let _ = crate::init_image::descriptor();
    }
}

/// Whether this host lets corral make a namespace, start a command inside it that joins
/// its mounts, and move a thread in and out of it.
pub fn probe() -> io::Result<()> {
    let ns = PidNamespace::new()?;
    let mut cmd = Command::new(&*init_program()?.path.to_string_lossy());
    // corral's own helper: nothing of corral's environment (`LD_PRELOAD`, ...) reaches it.
    cmd.env_clear()
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    enter_mounts_before_exec(&mut cmd, ns.init());
    let status = {
        let _inside = ns.enter()?;
        cmd.spawn()
    }?
    .wait()?;
    if !status.success() {
        return Err(io::Error::other(format!(
            "a command in the namespace failed: {status}"
        )));
    }
    if !ns.is_alive() {
        return Err(io::Error::other("the namespace's init exited"));
    }
    Ok(())
}

/// The calling thread's children are born in a [`PidNamespace`] until this is dropped.
#[derive(Debug)]
pub struct Inside {
    home: &'static OwnedFd,
    /// The namespace a thread's children are born in is the thread's own: the guard must
    /// be dropped on the thread that made it.
    _thread: std::marker::PhantomData<*const ()>,
}

impl Drop for Inside {
    fn drop(&mut self) {
        if let Err(e) = setns(self.home.as_raw_fd(), libc::CLONE_NEWPID) {
            eprintln!("corral: cannot return a thread to its own PID namespace: {e}");
            std::process::abort();
        }
    }
}

/// The `cat` an init execs where corral's image cannot run, found once.
#[derive(Debug)]
struct Cat {
    path: CString,
    /// Its `argv[0]`: `corral-init`, or `cat` where `cat` is a multi-call binary that
    /// dispatches on its name (busybox, toybox, uutils).
    name: CString,
}

fn init_program() -> io::Result<&'static Cat> {
    static PROGRAM: OnceLock<Option<Cat>> = OnceLock::new();
    PROGRAM
        .get_or_init(|| {
            let path = ["/bin/cat", "/usr/bin/cat"]
                .into_iter()
                .map(std::path::Path::new)
                .find(|p| rustix::fs::access(*p, rustix::fs::Access::EXEC_OK).is_ok())?;
            // A multi-call binary (busybox, toybox, uutils) picks its tool by its name:
            // only a file that is `cat` itself may be called `corral-init`.
            let plain = std::fs::canonicalize(path)
                .ok()
                .is_some_and(|real| real.file_name().is_some_and(|n| n == "cat"));
            Some(Cat {
                path: CString::new(path.as_os_str().as_encoded_bytes()).ok()?,
                name: CString::new(if plain { "corral-init" } else { "cat" }).ok()?,
            })
        })
        .as_ref()
        .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "no cat in /bin or /usr/bin"))
}

/// The mounts an init copies: `sandbox`'s where they still stand for the host's (with
/// their id), else the template.
fn copied_from<'a>(
    sandbox: Option<&'a SandboxMounts>,
    template: &'a OwnedFd,
) -> (&'a OwnedFd, Option<u64>) {
    match sandbox.and_then(|s| Some((s.current()?, s.id()))) {
        Some((ns, id)) => (ns, Some(id)),
        None => (template, None),
    }
}

/// Whether the process `pidfd` names has exited (its pidfd reads as ready).
fn exited(pidfd: &OwnedFd) -> bool {
    crate::kernel_file::ready_now(pidfd, rustix::event::PollFlags::IN)
}

/// The inode of process `pid`'s PID namespace, which names the namespace as long as it
/// exists.
pub fn namespace_of(pid: u32) -> Option<u64> {
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
    static PENDING: Mutex<Vec<u32>> = Mutex::new(Vec::new());
    &PENDING
}

fn reap_pending() {
    pending()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .retain(|pid| !crate::reaper::reap(*pid));
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
        let child = {
            let _inside = ns.enter().unwrap();
            cmd.spawn().unwrap()
        };
        let out = child.wait_with_output().unwrap();
        let text = String::from_utf8(out.stdout).unwrap();
        // The init is 1; the command is the namespace's second process; its parent
        // (corral) is outside, so 0; /proc agrees with getpid().
        assert_eq!(text, "2 0\n2\n");
    }

    /// Run `script` with `sh -c` inside a new namespace, joined to its mounts; its stdout.
    fn inside(script: &str) -> String {
        let ns = PidNamespace::new().unwrap();
        let mut cmd = Command::new("sh");
        cmd.args(["-c", script])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null());
        enter_mounts_before_exec(&mut cmd, ns.init());
        let child = {
            let _inside = ns.enter().unwrap();
            cmd.spawn().unwrap()
        };
        String::from_utf8(child.wait_with_output().unwrap().stdout).unwrap()
    }

    #[test]
    fn unmounting_the_fresh_proc_shows_no_host_process() {
        if !root() || probe().is_err() || !crate::mount_template::initial_user_namespace() {
            eprintln!("skipped: no PID namespaces for this process, or a container's");
            return;
        }
        // Twice: the first namespace may make the template, the second copies it.
        for _ in 0..2 {
            let seen = inside("umount /proc && ls /proc; echo end");
            assert_eq!(seen, "end\n", "the host's processes showed beneath: {seen}");
        }
    }

    #[test]
    fn a_mount_the_host_makes_later_reaches_the_next_namespace() {
        if !root() || probe().is_err() {
            eprintln!("skipped: no PID namespaces for this process");
            return;
        }
        let _alone = crate::mount_template::tests::host_mounts();
        let dir = std::env::temp_dir().join(format!("corral-pidns-mount-{}", std::process::id()));
        let shown = format!("grep -c ' {} ' /proc/self/mountinfo", dir.display());
        // A namespace before the mount (its template made then): none there.
        assert_eq!(inside(&shown).trim(), "0");
        let Some(tmpfs) = crate::mount_template::tests::Tmpfs::mount("corral-pidns-mount") else {
            eprintln!("skipped: cannot mount a tmpfs here");
            return;
        };
        assert_eq!(tmpfs.dir, dir);
        let after = inside(&shown);
        drop(tmpfs);
        // A namespace after the host unmounted it: none there again.
        let gone = inside(&shown);
        assert_eq!(
            gone.trim(),
            "0",
            "the host's unmount did not reach the call"
        );
        assert_eq!(
            after.trim(),
            "1",
            "the host's new mount did not reach the call"
        );
    }

    #[test]
    fn a_namespace_started_and_dropped_at_once_leaves_nothing() {
        if !root() || probe().is_err() {
            eprintln!("skipped: no PID namespaces for this process");
            return;
        }
        let mut inits = Vec::new();
        for round in 0..100 {
            let starting = PidNamespace::begin_with(None);
            if round % 2 == 0 {
                // Never taken: made ready and ended by its drop.
                drop(starting);
                continue;
            }
            // Taken and dropped at once.
            let ns = starting.ready().unwrap();
            inits.push(ns.init);
            drop(ns);
        }
        assert!(settle(std::time::Duration::from_secs(10)));
        for init in inits {
            let parent = crate::reaper::process(init).map(|p| p.ppid);
            assert_ne!(parent, Some(std::process::id()), "init {init} was left");
        }
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
        let child = {
            let _inside = ns.enter().unwrap();
            cmd.spawn().unwrap()
        };
        let out = child.wait_with_output().unwrap();
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

    #[test]
    fn the_init_holds_nothing_of_corral_but_its_lifeline() {
        if !root() || probe().is_err() {
            eprintln!("skipped: no PID namespaces for this process");
            return;
        }
        // A pipe whose write end must not be kept open by the init.
        let (_r, w) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::empty()).unwrap();
        let ns = PidNamespace::new().unwrap();
        // While `cat` starts, its loader opens libraries for a moment; a leak would stay.
        let fds = || {
            let mut fds: Vec<String> = std::fs::read_dir(format!("/proc/{}/fd", ns.init))
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            fds.sort();
            fds
        };
        let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while fds() != ["0", "1", "2"] && std::time::Instant::now() < until {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let fds = fds();
        assert_eq!(
            fds,
            ["0", "1", "2"],
            "write end {w:?} or another descriptor leaked: {:?}",
            fds.iter()
                .map(|fd| std::fs::read_link(format!("/proc/{}/fd/{fd}", ns.init)))
                .collect::<Vec<_>>()
        );
        // The exec has happened when `new` returns; its arguments are in place a moment
        // later.
        let until = std::time::Instant::now() + std::time::Duration::from_secs(2);
        let mut cmdline = Vec::new();
        while cmdline.is_empty() && std::time::Instant::now() < until {
            cmdline = std::fs::read(format!("/proc/{}/cmdline", ns.init)).unwrap();
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert!(
            cmdline.starts_with(b"corral-init\0") || cmdline.starts_with(b"cat\0"),
            "{cmdline:?}"
        );
        // It is its own program, not a copy of this one's memory: corral's image where
        // the host lets a memfd run.
        let exe = std::fs::read_link(format!("/proc/{}/exe", ns.init)).unwrap();
        assert_ne!(exe, std::env::current_exe().unwrap());
        let memfd_runs = std::fs::read_to_string("/proc/sys/vm/memfd_noexec")
            .map_or(true, |policy| policy.trim() != "2");
        if cfg!(target_arch = "x86_64") && memfd_runs {
            assert!(
                exe.to_string_lossy().starts_with("/memfd:corral-init"),
                "{exe:?}"
            );
        }
    }
}
