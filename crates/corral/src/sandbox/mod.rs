//! The sandbox: what a started command may do, enforced by the kernel, and an honest
//! account of how much of it this host enforced.
//!
//! # Modes
//!
//! - `read-only`: read anywhere, write nowhere but a private temporary directory.
//! - `workspace-write`: write only under the workspace, the configured writable roots and
//!   the private temporary directory; inside the workspace the protected paths
//!   (the whole `.git`, `corral.toml`, `.corral`; see `git_dir`) stay read-only.
//! - `full`: no sandbox. An explicit choice, and the library's default; it is recorded.
//! - `external`: the caller runs corral inside a box of its own; corral applies none.
//!
//! In the two sandboxed modes the network is off unless [`SandboxConfig::network`] turns
//! it on or [`SandboxConfig::network_allow`] opens it to named domains through a proxy;
//! off, the run's calls share one network namespace with a loopback of its own
//! (see `shared`). Commands see `CORRAL_SANDBOX=<mode>`,
//! `CORRAL_SANDBOX_NETWORK_DISABLED=1` when the network is off (the proxy variables
//! instead when it is open by domain), `TMPDIR` set to their private temporary directory
//! (in the run's own `/tmp` where the box has one; removed when the call ends) and, in
//! `workspace-write`, the common build tools' caches pointed at the workspace's cache
//! directory (see `caches`).
//!
//! # Layers (see [`corral_sys::sandbox`] for how each is applied)
//!
//! - **Launch hygiene**: the environment is already filtered ([`crate::env::EnvPolicy`]); loader
//!   variables (`LD_*`) are removed; every descriptor above stderr is closed on exec;
//!   `no_new_privs` is set. No new session is made: a pipeline's later stages join the
//!   process group its first stage leads, which a `setsid` per stage would break; what a
//!   session of its own protects against (typing into the terminal with `TIOCSTI`) is
//!   refused by seccomp instead, and stdin is the null device.
//! - **Namespaces** (root's own, or an ordinary user's inside the one user namespace of
//!   corral's process, [`corral_sys::userns::shared`]): the run's network namespace
//!   (network off; loopback up, shared by the run's calls), the run's IPC namespace (System
//!   V IPC and POSIX message queues, shared by the run's calls) and a mount namespace in
//!   which every mount is read-only but the writable roots', `/tmp` and the runtime
//!   directory are the run's own (see *Socket families*), the protected paths are
//!   bind-mounted read-only, the read-denied paths are hidden (see *Reads* below) and
//!   `/dev` is a private one. Without them the network is
//!   cut by seccomp refusing `socket(2)`, and the protected paths are not protected: the
//!   report says so. The call's PID namespace, which containment makes where it can
//!   ([`crate::Config::pid_namespace`]; an ordinary user's only for a sandboxed call), is
//!   reported as a layer too: in it a command sees and can signal only its own call's
//!   processes.
//! - **Landlock**: writes only beneath the allowed roots (reads and execution anywhere);
//!   ABI 4+: no TCP bind or connect with the network off and no namespace to hold it; ABI 6+: no signals to processes
//!   outside the sandbox and no abstract Unix sockets outside it.
//! - **seccomp**: `ptrace`, `process_vm_*`, `io_uring_*`, mounts, `unshare`, `setns`, new
//!   namespaces through `clone`, `pivot_root`, `chroot`, `bpf`, `perf_event_open`, keyrings,
//!   modules, `kexec`, `reboot`, `open_by_handle_at` and `TIOCSTI` fail with `EPERM`; so
//!   does every `chmod`, `open` that creates, `mkdir` and `mknod` whose mode holds the
//!   set-user-ID or set-group-ID bit (a root box's set-ID copy of a shell would be a root
//!   shell for the host's other users), and `openat2`, whose mode seccomp cannot read,
//!   answers `ENOSYS`, as `clone3` does, so programs fall back to the calls it checks.
//! - **Socket families**: Unix, IPv4/IPv6 and netlink (routes only); any other family
//!   (`AF_VSOCK`, `AF_ALG`, packet, …) answers `EAFNOSUPPORT`. `socket(AF_UNIX, …)` only
//!   where the host's sockets are out of reach by path (a pathname socket such as a
//!   container engine's is a root shell, and Landlock before ABI 9 does not confine
//!   connecting to one): the box's `/tmp` and runtime directory are the run's own
//!   (`temp::RunDirs`, mounted by `corral_sys::box_dirs`), and the socket files found
//!   elsewhere when the run opens are hidden (`sockets`). Without those it is refused
//!   with `EPERM`, whatever [`SandboxConfig::unix_sockets`] says.
//! - **Capabilities**: every one leaves the bounding, effective, permitted, inheritable
//!   and ambient sets, so a command running as root cannot get one back, and
//!   `RLIMIT_RTPRIO` is 0; a root box whose writable root belongs to another user keeps
//!   the two it needs to write there ([`corral_sys::sandbox_reach::OWNER_CAPS`]) and the
//!   report says so.
//! - **Resource bounds**: `pids.max` and `memory.max` of the call's cgroup
//!   ([`crate::Config::pids_max`], [`crate::Config::memory_max`]), and a niceness below
//!   corral's ([`crate::Config::nice`]); reported, never deciding the posture.
//!
//! # Reads
//!
//! Reads are allowed everywhere except the read denies ([`SandboxConfig::deny_read`],
//! default [`DEFAULT_DENY_READ`]: the usual credential stores and browser profiles; a
//! policy file's `[sandbox] deny_read` adds to them) and corral's own trace and trust
//! store. Each existing one is hidden in the call's mount namespace by an empty read-only
//! mount: a directory shows empty, a file cannot be opened (see `reach`). A path that
//! holds the workspace or a writable root is left readable and the `read denies` layer
//! says so. The private `/dev` holds only `null`, `zero`, `full`, `random`, `urandom`,
//! `tty`, a `devpts` of its own (`pts`, `ptmx`) and a `shm` tmpfs: no disk to read raw,
//! and `CAP_MKNOD` is gone, so none can be made. A failed call whose stderr names a
//! hidden path gets [`SandboxReport::denied_read`], never a rerun offer.
//!
//! # The network by domain
//!
//! With the network off and [`SandboxConfig::network_allow`] set (`--network
//! allow=DOMAIN,…`, `[sandbox] network_allow`), the run's namespace still has no route
//! out, and corral runs a proxy for the run whose socket is inside it (`proxy`): HTTP
//! `CONNECT`, absolute-form HTTP and SOCKS5 on one port of the namespace's loopback,
//! named to commands by `HTTP_PROXY`/`http_proxy`, `HTTPS_PROXY`/`https_proxy`,
//! `ALL_PROXY=socks5h://…` and `NO_PROXY=localhost,127.0.0.1`. It allows the requested
//! host when the allow-list ([`domains`]) names it, connects from corral's own namespace,
//! and keeps every decision for the trace (`sandbox_events`, `kind = 'network'`, recorded
//! after the call during which it was taken). The box has no resolver: names are resolved
//! at the proxy. A refused connection's answer and a failed call's result name the domain
//! to ask for; under `on-request`/`on-failure` the approver is asked to allow it for the
//! run (see `widen`).
//!
//! A layer the host lacks is listed as `none`, never left out. A sandboxed mode whose
//! core cannot be enforced at all (no Landlock for the write confinement, no namespace
//! and no seccomp for the network) is refused unless [`SandboxConfig::allow_degraded`].
//!
//! Write redirects are opened by corral, outside the box, so they are held to the same
//! writable roots before anything starts (see `denied`).
//!
//! # Denials
//!
//! The kernel does not tell corral that a command failed *because* of the sandbox (an
//! `EPERM` from seccomp or Landlock looks like any other). A failed sandboxed command
//! whose stderr says `Read-only file system`, `Permission denied`, `Operation not
//! permitted` or `Network is unreachable` (and the like) is reported as a *suspected*
//! denial, labelled as a guess. When the line also names a path outside the writable
//! roots, or a redirect would have written outside them, that path is the denied write.
//! In the `on-failure` approval mode corral then offers the approver a rerun **in the
//! sandbox** with exactly that path added as a writable root (its nearest existing
//! directory when it does not exist yet), never a run without the sandbox, and records
//! the answer. Without an approver the result says what was denied and what a person
//! would have to allow.

