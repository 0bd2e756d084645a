//! A PID namespace around a call's unit: the layer that ends what left every other one.
//!
//! The unit inside (a cgroup, or process groups with the subreaper) still does the daily
//! work: it signals, reports members, bounds forks. The namespace adds what neither can
//! promise: when the unit is dropped, or sent SIGKILL, the namespace's init is killed and
//! the kernel kills every process in the namespace, including one that moved itself into
//! another cgroup, session or group. A command in it sees only its own call's processes,
//! in a `/proc` of its own, and cannot signal anything outside by pid.
//!
//! What a command notices: its pids are small, and pid 1 is `corral-init`; the parent of
//! every stage reads as 0 (corral is outside), so `kill $PPID` in a stage becomes `kill
//! 0` and signals its own process group; `ps` lists only the call's processes. Mounts it
//! makes (as root) stay in the call's mount namespace; the host's mounts still reach it.
//!
//! A namespace is made when the call starts, never ahead: an init would wait between
//! calls. A run opened for one call (a command line's) starts it as the run opens, with
//! no time between calls for it to wait in (see `housekeeping`). (Its mounts are copied
//! from a template corral-sys keeps, which holds no process and is made again whenever the
//! host's mounts change.) It is made on a thread of its own ([`Ahead`]) from the moment
//! the call starts, while the calling thread records the step, plans the line and checks
//! the policy, and handed down the call as a value to be taken when the unit is made (an init dies with corral, so one made for a
//! corral killed meanwhile leaves nothing behind). The first namespace a process makes
//! is also its probe.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::mpsc::{Receiver, Sender, SyncSender};
use std::sync::{Arc, Mutex, OnceLock};

use corral_sys::Signal;
use corral_sys::pidns::{PidNamespace, SandboxMounts, Starting};

use super::containment::Containment;
use super::launch::{Launch, Proc};
use super::unit_kind::UnitKind;

/// A unit whose processes all live in one PID namespace of their own.
#[derive(Debug)]
pub(crate) struct Namespaced {
    /// Declared first, so dropping the unit ends the namespace before the unit inside
    /// cleans up.
    ns: PidNamespace,
    inner: Box<dyn Containment>,
}

impl Namespaced {
    /// A PID namespace for a call, where this host allows one (root, or an ordinary user
    /// where user namespaces are allowed; Linux 5.9+, a `cat` to run as its init). An
    /// ordinary user's is made in the boxes' user namespace, so only a `sandboxed` call,
    /// already boxed there, gets one: an unsandboxed command keeps the host's view of its
    /// groups and of `sudo`. `ahead` is the namespace started for the call, if one was: it
    /// is taken, or one is made here.
    pub(crate) fn namespace(sandboxed: bool, ahead: &mut Ahead) -> Option<PidNamespace> {
        if AVAILABLE.load(Ordering::Relaxed) == NO || !namespace_for(sandboxed) {
            return None;
        }
        let Ok(ns) = ahead.take().unwrap_or_else(PidNamespace::new) else {
            let _ = AVAILABLE.compare_exchange(UNKNOWN, NO, Ordering::Relaxed, Ordering::Relaxed);
            return None;
        };
        if AVAILABLE.load(Ordering::Relaxed) == UNKNOWN {
            // The first namespace this process makes is also its probe (no namespace and
            // command of its own, as a CLI call would pay for on every start): a thread
            // must be able to enter it and come back, and a child to join its mounts.
            let usable = if ns.born_through_helper() {
                corral_sys::spawn::into_cgroup_supported()
            } else {
                may_join_mounts() && ns.enter().is_ok()
            };
            AVAILABLE.store(if usable { YES } else { NO }, Ordering::Relaxed);
            if !usable {
                return None;
            }
        }
        Some(ns)
    }

    /// Put `inner` in `ns` (see [`Self::namespace`]), its name saying so.
    pub(crate) fn around(inner: Box<dyn Containment>, ns: PidNamespace) -> Box<dyn Containment> {
        Box::new(Self { ns, inner })
    }

    /// Orphans in the namespace that have not exited.
    fn live_orphans(&self) -> Vec<u32> {
        let mut orphans = self.ns.orphans();
        orphans.retain(|pid| corral_sys::reaper::process(*pid).is_some_and(|p| !p.zombie));
        orphans
    }
}

