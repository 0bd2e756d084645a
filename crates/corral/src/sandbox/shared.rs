//! What a run's sandboxed calls share, made once when the run opens: the run's network
//! namespace, the workspace's cache directory, and the paths a person allowed for the rest
//! of the run.
//!
//! **One network namespace per run.** With the network off, every sandboxed call of a run
//! joins one namespace whose only interface is a loopback that is up: a dev server started
//! in a handle answers a later call's `curl localhost:PORT`, nothing outside the run can
//! reach it, and nothing beyond the run is reachable from it. Landlock's TCP rules are
//! left off in it (they would refuse loopback too); the namespace is the boundary. Calls
//! with the network on stay in the host's namespace. Without the privilege to make one
//! (not root), or with [`super::SandboxConfig::run_network_namespace`] off, each call
//! gets a namespace of its own as before (loopback down), or seccomp's socket refusal.
//!
//! **One IPC namespace per run.** Every sandboxed call of a run joins one IPC namespace:
//! a handle's System V shared memory, semaphores or POSIX message queues serve the run's
//! later calls, and nothing of the host's (another process's segment, however its mode
//! reads) is reachable. Where it cannot be made, each call makes one of its own.
//!
//! **One set of sandbox mounts per run.** A sandboxed stage makes its mounts (every mount
//! private, the protected paths read-only, the read denies, the private `/dev`) in a
//! mount namespace of its own. After a run's second sandboxed call, those mounts are made
//! once more in a namespace no process holds ([`SandboxMounts`]); the init of each later
//! call's PID namespace copies it, and while the call's confinement has the same key (the
//! same paths, naming the same files, the host's mounts unchanged) its stages take the
//! mounts as they are. Anything else, and a stage makes its own as before.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use corral_sys::pidns::SandboxMounts;
use corral_sys::sandbox::{self as sys, Confinement, IpcNamespace, NetNamespace};

use super::caches;
use super::domains::AllowList;
use super::proxy::Proxy;
use crate::config::sandbox::{SandboxConfig, SandboxMode};

/// What the person said about a domain, for the rest of the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DomainAnswer {
    Allowed,
    Declined,
}

/// The run-wide part of the sandbox (see the module docs).
#[derive(Debug, Default)]
pub(crate) struct RunSandbox {
    pub network: Option<NetNamespace>,
    /// Why there is no run namespace although one was wanted.
    pub network_error: Option<String>,
    /// The run's IPC namespace, which its sandboxed calls join (see the module docs).
    pub ipc: Option<IpcNamespace>,
    pub caches: Option<PathBuf>,
    /// Paths a person allowed for the rest of the run after a denial.
    pub allowed: Mutex<Vec<PathBuf>>,
    /// corral's own files, hidden from reads in the box: the trace, its captures, the
    /// trust store.
    pub own: Vec<PathBuf>,
    /// The proxy that lets the run's calls reach the allowed domains (network by domain).
    pub proxy: Option<Proxy>,
    /// With the network off: the resolver answering `NXDOMAIN` on the run namespace's
    /// loopback (see `super::resolver`); the proxy above then refuses every request.
    pub resolver: Option<super::resolver::Resolver>,
    /// What a person answered about a refused domain, for the rest of the run.
    pub domains: Mutex<Vec<(String, DomainAnswer)>>,
    /// The mounts the run's sandboxed calls share, made once (see [`MountsSlot`]).
    pub mounts: Arc<MountsSlot>,
    /// The run's own `/tmp` and runtime directory for its boxes, where the host's mounts
    /// can be made read-only (see `corral_sys::box_dirs`). Before [`Self::temp_base`]: it
    /// lives in that directory and goes first.
    pub dirs: Option<super::temp::RunDirs>,
    /// The runtime directory the box's own goes over: `XDG_RUNTIME_DIR`, or
    /// `/run/user/UID`, where it exists.
    pub runtime_dir: Option<PathBuf>,
    /// The host's socket files, hidden from the run's boxes (see `super::sockets`).
    pub sockets: Mutex<super::sockets::Scan>,
    /// What the boxes made in the run's own directories to put host paths back at (the
    /// directories on the way, the mount points): removed when no call needs them, so a
    /// path the host has is not left standing empty in the box (`OwnDirs::tidy_skeleton`).
    pub skeleton: Mutex<Vec<PathBuf>>,
    /// What the run's boxes read of the host, kept between calls (see `super::host_view`).
    pub view: super::host_view::ViewCache,
    /// The programs the policy denies, and the stubs that cover them in the boxes
    /// (before [`Self::temp_base`]: they lie in that directory).
    pub programs: super::programs::DeniedPrograms,
    /// The run's hold on the process's temp base (see `super::temp::TempBaseHold`).
    temp_base: Option<super::temp::TempBaseHold>,
}