pub(crate) mod appeared;
mod caches;
pub(crate) mod denied;
pub mod domains;
pub mod enforcement;
mod git_env;
pub mod home;
mod host_view;
mod layers;
pub mod listeners;
pub(crate) mod probe;
pub(crate) mod programs;
pub(crate) mod proxy;
mod proxy_protocol;
pub(crate) mod reach;
pub(crate) mod relay;
mod resolver;
pub(crate) mod setid;
pub(crate) mod sets;
pub(crate) mod shared;
mod sockets;
mod temp;

pub use crate::config::sandbox::{DEFAULT_PROTECTED, SandboxConfig, SandboxMode};
pub use crate::outcome::sandbox_report::{Layer, LayerReport, Level, SandboxReport};
pub use caches::CACHE_VARIABLES;
pub use caches::dir_for as cache_dir_for;
pub(crate) use layers::Unit;
pub use reach::DEFAULT_DENY_READ;
pub(crate) use shared::RunSandbox;

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use corral_sys::sandbox::{self as sys, Confinement};

use crate::error::{Error, Result};
use crate::spawn::Containment;

/// A sandbox ready for one call: the confinement, the environment it adds, its private
/// temporary directory (removed on drop), and its report.
#[derive(Debug)]
pub(crate) struct Active {
    pub confinement: Option<Confinement>,
    pub report: SandboxReport,
    /// The private temporary directory, as the host names it (removed on drop) and as
    /// the box sees it (its `TMPDIR`).
    temp: Option<PathBuf>,
    temp_seen: Option<PathBuf>,
    /// The workspace as the box sees it.
    workspace_seen: Option<PathBuf>,
}