impl Containment for Namespaced {
    fn inner(&self) -> Option<&dyn Containment> {
        Some(&*self.inner)
    }
    fn inner_mut(&mut self) -> Option<&mut dyn Containment> {
        Some(&mut *self.inner)
    }
    fn kind(&self) -> UnitKind {
        self.inner.kind().in_pid_namespace()
    }
    fn pre_spawn(&mut self, launch: &mut Launch) {
        self.inner.pre_spawn(launch);
        if self.ns.born_through_helper() {
            launch.born_in(self.ns.init());
        }
        launch.enter_mounts(self.ns.init());
    }
    fn spawn(&mut self, launch: Launch) -> std::io::Result<Proc> {
        // An ordinary user's is entered by the child's birth (see `pre_spawn`).
        let _inside = match self.ns.born_through_helper() {
            true => None,
            false => Some(self.ns.enter()?),
        };
        self.inner.spawn(launch).map_err(|e| {
            // A namespace whose init is gone takes no process: say so rather than the
            // kernel's "cannot allocate memory".
            if self.ns.is_alive() {
                e
            } else {
                std::io::Error::other(format!(
                    "the call's PID namespace ended (its init exited) before the command \
                     could start in it, so nothing ran ({e}); make the call again"
                ))
            }
        })
    }
    fn signal(&self, signal: Signal) -> std::io::Result<bool> {
        let mut any = self.inner.signal(signal)?;
        // Orphans that left the unit inside (a daemon out of its process group) are
        // still the init's: they get the same signal.
        any |= self.ns.signal_orphans(signal);
        // SIGKILL is the last word: it reaches whatever left the unit and is not an
        // orphan, too.
        if signal == Signal::KILL {
            self.ns.kill();
        }
        Ok(any)
    }
    fn is_empty(&self) -> bool {
        self.inner.is_empty() && self.live_orphans().is_empty()
    }
    fn mounts_copied(&self) -> Option<Option<u64>> {
        Some(self.ns.copied())
    }
    fn remains(&self) -> super::Remains {
        // The init outlives everything in its namespace, whatever unit inside held it.
        super::Remains::Init(self.ns.init())
    }
    fn members(&self) -> Vec<u32> {
        let mut members = self.inner.members();
        for pid in self.live_orphans() {
            if !members.contains(&pid) {
                members.push(pid);
            }
        }
        members
    }
}

/// A namespace started when a call starts, while the calling thread does the rest of the
/// call's start (its step row, the plan, the policy), and handed to the call's
/// [`Namespaced::wrap`] as a value. The maker thread only clones its init (see
/// `corral_sys::pidns::Starting`), which copies its mounts and execs on another core; the
/// call waits for that exec when it takes the namespace. Never made before a call starts
/// (but for a one-call run's, see [`EarlyAhead`]), and ended when dropped unused (the call
/// was refused, or ran no process): no init waits between calls.
#[derive(Debug, Default)]
pub(crate) struct Ahead {
    starting: Option<Receiver<Starting>>,
}

impl Ahead {
    /// Start making a call's namespace, where namespaces are available (or not yet known
    /// to be unavailable), its init's mounts copied from `sandbox` where they still stand
    /// for the host's.
    pub(crate) fn start(sandbox: Option<Arc<SandboxMounts>>) -> Self {
        Self::start_by(|reply| {
            maker().is_some_and(|maker| {
                maker
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .send((reply, sandbox))
                    .is_ok()
            })
        })
    }

    /// Start a call's namespace with `begin`, which hands where to send it to whatever
    /// makes it (`false` if nothing will).
    fn start_by(begin: impl FnOnce(SyncSender<Starting>) -> bool) -> Self {
        if AVAILABLE.load(Ordering::Relaxed) == NO {
            return Self::default();
        }
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        Self {
            starting: begin(tx).then_some(rx),
        }
    }

    /// The namespace started, once its init has exec'd; `None` if none was (or its maker
    /// went away).
    fn take(&mut self) -> Option<std::io::Result<PidNamespace>> {
        let starting = self.starting.take()?.recv().ok()?;
        Some(starting.ready())
    }
}

impl Drop for Ahead {
    /// One the call did not use ends here, its init collected by the namespace's drop.
    fn drop(&mut self) {
        drop(self.take());
    }
}

/// Make the mount template and init image a first namespace needs, beside a run's
/// opening (see `housekeeping`): no init is started, so nothing waits between calls.
pub(crate) fn warm() {
    if AVAILABLE.load(Ordering::Relaxed) != NO {
        corral_sys::pidns::warm();
        may_join_mounts();
    }
}

/// The making of a one-call run's namespace, for a thread to run (see [`EarlyAhead`]).
pub(crate) type EarlyJob = Box<dyn FnOnce() + Send>;