/// The run's sandbox mounts ([`SandboxMounts`]): made in the background after a call
/// whose confinement had none to copy (from the run's second sandboxed call on), copied
/// by the inits of the calls after it, and taken as they are by those calls' stages while
/// their confinement's key still matches.
#[derive(Debug, Default)]
pub(crate) struct MountsSlot {
    current: Mutex<Option<Arc<SandboxMounts>>>,
    making: AtomicBool,
    /// A call was settled already: the mounts are first made at the second, so that a run
    /// of one call (a command line's) never makes what nothing would copy.
    settled: AtomicBool,
}

impl MountsSlot {
    /// The mounts for the next call's init to copy.
    pub(crate) fn current(&self) -> Option<Arc<SandboxMounts>> {
        self.current
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Settle `confinement` for a call whose unit's init copied the mounts `copied`
    /// names: take its mounts as they are when they are this confinement's, and otherwise
    /// make this confinement's, for the calls after it, on a thread of their own.
    pub(crate) fn settle(self: &Arc<Self>, confinement: &mut Confinement, copied: Option<u64>) {
        let Some(key) = confinement.mount_key() else {
            return;
        };
        let current = self.current();
        if let (Some(mounts), Some(id)) = (&current, copied)
            && mounts.id() == id
            && *mounts.key() == key
            && confinement.use_mounts_in_place()
        {
            return;
        }
        // Made again only when there are none, they cover other paths, or the host's
        // mounts changed since (a handle's init, made without them, copies none).
        let fits = current
            .as_ref()
            .is_some_and(|m| *m.key() == key && m.stands());
        let first = !self.settled.swap(true, Ordering::Relaxed);
        if fits || first || self.making.swap(true, Ordering::AcqRel) {
            return;
        }
        let (slot, confinement) = (Arc::clone(self), confinement.clone());
        let made = std::thread::Builder::new()
            .name("corral-sandbox-mounts".into())
            .spawn(move || {
                if let Ok(Some(mounts)) = SandboxMounts::make(&confinement) {
                    *slot.current.lock().unwrap_or_else(|e| e.into_inner()) =
                        Some(Arc::new(mounts));
                }
                slot.making.store(false, Ordering::Release);
            });
        if made.is_err() {
            self.making.store(false, Ordering::Release);
        }
    }
}

impl RunSandbox {
    /// Make what `config` needs for `workspace`. Never fails: what cannot be made is
    /// left out and said in the reports.
    pub fn open(config: &SandboxConfig, workspace: &Path) -> RunSandbox {
        let mut shared = RunSandbox::default();
        if !config.mode.is_sandboxed() {
            return shared;
        }
        shared.temp_base = Some(super::temp::TempBaseHold::take());
        let host = sys::host_support();
        if host.namespaces && host.mount_setattr {
            shared.dirs = super::temp::RunDirs::make().ok();
        }
        if shared.dirs.is_some() {
            shared.runtime_dir = runtime_dir();
            // The box's own directories, and the workspace: a socket there is the box's
            // own work's (a server a handle runs), which later calls may reach.
            let mut skip = vec![PathBuf::from(corral_sys::box_dirs::BOX_TMP)];
            skip.extend(shared.runtime_dir.clone());
            skip.push(workspace.to_path_buf());
            shared.sockets = Mutex::new(super::sockets::Scan::new(skip));
        }
        // Without one, each call makes an IPC namespace of its own.
        if sys::host_support().namespaces {
            shared.ipc = IpcNamespace::create().ok();
        }
        let by_domain = !config.network && !config.network_allow.is_empty();
        if !config.network
            && (config.run_network_namespace || by_domain)
            && sys::host_support().namespaces
        {
            match NetNamespace::create() {
                Ok(ns) => shared.network = Some(ns),
                Err(e) => shared.network_error = Some(e.to_string()),
            }
        }
        if by_domain && let Some(ns) = &shared.network {
            let started = AllowList::parse(&config.network_allow)
                .map_err(std::io::Error::other)
                .and_then(|allow| Proxy::start(ns, allow, config.test_resolve.clone()));
            match started {
                Ok(p) => shared.proxy = Some(p),
                Err(e) => shared.network_error = Some(format!("starting the proxy: {e}")),
            }
        }
        if !config.network
            && !by_domain
            && let Some(ns) = shared.network.clone()
        {
            shared.open_offline(&ns);
        }
        if config.mode == SandboxMode::WorkspaceWrite
            && let Some(dir) = caches::dir_for(workspace)
            && caches::create(&dir).is_ok()
        {
            shared.caches = Some(dir);
        }
        shared
    }