impl Drop for Active {
    fn drop(&mut self) {
        if let Some(dir) = &self.temp {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// A containment unit whose children are also confined: the sandbox's spawn wrapper.
/// Its `pre_spawn` runs the unit's own steps first (cgroup join, parent-death signal), then
/// the confinement's. It keeps the sandbox (and its temporary directory) alive as long as
/// the unit.
#[derive(Debug)]
pub(crate) struct Confined {
    unit: Box<dyn Containment>,
    active: Active,
}

impl Containment for Confined {
    fn inner(&self) -> Option<&dyn Containment> {
        Some(&*self.unit)
    }
    fn inner_mut(&mut self) -> Option<&mut dyn Containment> {
        Some(&mut *self.unit)
    }
    fn pre_spawn(&mut self, launch: &mut crate::spawn::Launch) {
        self.unit.pre_spawn(launch);
        if let Some(confinement) = &self.active.confinement {
            launch.confine(confinement);
        }
    }
    fn confines(&self) -> bool {
        self.active.confinement.is_some()
    }
}

/// Put `report` on `outcome`, with a suspected denial when a sandboxed command failed,
/// and one line in the observation (after the status line) when it was sandboxed.
pub(crate) fn annotate(
    outcome: &mut crate::outcome::Outcome,
    mut report: SandboxReport,
    shown: &crate::outcome::sandbox_report::StatusShown,
) {
    if report.mode.is_sandboxed() && !outcome.status.success() {
        let text = outcome.what_it_said_of_failing();
        report.suspected_denial = suspect_denial(&text);
        let denied = denied::from_stderr(
            &text,
            &report.writable,
            &[],
            &report.own_dirs,
            home().as_deref(),
        );
        // A path the host has under the box's own `/tmp` says only that it is missing.
        if report.suspected_denial.is_none()
            && let Some(d) = &denied
        {
            report.suspected_denial = Some(format!(
                "a guess from stderr: {} is the host's, and the box has a directory of its \
                 own over {}",
                d.path.display(),
                report
                    .own_dirs
                    .iter()
                    .find(|o| d.path.starts_with(o))
                    .map_or_else(String::new, |o| o.display().to_string())
            ));
        }
        report.denied_write = denied
            .filter(|_| report.suspected_denial.is_some())
            .map(|d| d.describe());
        report.denied_read = reach::denied_read(&text, &report.hidden, home().as_deref());
        if report.denied_read.is_some() {
            report.denied_write = None;
        }
        let unstarted = match &outcome.status {
            crate::outcome::Status::Unavailable { reason, .. } => Some(reason.as_str()),
            _ => None,
        };
        if report.denied_read.is_none()
            && report.denied_write.is_none()
            && let Some(own_home) = &report.own_home
            && let Some((path, entry)) = unstarted
                .and_then(|r| home::hidden_program(r, own_home, &report.writable))
                .or_else(|| home::hidden_in_home(&text, own_home))
        {
            let snippet =
                corral_policy::snippet::Snippet::new().item("sandbox", "home_read", &entry);
            report.hidden_home = Some(format!(
                "{} is in your home, which the box does not show (it sees the toolchains \
                 only); a person who wants it read adds these lines to a trusted policy file; {}",
                path.display(),
                snippet.pasting()
            ));
        }
    }
    if report.mode != SandboxMode::Full {
        // The status line on a run's first sandboxed result, then again only when it
        // changes (`corral sandbox report` lists every layer on request).
        let status = report.status();
        let mut lines: Vec<String> = Vec::new();
        if shown.fresh(&status) {
            lines.push(status);
        }
        if let Some(read) = &report.denied_read {
            lines.push(format!(
                "sandbox: denied {read}. The read denies hold for every sandboxed call; \
                 a person who wants the command to read it runs it outside corral's sandbox"
            ));
        } else if let Some(hidden) = &report.hidden_home {
            lines.push(format!("sandbox: {hidden}"));
        } else if let Some(denial) = &report.suspected_denial {
            lines.push(format!(
                "sandbox: this may have been refused by the sandbox, {denial}"
            ));
        }
        if !lines.is_empty() {
            outcome.observation =
                outcome
                    .observation
                    .replacen('\n', &format!("\n{}\n", lines.join("\n")), 1);
        }
    }
    outcome.sandbox = Some(report);
}

/// Loader variables: removed from a sandboxed command's environment.
fn is_loader_variable(name: &str) -> bool {
    name.starts_with("LD_") || name.starts_with("DYLD_")
}

impl Active {
    /// Where a call's own copies go beside its private temporary directory (as the host
    /// and as the box name it), and the workspace as the box sees it: `None` unsandboxed.
    pub(crate) fn beside_temp(&self) -> Option<(PathBuf, PathBuf, PathBuf)> {
        Some((
            self.temp.as_ref()?.parent()?.to_path_buf(),
            self.temp_seen.as_ref()?.parent()?.to_path_buf(),
            self.workspace_seen.clone()?,
        ))
    }

    /// Wrap `unit` so that every child it prepares is confined by this sandbox.
    pub fn wrap(self, unit: Box<dyn Containment>) -> Box<dyn Containment> {
        if self.confinement.is_none() && self.temp.is_none() {
            return unit;
        }
        Box::new(Confined { unit, active: self })
    }

    /// Adjust a call's environment: loader variables out, the markers and `TMPDIR` in.
    pub(crate) fn apply_env(&self, env: &mut Vec<crate::env::Var>) {
        let mode = self.report.mode;
        if mode == SandboxMode::Full {
            return;
        }
        let mut set: Vec<(String, String)> = vec![("CORRAL_SANDBOX".into(), mode.name().into())];
        if mode.is_sandboxed() {
            env.retain(|(k, _)| !is_loader_variable(&k.to_string_lossy()));
            if let Some(addr) = &self.report.proxy {
                let http = format!("http://{addr}");
                for name in ["HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy"] {
                    set.push((name.into(), http.clone()));
                }
                let socks = format!("socks5h://{addr}");
                for name in ["ALL_PROXY", "all_proxy"] {
                    set.push((name.into(), socks.clone()));
                }
                for name in ["NO_PROXY", "no_proxy"] {
                    set.push((name.into(), "localhost,127.0.0.1".into()));
                }
                set.extend(managers_env(&http, self.report.network_allow.is_empty()));
            }
            // Off, whether or not the run answers for the network (its proxy has no list).
            if !self.report.network
                && (self.report.proxy.is_none() || self.report.network_allow.is_empty())
            {
                set.push(("CORRAL_SANDBOX_NETWORK_DISABLED".into(), "1".into()));
            }
            if let Some(temp) = &self.temp_seen {
                let t = temp.display().to_string();
                for name in ["TMPDIR", "TMP", "TEMP"] {
                    set.push((name.into(), t.clone()));
                }
            }
            if let Some(dir) = &self.report.caches {
                set.extend(caches::variables(dir, env, &self.report.writable));
            }
            // No detached `git maintenance`/`gc --auto` outliving the call.
            set.extend(git_env::variables(env));
        }
        env.retain(|(k, _)| !set.iter().any(|(n, _)| k == n.as_str()));
        env.extend(set.into_iter().map(|(k, v)| (k.into(), v.into())));
    }
}

/// What package managers that ignore the generic proxy variables are told, through
/// their own, for the proxy at `http`; with the network `off`, their retries are 0 too,
/// since the proxy's `403` is final (each checked against the real manager in
/// `tests/offline.rs`: npm and pnpm read `npm_config_*`, yarn 1 `npm_config_*` and
/// `YARN_*PROXY`, yarn 2+ `YARN_HTTP*`, pip `PIP_*`, cargo `CARGO_*`).
fn managers_env(http: &str, off: bool) -> Vec<(String, String)> {
    let mut set: Vec<(String, String)> = [
        "npm_config_proxy",
        "npm_config_https_proxy",
        "YARN_PROXY",
        "YARN_HTTPS_PROXY",
        "YARN_HTTP_PROXY",
        "PIP_PROXY",
        "CARGO_HTTP_PROXY",
    ]
    .into_iter()
    .map(|name| (name.to_string(), http.to_string()))
    .collect();
    if off {
        for name in [
            "npm_config_fetch_retries",
            "YARN_HTTP_RETRY",
            "PIP_RETRIES",
            "CARGO_NET_RETRY",
        ] {
            set.push((name.into(), "0".into()));
        }
    }
    set
}

/// The sandbox for one call in `config`'s mode; `unit` what its containment unit holds
/// (for the report's process and memory layers), `shared` what the run's calls share. `Err` when the mode cannot be
/// honoured and degrading is not allowed, or when one of `plan`'s write redirects is
/// outside what the box may write.
pub(crate) fn prepare(
    config: &SandboxConfig,
    workspace: &Path,
    unit: &Unit,
    shared: &RunSandbox,
    plan: &crate::plan::Plan,
    path: Option<&std::ffi::OsStr>,
) -> Result<Active> {
    let (containment, pids_max) = (unit.kind, unit.pids_max);
    let mode = config.mode;
    if !mode.is_sandboxed() {
        return Ok(unsandboxed(mode));
    }
    for pattern in &config.deny_read {
        reach::check_pattern(pattern).map_err(Error::invalid)?;
    }
    let (writable_roots, protected) = roots(config, workspace, shared);
    let view = shared.view.get(config, workspace, &shared.own);
    let own = OwnDirs::for_call(shared, &view, &writable_roots, Some(plan));
    let mut redirect_roots = writable_roots.clone();
    redirect_roots.extend(own.box_paths());
    if let Some(denied) =
        denied::redirect_outside(plan, &redirect_roots, &protected, &own.box_paths())
    {
        return Err(Error::new(
            crate::ErrorKind::Refused,
            format!(
                "sandbox: {}. Nothing ran. Write inside the workspace (or the private temp \
                 directory, $TMPDIR), or have a person allow {} by starting corral with \
                 `--writable {}`.",
                denied.describe(),
                denied.grant_words(),
                denied.grant.display()
            ),
        ));
    }
    let (temp, temp_seen) = match own.dirs {
        Some(dirs) => dirs.private_temp()?,
        None => {
            let temp = temp::private_temp()?;
            (temp.clone(), temp)
        }
    };
    // What Landlock lets the box write (the host's paths) and what its report names (the
    // box's): the same but for the box's own directories.
    let mut writable = own.host_paths();
    let mut writable_seen = own.box_paths();
    if own.dirs.is_none() {
        writable.push(temp.clone());
        writable_seen.push(temp.clone());
    }
    writable.extend(writable_roots.iter().cloned());
    writable_seen.extend(writable_roots.iter().cloned());
    // What the box hides and keeps read-only: the file tools take the same (`sets`).
    let sets = sets::Sets::of(config, workspace, Some(&*view), &writable, &shared.own);
    let protected = sets.mounted_read_only().to_vec();
    let mut hidden = sets.hidden;
    let workspace_seen = view.workspace.clone();
    own.drop_covered(&mut hidden, &writable_roots, &workspace_seen);
    let mut spec = spec(config, shared, &writable, &protected, &hidden);
    // The writable roots keep their mounts (and, without a `/tmp` of the box's own, the
    // private temp its process's base); the rest of the host is read-only in the box.
    spec.writable_mounts = writable_roots.clone();
    // With `git_write`, `.git` is a writable mount of its own: git writes inside it, but
    // it cannot be renamed or removed and copied back with a `config` of the box's.
    spec.pinned.extend(crate::config::git_dir::own_mount(
        workspace,
        config.git_write && config.mode == SandboxMode::WorkspaceWrite,
    ));
    if let Some(dirs) = own.dirs {
        let kept: Vec<&PathBuf> = writable_roots
            .iter()
            .chain(std::iter::once(&workspace_seen))
            .chain(&own.put_back)
            .collect();
        own.tidy_skeleton(dirs, &kept, &shared.skeleton);
    }
    match own.dirs {
        Some(dirs) => {
            spec.own_tmp = Some(dirs.tmp.clone());
            spec.own_runtime = own.runtime.clone().map(|to| (dirs.runtime.clone(), to));
            // A home in `/tmp` is named too: the box's `/tmp` covers it (the report says so).
            spec.own_home = own.person.clone().map(|to| (dirs.home.clone(), to));
            spec.other_homes = own
                .other
                .iter()
                .map(|to| (dirs.other_home.clone(), to.clone()))
                .collect();
            spec.visible = std::iter::once(workspace_seen)
                .chain(own.put_back.iter().cloned())
                .collect();
            spec.hide_sockets = shared.sockets();
            if !config.network && shared.resolver.is_some() {
                let box_tmp = Path::new(corral_sys::box_dirs::BOX_TMP);
                spec.resolv_conf = resolver::Resolver::file_for(&dirs.tmp, box_tmp);
            }
        }
        None => spec.writable_mounts.insert(0, temp::temp_base()),
    }
    spec.nproc = nproc_bound(containment, pids_max);
    spec.program_stubs = shared.programs.stubs(path).map(|s| (*s).clone());
    let built = sys::build(&spec, &sys::host_support());
    let (confinement, enforced) = match built {
        Ok(b) => b,
        Err(e) => {
            let _ = std::fs::remove_dir_all(&temp);
            return Err(Error::io("building the sandbox", e));
        }
    };
    let mut layers = layers::layers(&enforced, mode, config.network, &protected, &hidden, unit);
    home::from_path::tell(&mut layers, &view.from_path);
    layers.extend(layers::denied_programs(
        &enforced,
        &shared.programs,
        spec.program_stubs.as_ref(),
    ));
    let (proxy, network_allow) = match &shared.proxy {
        Some(p) if !config.network => (Some(format!("127.0.0.1:{}", p.port())), p.names()),
        _ => (None, Vec::new()),
    };
    network_layer_detail(
        &mut layers,
        proxy.as_deref(),
        &network_allow,
        config,
        shared,
    );
    let active = Active {
        confinement: Some(confinement),
        report: SandboxReport {
            layers,
            caches: shared
                .caches
                .clone()
                .filter(|_| mode == SandboxMode::WorkspaceWrite),
            writable: writable_seen,
            // The home's hidden paths are told apart (see `annotate`): not a write to offer.
            own_dirs: own
                .box_paths()
                .into_iter()
                .filter(|p| Some(p) != own.home.as_ref() && Some(p) != own.other.as_ref())
                .collect(),
            own_home: own.home.clone(),
            hidden: hidden.paths,
            proxy,
            network_allow,
            note: config.note.clone(),
            network: config.network,
            ..SandboxReport::plain(mode)
        },
        temp: Some(temp),
        temp_seen: Some(temp_seen),
        workspace_seen: Some(view.workspace.clone()),
    };
    refuse_degraded(&active.report, config)?;
    Ok(active)
}

/// The box's own `/tmp` and runtime directory for one call, where it has them (see
/// [`RunSandbox::own_tmp`]).
struct OwnDirs<'a> {
    dirs: Option<&'a temp::RunDirs>,
    /// The runtime directory the run's goes over, unless a writable root holds it.
    runtime: Option<PathBuf>,
    /// The home the run's goes over (see `home`), on the same terms, and unless it lies
    /// in `/tmp` (the box's own already) or `home_read` keeps it whole.
    home: Option<PathBuf>,
    /// What is put back of the homes, read-only.
    put_back: Vec<PathBuf>,
    /// The person's home, wherever it is (in `/tmp` too), where the box hides it.
    person: Option<PathBuf>,
    /// Root's home, when it is not the person's, covered as the home is.
    other: Option<PathBuf>,
}

impl<'a> OwnDirs<'a> {
    fn for_call(
        shared: &'a RunSandbox,
        view: &host_view::HostView,
        writable_roots: &[PathBuf],
        plan: Option<&crate::plan::Plan>,
    ) -> Self {
        let dirs = shared.own_tmp(writable_roots);
        // Not one a writable root holds (a workspace of the whole home); one in it is put
        // back at its path.
        let apart = |dir: &PathBuf| !writable_roots.iter().any(|w| dir.starts_with(w));
        let runtime = dirs.and(shared.runtime_dir.clone()).filter(apart);
        // A home in `/tmp` is covered by the box's own `/tmp` already: what is put back
        // of it is put back there.
        let person = dirs.and(view.home.clone()).filter(apart);
        let home = person
            .clone()
            .filter(|h| !h.starts_with(corral_sys::box_dirs::BOX_TMP));
        let mut put_back = match person {
            Some(_) => view.put_back.clone(),
            None => Vec::new(),
        };
        let other = dirs
            .and(view.other_home.as_ref())
            .filter(|(root, _)| apart(root) && !root.starts_with(corral_sys::box_dirs::BOX_TMP))
            .map(|(root, toolchains)| {
                put_back.extend(toolchains.iter().cloned());
                root.clone()
            });
        // What the person's `PATH` and environment reveal (`home::from_path`): below the
        // box's own `/tmp` too, at the same path.
        if dirs.is_some() {
            put_back.extend(view.from_path.paths().cloned());
        }
        // A program the call names that lies in a covered home (`~/bin/tool`, a build's
        // own helper in a checkout there) is put back too, the file alone: what the call
        // runs, it must find.
        if let Some(plan) = plan {
            let covered: Vec<&PathBuf> = person.iter().chain(&other).collect();
            let programs = plan
                .stages()
                .filter_map(|stage| stage.program.as_ref().ok())
                // A link, and the file it leads to.
                .flat_map(|p| [Some(p.clone()), p.canonicalize().ok()])
                .flatten()
                .filter(|p| covered.iter().any(|h| p.starts_with(h)))
                .filter(|p| !put_back.iter().any(|b| p.starts_with(b)))
                .filter(|p| !writable_roots.iter().any(|w| p.starts_with(w)))
                .collect::<Vec<_>>();
            put_back.extend(programs);
        }
        OwnDirs {
            dirs,
            runtime,
            home,
            put_back,
            person,
            other,
        }
    }

    /// Where the box sees them: `/tmp`, the runtime directory and the home.
    fn box_paths(&self) -> Vec<PathBuf> {
        let tmp = self
            .dirs
            .map(|_| PathBuf::from(corral_sys::box_dirs::BOX_TMP));
        tmp.into_iter()
            .chain(self.runtime.clone())
            .chain(self.home.clone())
            .chain(self.other.clone())
            .collect()
    }

    /// Where the host keeps them.
    fn host_paths(&self) -> Vec<PathBuf> {
        let Some(dirs) = self.dirs else {
            return Vec::new();
        };
        let runtime = self.runtime.as_ref().map(|_| dirs.runtime.clone());
        let home = self.home.as_ref().map(|_| dirs.home.clone());
        let other = self.other.as_ref().map(|_| dirs.other_home.clone());
        std::iter::once(dirs.tmp.clone())
            .chain(runtime)
            .chain(home)
            .chain(other)
            .collect()
    }

    /// The run's own directories by where the box sees them: (box path, host path).
    fn pairs(&self, dirs: &temp::RunDirs) -> Vec<(PathBuf, PathBuf)> {
        let mut pairs = vec![(
            PathBuf::from(corral_sys::box_dirs::BOX_TMP),
            dirs.tmp.clone(),
        )];
        pairs.extend(self.runtime.clone().map(|r| (r, dirs.runtime.clone())));
        pairs.extend(self.home.clone().map(|h| (h, dirs.home.clone())));
        pairs.extend(self.other.clone().map(|h| (h, dirs.other_home.clone())));
        pairs
    }

    /// Remove from the run's own directories what earlier calls made there to put host
    /// paths back at and this call does not (`made`, the run's record): a host directory
    /// kept once (a rerun's) must not stay behind as an empty one the box writes into.
    /// Only what is empty goes; the record becomes what this call's `kept` paths need.
    fn tidy_skeleton(&self, dirs: &temp::RunDirs, kept: &[&PathBuf], made: &Mutex<Vec<PathBuf>>) {
        let pairs = self.pairs(dirs);
        let mut needed: Vec<PathBuf> = Vec::new();
        for path in kept {
            let Some((seen, host)) = pairs
                .iter()
                .filter(|(seen, _)| path.starts_with(seen) && path.as_path() != seen)
                .max_by_key(|(seen, _)| seen.as_os_str().len())
            else {
                continue;
            };
            let Ok(rest) = path.strip_prefix(seen) else {
                continue;
            };
            let mut at = host.clone();
            for part in rest.components() {
                at.push(part);
                needed.push(at.clone());
            }
        }
        let mut made = made.lock().unwrap_or_else(|e| e.into_inner());
        let mut stale: Vec<&PathBuf> = made.iter().filter(|p| !needed.contains(p)).collect();
        // Deepest first, so a directory empties before its parent is tried.
        stale.sort_by_key(|p| std::cmp::Reverse(p.components().count()));
        for path in stale {
            match std::fs::symlink_metadata(path) {
                Ok(m) if m.is_dir() => {
                    let _ = std::fs::remove_dir(path);
                }
                Ok(m) if m.len() == 0 => {
                    let _ = std::fs::remove_file(path);
                }
                _ => {}
            }
        }
        *made = needed;
    }

    /// Leave out of `hidden` what the box's own directories cover anyway (the read
    /// denies in the home or under the host's `/tmp`), but for what lies in a path the
    /// box keeps from the host there (a writable root, the workspace, a toolchain).
    fn drop_covered(&self, hidden: &mut reach::Hidden, roots: &[PathBuf], workspace: &Path) {
        let covered = self.box_paths();
        hidden.paths.retain(|p| {
            !covered.iter().any(|c| p.starts_with(c))
                || roots.iter().any(|r| p.starts_with(r))
                || self.put_back.iter().any(|b| p.starts_with(b))
                || p.starts_with(workspace)
        });
    }
}

/// A call outside any sandbox of corral's (`full`, or `external`: the caller's own box).
fn unsandboxed(mode: SandboxMode) -> Active {
    let mut report = SandboxReport::plain(mode);
    if mode == SandboxMode::External {
        report.layers.push(LayerReport {
            layer: Layer::External,
            level: Level::None,
            detail: "the caller's own box; corral applies none".into(),
        });
    }
    Active {
        confinement: None,
        report,
        temp: None,
        temp_seen: None,
        workspace_seen: None,
    }
}

/// What the confinement is built from: the writable roots, the protected paths that
/// exist (bind-mounted read-only), the read denies, the network.
fn spec(
    config: &SandboxConfig,
    shared: &RunSandbox,
    writable: &[PathBuf],
    protected: &[PathBuf],
    hidden: &reach::Hidden,
) -> sys::Spec {
    sys::Spec {
        writable: writable.to_vec(),
        writable_files: ["/dev/null", "/dev/zero", "/dev/full", "/dev/tty"]
            .into_iter()
            .map(PathBuf::from)
            .collect(),
        read_only: protected
            .iter()
            .filter_map(|p| mountable(p, writable))
            .collect(),
        network: config.network,
        unix_sockets: config.unix_sockets,
        join_network: shared.network.clone(),
        join_ipc: shared.ipc.clone(),
        deny_read: hidden.paths.clone(),
        private_dev: true,
        drop_caps: true,
        foreign_owner: foreign_owner(writable),
        nproc: None,
        closed_ports: listeners::ports(),
        ..sys::Spec::default()
    }
}

/// Where the read-only mount over the protected path `path` goes: the file or directory
/// it is, links resolved; `None` when it does not exist, or when it is a symbolic link
/// that leads out of every writable root (or to one). What such a link names is read-only in the box
/// already, or hidden from it (a command may link `corral.toml` to `~/.ssh/id_ed25519`),
/// and a mount over a path the box cannot see would fail every later call.
fn mountable(path: &Path, writable: &[PathBuf]) -> Option<PathBuf> {
    let real = path.canonicalize().ok()?;
    let linked = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    // Strictly inside: a link to the workspace itself would make all of it read-only.
    let inside = || {
        writable.iter().any(|w| {
            let w = w.canonicalize().unwrap_or_else(|_| w.clone());
            real.starts_with(&w) && real != w
        })
    };
    (!linked || inside()).then_some(real)
}

/// As root, the first owner other than root of an existing writable root: the box keeps
/// what it needs to write there (see [`corral_sys::sandbox_reach::OWNER_CAPS`]).
fn foreign_owner(writable: &[PathBuf]) -> Option<u32> {
    use std::os::unix::fs::MetadataExt;
    if !rustix::process::geteuid().is_root() {
        return None;
    }
    writable
        .iter()
        .filter_map(|root| std::fs::metadata(root).ok())
        .map(|meta| meta.uid())
        .find(|uid| *uid != 0)
}

/// The bound on processes the box sets itself (`RLIMIT_NPROC`, in a user namespace),
/// where the unit `containment` has no `pids.max`.
pub(crate) fn nproc_bound(
    containment: crate::spawn::UnitKind,
    pids_max: Option<u32>,
) -> Option<u64> {
    pids_max
        .filter(|_| !containment.bounds_processes())
        .map(u64::from)
}

/// Refuse a sandbox whose core this host cannot enforce at all (no Landlock for the
/// writes, nothing for the network), unless degrading is allowed.
fn refuse_degraded(report: &SandboxReport, config: &SandboxConfig) -> Result<()> {
    let missing: Vec<String> = report
        .layers
        .iter()
        .filter(|l| l.level == Level::None && matches!(l.layer, Layer::Landlock | Layer::Network))
        .map(|l| format!("{} ({})", l.layer, l.detail))
        .collect();
    if missing.is_empty() || config.allow_degraded {
        return Ok(());
    }
    Err(Error::new(
        crate::ErrorKind::Refused,
        format!(
            "the sandbox mode {} cannot be enforced on this host: {}. Nothing ran. Set \
             sandbox.allow_degraded to run anyway, or choose another mode.",
            config.mode,
            missing.join("; ")
        ),
    ))
}

/// Where a call's write redirects may go: the writable roots, and the box's own
/// directories (`/tmp`, the runtime directory, the home), whose redirects land in the
/// run's own.
/// Returns (the roots, the box's own directories among them).
pub(crate) fn redirect_roots(
    config: &SandboxConfig,
    workspace: &Path,
    shared: &RunSandbox,
) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let (mut roots, _) = roots(config, workspace, shared);
    let view = shared.view.get(config, workspace, &shared.own);
    let own = OwnDirs::for_call(shared, &view, &roots, None).box_paths();
    roots.extend(own.iter().cloned());
    (roots, own)
}

/// The roots a call in `config` may write besides its private temp (the workspace, the
/// configured and the allowed roots, the caches), and the protected paths inside them.
pub(crate) fn roots(
    config: &SandboxConfig,
    workspace: &Path,
    shared: &RunSandbox,
) -> (Vec<PathBuf>, Vec<PathBuf>) {
    if config.mode != SandboxMode::WorkspaceWrite {
        return (Vec::new(), Vec::new());
    }
    let mut writable = vec![workspace.to_path_buf()];
    for root in config
        .writable_roots
        .iter()
        .cloned()
        .chain(shared.allowed())
    {
        let root = workspace.join(root);
        writable.push(root.canonicalize().unwrap_or(root));
    }
    writable.extend(shared.caches.clone());
    (writable, config.protected_in(workspace))
}

/// `$HOME`, when set.
pub(crate) fn home() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
}

