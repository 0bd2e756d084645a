//! What one stage is started with, built up by the containment wrappers' `pre_spawn`.
//!
//! Two ways to start a process, chosen per spawn:
//!
//! - **Born in place** ([`corral_sys::spawn`]): `clone3` with `CLONE_VM | CLONE_VFORK`
//!   (nothing of corral's memory is copied) and `CLONE_INTO_CGROUP` (the child is in its
//!   call's v2 group from its first instruction; no migration). Every step the wrappers ask
//!   for has a raw form the child runs before its exec: a process group, the parent-death
//!   signal, the v1 `pids` join, the PID namespace's mounts, the sandbox's confinement.
//! - **Forked** (`std::process::Command` with `pre_exec` hooks): where the kernel lacks
//!   `CLONE_INTO_CGROUP` (before 5.7, or `clone3` filtered). The child moves itself into
//!   its groups with a write to `cgroup.procs`. A cgroup unit says so in its name
//!   (`+moved`) where the kernel is the reason.
//!
//! Every step is registered both ways as it is asked for, in the order it is asked for, so
//! whichever way is taken runs the same steps in the same order.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::Arc;

use corral_sys::Signal;
use corral_sys::spawn as raw;

/// One stage about to start; see the module docs.
#[derive(Debug)]
pub(crate) struct Launch {
    cmd: Command,
    /// The born-in-place form, while every step asked for has one.
    raw: Option<raw::Launch>,
    stdio: [Option<OwnedFd>; 3],
    /// Descriptors the child uses by number: open until the spawn returns.
    keep: Vec<Arc<OwnedFd>>,
    /// Redirects the child opens itself: inside its confinement, or (unconfined) after
    /// every other step.
    redirects: Option<Arc<corral_sys::box_redirects::Redirects>>,
    confined: bool,
    /// Asked to be born in a PID namespace (see [`Launch::born_in`]).
    born_in: bool,
}

impl Launch {
    /// `program` with `argv` (its `argv[0]` the name the program is given), exactly
    /// `env`, in `cwd`, with the three standard descriptors.
    pub(crate) fn new(
        program: &Path,
        argv: &[std::ffi::OsString],
        env: &[crate::env::Var],
        cwd: &Path,
        stdio: [OwnedFd; 3],
    ) -> Self {
        let mut cmd = Command::new(program);
        if let Some((name, args)) = argv.split_first() {
            cmd.arg0(name).args(args);
        }
        cmd.env_clear()
            .envs(env.iter().map(|(k, v)| (k, v)))
            .current_dir(cwd);
        // First, so the hooks that follow start from a clean slate: what corral inherited
        // ignored (from `nohup`, `cmd &`) is not passed on. (The born-in-place child does
        // the same just before its exec.)
        corral_sys::signals::default_signals_before_exec(&mut cmd);
        let raw = raw::into_cgroup_supported()
            .then(|| {
                use std::os::unix::ffi::OsStrExt;
                let env = env
                    .iter()
                    .map(|(k, v)| [k.as_bytes(), b"=", v.as_bytes()].concat());
                let argv = argv.iter().map(|a| a.as_bytes());
                raw::Launch::new(program, argv, env, cwd).ok()
            })
            .flatten();
        let [stdin, stdout, stderr] = stdio;
        Self {
            cmd,
            raw,
            stdio: [Some(stdin), Some(stdout), Some(stderr)],
            keep: Vec::new(),
            redirects: None,
            confined: false,
            born_in: false,
        }
    }

    /// Have the child open `redirects` itself, before its exec (see
    /// [`corral_sys::box_redirects`]). Ask before [`Launch::confine`].
    pub(crate) fn redirect_in_child(&mut self, redirects: corral_sys::box_redirects::Redirects) {
        let redirects = Arc::new(redirects);
        if let Some(raw) = &mut self.raw {
            raw.redirects = Some(Arc::clone(&redirects));
        }
        self.redirects = Some(redirects);
    }

    /// Lead process group `pgid`, or a new one with 0.
    pub(crate) fn process_group(&mut self, pgid: i32) {
        self.cmd.process_group(pgid);
        if let Some(raw) = &mut self.raw {
            raw.process_group = Some(pgid);
        }
    }

    /// Run `by` steps nicer than corral, with no way back (see [`corral_sys::priority`]).
    pub(crate) fn nice(&mut self, by: u8) {
        if by == 0 {
            return;
        }
        corral_sys::priority::lower_before_exec(&mut self.cmd, by);
        if let Some(raw) = &mut self.raw {
            raw.nice = by;
        }
    }

    /// Set per-process bounds in the child (see [`corral_sys::rlimits`]).
    pub(crate) fn rlimits(&mut self, bounds: corral_sys::rlimits::Rlimits) {
        bounds.apply_before_exec(&mut self.cmd);
        if let Some(raw) = &mut self.raw {
            raw.rlimits = bounds;
        }
    }

    /// Receive `signal` when the spawning thread exits.
    pub(crate) fn death_signal(&mut self, signal: Signal) {
        corral_sys::reaper::parent_death_signal_before_exec(&mut self.cmd, signal);
        if let Some(raw) = &mut self.raw {
            raw.death_signal = Some(signal);
        }
    }