    /// With the network off and no allow-list: the proxy that refuses at once, the
    /// resolver that answers `NXDOMAIN`, and the file the boxes' `/etc/resolv.conf` is
    /// bound to, in the run's own `/tmp` (removed with the run). What cannot be made is
    /// left out: a box then fails its lookups (`EAI_AGAIN`) and connections as before.
    fn open_offline(&mut self, ns: &NetNamespace) {
        self.proxy = Proxy::start_off(ns).ok();
        if let Some(dirs) = &self.dirs {
            self.resolver = super::resolver::Resolver::start(ns)
                .and_then(|r| super::resolver::Resolver::write_file(&dirs.tmp).map(|()| r))
                .ok();
        }
    }

    /// The box's own `/tmp` for a call that writes `writable`: the run's, unless one of
    /// those holds `/tmp` itself (a workspace of `/`), which then stays the host's.
    pub fn own_tmp(&self, writable: &[PathBuf]) -> Option<&super::temp::RunDirs> {
        let tmp = Path::new(corral_sys::box_dirs::BOX_TMP);
        self.dirs
            .as_ref()
            .filter(|_| !writable.iter().any(|w| tmp.starts_with(w)))
    }

    /// The host's socket files a box must not reach, as they are now.
    pub fn sockets(&self) -> Vec<PathBuf> {
        self.sockets
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .current()
            .to_vec()
    }

    /// Let `path` be written for the rest of the run.
    pub fn allow(&self, path: PathBuf) {
        let mut allowed = self.allowed.lock().unwrap_or_else(|e| e.into_inner());
        if !allowed.contains(&path) {
            allowed.push(path);
        }
    }

    /// What a person answered about `host` earlier in the run.
    pub fn domain_answer(&self, host: &str) -> Option<DomainAnswer> {
        let domains = self.domains.lock().unwrap_or_else(|e| e.into_inner());
        domains.iter().find(|(h, _)| h == host).map(|(_, a)| *a)
    }

    /// Keep `answer` about `host` for the rest of the run.
    pub fn remember_domain(&self, host: &str, answer: DomainAnswer) {
        let mut domains = self.domains.lock().unwrap_or_else(|e| e.into_inner());
        domains.retain(|(h, _)| h != host);
        domains.push((host.to_string(), answer));
    }

    /// What a person allowed so far.
    pub fn allowed(&self) -> Vec<PathBuf> {
        self.allowed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

/// The user's runtime directory, canonical: `XDG_RUNTIME_DIR`, else `/run/user/UID`,
/// where it is a directory.
fn runtime_dir() -> Option<PathBuf> {
    let named = std::env::var_os("XDG_RUNTIME_DIR")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(format!("/run/user/{}", rustix::process::geteuid().as_raw()))
        });
    named
        .canonicalize()
        .ok()
        .filter(|d| d.is_dir() && d.is_absolute() && d != Path::new("/"))
}