/// A namespace started for a run's first call before the call: a one-call run's, as the
/// run opens (see `housekeeping`). Ended when dropped unless kept (the run did not open
/// after all); a kept one is the run's, for its first call, and ends with the run if that
/// call never came.
#[derive(Debug)]
pub(crate) struct EarlyAhead {
    ahead: Option<Ahead>,
}

impl EarlyAhead {
    /// Start the namespace for the run's first call: the job that makes it, for the
    /// caller to run on a thread of its choosing (the job ends once the init is cloned: a
    /// run of one call makes no other namespace, and a process whose threads have all
    /// ended exits without waking one to end it). No job where namespaces cannot be made.
    /// A job dropped unrun leaves the call to make its own.
    pub(crate) fn start() -> (Self, Option<EarlyJob>) {
        let mut job: Option<EarlyJob> = None;
        let ahead = Ahead::start_by(|reply| {
            job = Some(Box::new(move || {
                let _ = reply.send(PidNamespace::begin_with(None));
            }));
            true
        });
        (Self { ahead: Some(ahead) }, job)
    }

    /// Keep it for the run's first call.
    pub(crate) fn keep(mut self) -> Ahead {
        self.ahead.take().unwrap_or_default()
    }
}

impl Drop for EarlyAhead {
    /// The run did not open: its namespace ends, and its init is collected before the
    /// caller hears why, as a run's end collects its calls' (a process that exits on the
    /// error leaves no exited init behind).
    fn drop(&mut self) {
        if let Some(ahead) = self.ahead.take() {
            drop(ahead);
            corral_sys::pidns::settle(std::time::Duration::from_secs(5));
        }
    }
}

/// What the maker thread is asked: where to send the namespace it starts for one call,
/// and the sandbox mounts its init may copy.
type Request = (SyncSender<Starting>, Option<Arc<SandboxMounts>>);

/// The thread that starts namespaces, started on first use.
fn maker() -> Option<&'static Mutex<Sender<Request>>> {
    static MAKER: OnceLock<Option<Mutex<Sender<Request>>>> = OnceLock::new();
    MAKER
        .get_or_init(|| {
            let (tx, rx) = std::sync::mpsc::channel::<Request>();
            // Beside the call that starts a namespace, not in turn with it.
            crate::beside::spawn("corral-pidns", move || {
                for (reply, sandbox) in rx {
                    // A caller that went away drops what was started for it.
                    let _ = reply.send(PidNamespace::begin_with(sandbox.as_deref()));
                }
            })
            .ok()
            .map(|_| Mutex::new(tx))
        })
        .as_ref()
}

/// Whether this process may make PID namespaces: not yet known, yes, no.
static AVAILABLE: AtomicU8 = AtomicU8::new(UNKNOWN);
const UNKNOWN: u8 = 0;
const YES: u8 = 1;
const NO: u8 = 2;

/// Whether a call gets a PID namespace where the host allows one: every call as root, a
/// `sandboxed` one as an ordinary user (see [`Namespaced::wrap`]).
pub(crate) fn namespace_for(sandboxed: bool) -> bool {
    sandboxed || may_enter()
}

/// Whether a thread of this process may enter the PID namespaces it makes: as root. An
/// ordinary user's are made in the boxes' user namespace (see [`Namespaced::wrap`]).
fn may_enter() -> bool {
    corral_sys::userns::shared().is_none()
}

/// Whether this process has the capabilities a child needs to join a mount namespace
/// (`CAP_SYS_ADMIN` and `CAP_SYS_CHROOT`), from `CapEff` in `/proc/self/status`: read once,
/// with the first namespace's probe (or beside a run's opening, by `warm`).
fn may_join_mounts() -> bool {
    static MAY: OnceLock<bool> = OnceLock::new();
    *MAY.get_or_init(read_may_join_mounts)
}

fn read_may_join_mounts() -> bool {
    const CAP_SYS_CHROOT: u32 = 18;
    const CAP_SYS_ADMIN: u32 = 21;
    std::fs::read_to_string("/proc/self/status").is_ok_and(|status| {
        status
            .lines()
            .find_map(|l| l.strip_prefix("CapEff:"))
            .and_then(|hex| u64::from_str_radix(hex.trim(), 16).ok())
            .is_some_and(|caps| {
                let has = |cap: u32| caps & (1 << cap) != 0;
                has(CAP_SYS_CHROOT) && has(CAP_SYS_ADMIN)
            })
    })
}