/// Say in the network layer what the allow-list does, or why it is not served.
fn network_layer_detail(
    layers: &mut [LayerReport],
    proxy: Option<&str>,
    names: &[String],
    config: &SandboxConfig,
    shared: &RunSandbox,
) {
    let Some(layer) = layers.iter_mut().find(|l| l.layer == Layer::Network) else {
        return;
    };
    if let Some(addr) = proxy.filter(|_| names.is_empty()) {
        layer.detail = format!(
            "the run's network namespace: loopback only, the network off; corral's proxy at \
             {addr} answers every HTTP(S) request with 403, and its resolver every lookup \
             with NXDOMAIN, at once"
        );
    } else if let Some(addr) = proxy {
        layer.detail = format!(
            "the run's network namespace: loopback only; out only through corral's proxy at              {addr} (HTTP, CONNECT, SOCKS5), which allows: {}",
            names.join(", ")
        );
    } else if !config.network_allow.is_empty() {
        let why = match &shared.network_error {
            Some(error) => error.clone(),
            None => format!(
                "no run network namespace, because {}",
                layers::why_no_namespaces()
            ),
        };
        layer.detail.push_str(&format!(
            "; network_allow not served (no proxy: {why}), so nothing is reachable"
        ));
    }
}
/// Words in stderr that suggest the sandbox refused something. A guess: the same words
/// come from ordinary permission errors.
const DENIAL_HINTS: &[&str] = &[
    "read-only file system",
    "permission denied",
    "operation not permitted",
    "network is unreachable",
    "network unreachable",
    "could not resolve host",
    "temporary failure in name resolution",
    "failed to connect",
    "connection refused",
];

/// A suspected denial in a failed sandboxed command's stderr: the line that matched.
pub(crate) fn suspect_denial(stderr: &str) -> Option<String> {
    for line in stderr.lines() {
        let lower = line.to_ascii_lowercase();
        if let Some(hint) = DENIAL_HINTS.iter().find(|h| lower.contains(*h)) {
            let mut line = line.trim().to_string();
            if line.chars().count() > 200 {
                line = line.chars().take(199).collect::<String>() + "…";
            }
            return Some(format!("a guess from stderr ({hint:?}): {line}"));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn denials_are_guessed_from_stderr() {
        assert!(suspect_denial("touch: cannot touch '/x': Read-only file system").is_some());
        assert!(suspect_denial("all good").is_none());
    }

    #[test]
    fn modes_round_trip() {
        for m in SandboxMode::ALL {
            assert_eq!(SandboxMode::from_name(m.name()), Some(m));
        }
    }
}