    /// Start in the v2 group whose directory is `dir` (born there) and whose
    /// `cgroup.procs` is `procs` (moved there, when forked).
    pub(crate) fn born_in_cgroup(&mut self, dir: &Arc<OwnedFd>, procs: &Arc<OwnedFd>) {
        corral_sys::cgroup::join_before_exec(&mut self.cmd, Arc::clone(procs));
        if let Some(raw) = &mut self.raw {
            raw.cgroup = Some(dir.as_raw_fd());
            self.keep.push(Arc::clone(dir));
        }
    }

    /// Move into the v1 group whose `cgroup.procs` is `procs` before the exec.
    pub(crate) fn join_cgroup(&mut self, procs: &Arc<OwnedFd>) {
        corral_sys::cgroup::join_before_exec(&mut self.cmd, Arc::clone(procs));
        if let Some(raw) = &mut self.raw {
            if raw.join(procs.as_raw_fd()).is_ok() {
                self.keep.push(Arc::clone(procs));
            } else {
                self.raw = None;
            }
        }
    }

    /// Join the mount namespace of the process `init` names (and return to the working
    /// directory) before the exec.
    pub(crate) fn enter_mounts(&mut self, init: Arc<OwnedFd>) {
        if let Some(raw) = &mut self.raw {
            raw.mount_namespace = Some(init.as_raw_fd());
            self.keep.push(Arc::clone(&init));
        }
        corral_sys::pidns::enter_mounts_before_exec(&mut self.cmd, init);
    }

    /// Be born in the user and PID namespaces of the init `init` names (one made inside
    /// the boxes' user namespace, see
    /// [`corral_sys::pidns::PidNamespace::born_through_helper`]). Only the born-in-place
    /// form can: a launch that must be forked then fails to start, saying why.
    pub(crate) fn born_in(&mut self, init: Arc<OwnedFd>) {
        if let Some(raw) = &mut self.raw {
            raw.born_in = Some(init.as_raw_fd());
        }
        self.born_in = true;
        self.keep.push(init);
    }

    /// Start a session on the terminal that is the child's stdin (`setsid`, then
    /// `TIOCSCTTY`): it leads a new group with its own pid. Not with a process group.
    pub(crate) fn controlling_terminal(&mut self) {
        corral_sys::pty::controlling_terminal_before_exec(&mut self.cmd);
        if let Some(raw) = &mut self.raw {
            raw.controlling_terminal = true;
        }
    }

    /// Confine the child to the sandbox `confinement` describes before the exec.
    pub(crate) fn confine(&mut self, confinement: &corral_sys::sandbox::Confinement) {
        corral_sys::sandbox::confine_before_exec(
            &mut self.cmd,
            confinement,
            self.redirects.clone(),
        );
        self.confined = true;
        if let Some(raw) = &mut self.raw {
            raw.confinement = Some(confinement.clone());
        }
    }

    /// Start it.
    pub(crate) fn spawn(mut self) -> io::Result<Proc> {
        if let Some(redirects) = self.redirects.take().filter(|_| !self.confined) {
            corral_sys::box_redirects::redirect_before_exec(&mut self.cmd, redirects);
        }
        if let Some(mut raw) = self.raw.take() {
            raw.stdio = std::mem::take(&mut self.stdio);
            let child = raw::spawn(&raw)?;
            drop(self.keep);
            return Ok(Proc::Born(child));
        }
        if self.born_in {
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "the call's PID namespace takes only a command born in it, and this kernel \
                 cannot start one that way (clone3 with CLONE_INTO_CGROUP, Linux 5.7, on \
                 x86-64 or aarch64): turn the PID namespace off (--pid-namespace off) to run \
                 it without one",
            ));
        }
        let [stdin, stdout, stderr] = std::mem::take(&mut self.stdio);
        let stdio = |fd: Option<OwnedFd>| fd.map_or_else(Stdio::null, Stdio::from);
        self.cmd
            .stdin(stdio(stdin))
            .stdout(stdio(stdout))
            .stderr(stdio(stderr));
        Ok(Proc::Forked(self.cmd.spawn()?))
    }
}

/// A started stage, either way.
#[derive(Debug)]
pub(crate) enum Proc {
    Born(raw::Child),
    Forked(Child),
}

impl Proc {
    /// Its pid, as corral sees it.
    pub(crate) fn id(&self) -> u32 {
        match self {
            Self::Born(c) => c.id(),
            Self::Forked(c) => c.id(),
        }
    }

    /// SIGKILL, unless it was already reaped.
    pub(crate) fn kill(&mut self) -> io::Result<()> {
        match self {
            Self::Born(c) => c.kill(),
            Self::Forked(c) => c.kill(),
        }
    }

    /// Its status if it has exited (reaping it), without blocking.
    pub(crate) fn try_wait(&mut self) -> io::Result<Option<ExitStatus>> {
        match self {
            Self::Born(c) => c.try_wait(),
            Self::Forked(c) => c.try_wait(),
        }
    }

    /// Wait for it to exit, reaping it.
    pub(crate) fn wait(&mut self) -> io::Result<ExitStatus> {
        match self {
            Self::Born(c) => c.wait(),
            Self::Forked(c) => c.wait(),
        }
    }

    /// A pidfd that becomes readable when it exits.
    pub(crate) fn pidfd(&self) -> io::Result<OwnedFd> {
        match self {
            Self::Born(c) => c.pidfd().try_clone(),
            Self::Forked(c) => corral_sys::pidfd::open(c.id()),
        }
    }
}
