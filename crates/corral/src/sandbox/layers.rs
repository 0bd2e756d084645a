//! What each layer of a call's sandbox reached on this host, from what the confinement
//! reports it enforced: one function per layer, each saying in a line what the layer
//! holds back or lacks.

use std::path::PathBuf;

use corral_sys::sandbox::Enforced;

use super::reach;
use crate::config::sandbox::SandboxMode;
use crate::outcome::sandbox_report::{Layer, LayerReport, Level};

/// What the sandbox's report says of the call's unit: its name (whether it has a PID
/// namespace and `pids.max`), the bound on processes asked for, and its memory bound.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Unit {
    /// What the unit is made of: a PID namespace, a cgroup's bound on processes.
    pub kind: crate::spawn::UnitKind,
    pub pids_max: Option<u32>,
    pub memory: crate::spawn::MemoryBound,
    pub nice: u8,
}

/// Every layer a call in `mode` gets, in the order a report lists them. `unit` says what
/// the call's containment unit holds (a PID namespace, a bound on processes, on memory).
pub(super) fn layers(
    e: &Enforced,
    mode: SandboxMode,
    network: bool,
    protected: &[PathBuf],
    hidden: &reach::Hidden,
    unit: &Unit,
) -> Vec<LayerReport> {
    let mut out = vec![landlock(e, network), read_only_host(e)];
    if !network {
        out.push(network_off(e));
    }
    out.push(ipc_namespace(e));
    if mode == SandboxMode::WorkspaceWrite {
        out.push(protected_paths(e, protected));
    }
    out.extend([
        read_denies(e, hidden),
        home(e),
        capabilities(e),
        private_dev(e),
        seccomp(e),
        socket_families(e, network),
        launch_hygiene(e),
    ]);
    out.extend(processes(unit.kind, e.nproc));
    out.push(memory(unit));
    out
}

/// The call's memory bound and priority.
fn memory(unit: &Unit) -> LayerReport {
    use crate::spawn::MemoryBound;
    let nice = if unit.nice > 0 {
        format!(
            "; runs {} steps nicer than corral, which it cannot undo",
            unit.nice
        )
    } else {
        String::new()
    };
    match unit.memory {
        MemoryBound::Bound {
            bytes,
            whole_call: true,
        } => report(
            Layer::Memory,
            Level::Full,
            format!(
                "memory.max {} for the call's processes together (the whole call ends when \
                 it is reached; no swap){nice}",
                crate::config::human_bytes(bytes)
            ),
        ),
        MemoryBound::Bound { bytes, .. } => report(
            Layer::Memory,
            Level::Partial,
            format!(
                "{} for the call's processes together, in the v1 memory hierarchy: when it \
                 is reached the kernel ends the largest process, and the rest of the call \
                 goes on (a v2 group would end it all){nice}",
                crate::config::human_bytes(bytes)
            ),
        ),
        MemoryBound::PerProcess {
            bytes,
            no_controller,
        } => {
            let why = if no_controller {
                "the cgroup v2 `memory` controller is not enabled where corral makes its \
                 groups"
                    .to_string()
            } else {
                why_no_cgroup()
            };
            report(
                Layer::Memory,
                Level::Partial,
                format!(
                    "per process (RLIMIT_DATA), {} each; shared memory and files in \
                     /tmp not counted (no bound for the call together: {why}){nice}",
                    crate::config::human_bytes(bytes)
                ),
            )
        }
        MemoryBound::Off => report(
            Layer::Memory,
            Level::None,
            format!("no bound: turned off (`memory = \"none\"`){nice}"),
        ),
        MemoryBound::NoController => report(
            Layer::Memory,
            Level::None,
            format!(
                "no bound: the cgroup v2 `memory` controller is not enabled where corral \
                 makes its groups{nice}"
            ),
        ),
        MemoryBound::NoCgroup => report(
            Layer::Memory,
            Level::None,
            format!("no bound: {}{nice}", why_no_cgroup()),
        ),
    }
}

fn report(layer: Layer, level: Level, detail: impl Into<String>) -> LayerReport {
    LayerReport {
        layer,
        level,
        detail: detail.into(),
    }
}

/// Landlock: what may be written, TCP where the ABI has it, and signals' scope.
fn landlock(e: &Enforced, network: bool) -> LayerReport {
    if !e.landlock_fs {
        return report(
            Layer::Landlock,
            Level::None,
            "Landlock is not available (a kernel before 5.13, or `landlock` missing from the \
             boot's `lsm=` list), so what it holds stays exposed: writes anywhere this user \
             may write (the read-only host still keeps what is not a writable root's, where \
             there is one), the /proc entries of processes outside the box (corral's own are \
             non-dumpable), signals to them, and abstract Unix sockets where the network is \
             on",
        );
    }
    let mut reach = vec!["writes confined"];
    if e.landlock_abi < 3 {
        reach.push("truncation not confined (ABI < 3)");
    }
    let closed;
    if !network {
        reach.push(if e.landlock_net {
            "TCP bind/connect refused"
        } else if e.net_namespace_shared {
            "TCP left to the run's network namespace"
        } else {
            "no TCP rules (ABI < 4)"
        });
    } else if !e.landlock_closed_ports.is_empty() {
        let ports: Vec<String> = e.landlock_closed_ports.iter().map(u16::to_string).collect();
        closed = format!(
            "TCP connects to corral's own port {} refused on every address (a remote \
             service on that port too)",
            ports.join(", ")
        );
        reach.push(&closed);
    } else if !super::listeners::ports().is_empty() {
        reach.push("listener: token only (no TCP rules below ABI 4)");
    }
    reach.push(if e.landlock_scope {
        "signals and abstract sockets scoped"
    } else {
        "signals not scoped (ABI < 6)"
    });
    let level = if e.landlock_abi >= 6 {
        Level::Full
    } else {
        Level::Partial
    };
    let detail = format!("ABI {}: {}", e.landlock_abi, reach.join(", "));
    report(Layer::Landlock, level, detail)
}

/// What Landlock does not cover (`chmod`, `chown`, `utime`, `setxattr`): every mount
/// outside the writable roots read-only.
fn read_only_host(e: &Enforced) -> LayerReport {
    if e.read_only_host {
        report(
            Layer::ReadOnlyHost,
            Level::Full,
            if e.read_only_walk {
                "every mount read-only but the writable roots', each remounted by itself \
                 (no mount_setattr before Linux 5.12, so no /tmp of the box's own): no mode, \
                 owner, time or attribute of a host file can change"
            } else if e.own_tmp {
                "every mount read-only but the writable roots', with a /tmp of the run's \
                 own over the host's: no mode, owner, time or attribute of a host file can \
                 change"
            } else {
                "every mount read-only but the writable roots' and the private temp's: no \
                 mode, owner, time or attribute of a host file can change"
            },
        )
    } else if e.mount_namespace {
        report(
            Layer::ReadOnlyHost,
            Level::None,
            "the host's mounts stay as they are (mount_setattr needs Linux 5.12): Landlock \
             confines writes, but not a chmod, chown, utime or setxattr of a host file",
        )
    } else {
        report(
            Layer::ReadOnlyHost,
            Level::None,
            format!(
                "no mount namespace ({}): a chmod, chown, utime or setxattr of a host file \
                 the command owns is not refused",
                why_no_namespaces()
            ),
        )
    }
}

/// System V IPC and POSIX message queues: a namespace (the run's or the call's own).
fn ipc_namespace(e: &Enforced) -> LayerReport {
    if e.ipc_namespace_shared {
        report(
            Layer::IpcNamespace,
            Level::Full,
            "the run's own: shared memory, semaphores and message queues of the host out of \
             reach, shared by the run's calls",
        )
    } else if e.ipc_namespace {
        report(
            Layer::IpcNamespace,
            Level::Full,
            "the call's own: shared memory, semaphores and message queues of the host out of \
             reach",
        )
    } else {
        report(
            Layer::IpcNamespace,
            Level::None,
            format!(
                "no IPC namespace ({}): the host's System V shared memory, semaphores and \
                 message queues are reachable by their mode",
                why_no_namespaces()
            ),
        )
    }
}

/// The network, when it is off: a namespace (the run's or the call's own), else seccomp.
fn network_off(e: &Enforced) -> LayerReport {
    if e.net_namespace_shared {
        report(
            Layer::Network,
            Level::Full,
            "the run's network namespace: loopback only (up, shared by the run's calls)",
        )
    } else if e.net_namespace {
        report(
            Layer::Network,
            Level::Full,
            "a network namespace of its own (loopback only, down)",
        )
    } else if e.seccomp_all_sockets {
        report(
            Layer::Network,
            Level::Partial,
            format!(
                "seccomp refuses socket(2), socketpair still works: no network namespace, because {}",
                why_no_namespaces()
            ),
        )
    } else {
        report(
            Layer::Network,
            Level::None,
            "neither a network namespace nor seccomp: the network is reachable",
        )
    }
}

/// The protected paths (`workspace-write`): bind-mounted read-only, those absent named.
fn protected_paths(e: &Enforced, protected: &[PathBuf]) -> LayerReport {
    if !e.mount_namespace {
        let detail = format!(
            "protected paths are writable: no mount namespace, because {}",
            why_no_namespaces()
        );
        return report(Layer::ProtectedPaths, Level::None, detail);
    }
    // Git metadata made during a call is moved out of the workspace after it
    // (`appeared.rs`): the host's git never reads it, so it is not a gap.
    let absent: Vec<String> = protected
        .iter()
        .filter(|p| !p.exists())
        .filter(|p| !p.components().any(|c| c.as_os_str() == ".git"))
        .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .collect();
    if absent.is_empty() {
        let detail = format!("{} bind-mounted read-only", e.read_only_mounts);
        return report(Layer::ProtectedPaths, Level::Full, detail);
    }
    let detail = format!(
        "{} bind-mounted read-only; absent, so could be created: {}",
        e.read_only_mounts,
        absent.join(", ")
    );
    report(Layer::ProtectedPaths, Level::Partial, detail)
}

/// The read denies: the paths hidden, and those left readable because they hold the
/// workspace or a writable root.
fn read_denies(e: &Enforced, hidden: &reach::Hidden) -> LayerReport {
    if !e.mount_namespace {
        let detail = format!(
            "{} paths stay readable: no mount namespace, because {}",
            hidden.paths.len(),
            why_no_namespaces()
        );
        return report(Layer::ReadDenies, Level::None, detail);
    }
    let listed = |paths: &[PathBuf]| {
        paths
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let kept = if hidden.kept.is_empty() {
        String::new()
    } else {
        format!(
            "; left readable because they hold the workspace or a writable root: {}",
            listed(&hidden.kept)
        )
    };
    // Root's files by mode are counted, not named (there may be hundreds).
    let named: Vec<PathBuf> = hidden
        .paths
        .iter()
        .filter(|p| !hidden.by_mode.paths.contains(p))
        .cloned()
        .collect();
    let names = if named.is_empty() {
        String::new()
    } else {
        format!(": {}", listed(&named))
    };
    let level = if hidden.kept.is_empty() {
        Level::Full
    } else {
        Level::Partial
    };
    let plural = if e.read_denied == 1 { "" } else { "s" };
    let detail = format!(
        "{} path{plural} hidden by empty read-only mounts{names}{kept}{}",
        e.read_denied,
        root_files(&hidden.by_mode)
    );
    report(Layer::ReadDenies, level, detail)
}

/// The read denies' words for root's files hidden by their mode (`reach::root_files`):
/// empty when corral does not run as root.
fn root_files(found: &reach::root_files::Found) -> String {
    if !rustix::process::geteuid().is_root() {
        return String::new();
    }
    let n = found.paths.len();
    let plural = if n == 1 { "" } else { "s" };
    let mut text = format!(
        "; root's files: hidden by mode, {n} mount{plural} (each file others may not read \
         and each directory they may not enter under {})",
        reach::root_files::ROOTS.join(", ")
    );
    if !found.collapsed.is_empty() {
        let dirs: Vec<String> = found
            .collapsed
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        text.push_str(&format!(
            "; hidden whole, holding more than {} such files: {}",
            reach::root_files::PER_DIR,
            dirs.join(", ")
        ));
    }
    if found.stopped {
        text.push_str(&format!(
            "; the walk stopped at its bound ({} mounts, {} entries): what lies past it stays \
             readable",
            reach::root_files::MOST,
            reach::root_files::MOST_VISITED
        ));
    }
    text
}

/// The home: what of it the box sees.
fn home(e: &Enforced) -> LayerReport {
    if e.own_home {
        let others: String = e
            .other_homes
            .iter()
            .map(|h| format!("; {} (root's) likewise, its toolchains only", h.display()))
            .collect();
        report(
            Layer::Home,
            Level::Full,
            format!(
                "toolchains only: the rest of the home is a directory of the run's own; \
                 `[sandbox] home_read` puts back more{others}{}",
                configuration()
            ),
        )
    } else if e.own_tmp {
        report(
            Layer::Home,
            Level::Partial,
            "the host's, readable but for the read denies: a writable root holds it, it lies \
             in /tmp, or `home_read = [\"~\"]` keeps it whole",
        )
    } else {
        report(
            Layer::Home,
            Level::None,
            "the host's, readable but for the read denies: no mount namespace with \
             mount_setattr (Linux 5.12) to cover it",
        )
    }
}

/// The home layer's words for the person's configuration (`home::derived`).
fn configuration() -> String {
    let line = super::home::configuration();
    if line.is_empty() {
        String::new()
    } else {
        format!("; {line}")
    }
}

/// Root's capabilities.
fn capabilities(e: &Enforced) -> LayerReport {
    if e.caps_dropped && e.caps_kept.is_empty() {
        report(
            Layer::Capabilities,
            Level::Full,
            "none held: every capability dropped from the bounding, effective, permitted, \
             inheritable and ambient sets; no real-time priority",
        )
    } else if e.caps_dropped {
        let kept: Vec<String> = e
            .caps_kept
            .iter()
            .map(|c| corral_sys::sandbox_reach::capability_name(*c))
            .collect();
        let owner = e
            .foreign_owner
            .map_or_else(|| "another user".to_string(), |uid| format!("uid {uid}"));
        let detail = format!(
            "all but {} dropped: a writable root belongs to {owner}, which the box (root) \
             writes only with them, and with them it reads and writes files whatever their \
             mode (Landlock still confines where it writes, and the read denies still \
             hide); run corral as that user to hold none",
            kept.join(" and ")
        );
        report(Layer::Capabilities, Level::Partial, detail)
    } else if e.caps_none_held {
        report(
            Layer::Capabilities,
            Level::Full,
            "none held (not root): nothing reads around permissions",
        )
    } else {
        report(
            Layer::Capabilities,
            Level::None,
            "the capabilities could not be dropped: a command as root reads around permissions",
        )
    }
}

/// A `/dev` of the sandbox's own.
fn private_dev(e: &Enforced) -> LayerReport {
    if e.private_dev {
        report(
            Layer::PrivateDev,
            Level::Full,
            "null, zero, full, random, urandom, tty, pts, ptmx, shm only: no raw devices",
        )
    } else {
        let detail = format!(
            "the host's /dev is visible: no mount namespace, because {}",
            why_no_namespaces()
        );
        report(Layer::PrivateDev, Level::None, detail)
    }
}

/// The seccomp filter.
fn seccomp(e: &Enforced) -> LayerReport {
    if !e.seccomp {
        return report(
            Layer::Seccomp,
            Level::None,
            "seccomp is not available (a kernel without seccomp filters, or an architecture \
             corral has no filter for)",
        );
    }
    report(
        Layer::Seccomp,
        Level::Full,
        "ptrace, io_uring, mount, namespaces, bpf, perf, keyrings, modules, set-ID modes \
         refused",
    )
}

/// Which sockets a command may open, and which Unix sockets of the host's it reaches.
fn socket_families(e: &Enforced, network: bool) -> LayerReport {
    if !e.seccomp {
        return report(
            Layer::SocketFamilies,
            Level::None,
            "no seccomp filter: every socket family can be opened (AF_VSOCK to a \
             hypervisor, AF_UNIX to any socket file of the host's)",
        );
    }
    if e.seccomp_all_sockets {
        return report(
            Layer::SocketFamilies,
            Level::Full,
            "socket(2) refused: no network namespace to hold the network",
        );
    }
    let unix = if !e.seccomp_unix_sockets {
        let hidden = match e.sockets_hidden {
            0 => String::new(),
            1 => ", 1 socket file of the host's hidden".into(),
            n => format!(", {n} socket files of the host's hidden"),
        };
        let runtime = if e.own_runtime {
            " and runtime directory"
        } else {
            ""
        };
        format!("unix (a /tmp{runtime} of the run's own{hidden})")
    } else if !e.own_tmp {
        "unix refused (the box has no /tmp of its own here, so the host's sockets would be \
         in reach: mount_setattr needs Linux 5.12 and a mount namespace)"
            .into()
    } else {
        "unix refused (sandbox.unix_sockets is off)".into()
    };
    let inet = if network {
        "inet, inet6 (the network is on)"
    } else {
        "inet, inet6 (inside the network namespace)"
    };
    let abstract_sockets = if !network || e.landlock_scope {
        ""
    } else {
        "; the host's abstract Unix sockets are reachable (network on, Landlock ABI < 6)"
    };
    let level = if abstract_sockets.is_empty() {
        Level::Full
    } else {
        Level::Partial
    };
    let detail = format!(
        "{unix}, {inet}, netlink (routes) only; any other family answers EAFNOSUPPORT{abstract_sockets}"
    );
    report(Layer::SocketFamilies, level, detail)
}

/// What a started process inherits.
fn launch_hygiene(e: &Enforced) -> LayerReport {
    let (level, descriptors) = if e.close_fds {
        (Level::Full, ", descriptors above 2 closed on exec")
    } else {
        (
            Level::Partial,
            "; close_range missing: only CLOEXEC descriptors are closed",
        )
    };
    let detail = format!(
        "environment filtered, LD_* removed, no_new_privs{descriptors}; no new session \
         (TIOCSTI refused instead)"
    );
    report(Layer::LaunchHygiene, level, detail)
}

/// The processes: the call's own PID namespace, and the bound on how many.
fn processes(kind: crate::spawn::UnitKind, nproc: Option<u64>) -> [LayerReport; 2] {
    let containment = kind.name();
    let namespace = if kind.pid_namespace {
        report(
            Layer::PidNamespace,
            Level::Full,
            "the command sees only its call's processes and cannot signal others; all end \
             with the call",
        )
    } else {
        report(
            Layer::PidNamespace,
            Level::None,
            format!(
                "host processes visible, and a process that leaves its group can outlive the \
                 call (containment {containment}): no PID namespace, because {}",
                why_no_pid_namespace()
            ),
        )
    };
    let pids_max = if kind.bounds_processes() {
        report(
            Layer::PidsMax,
            Level::Full,
            format!("containment {containment}"),
        )
    } else if let Some(max) = nproc {
        let detail = format!(
            "no cgroup ({}): forks bounded instead by RLIMIT_NPROC {max}, counted over every \
             process of the run's boxes in corral's user namespace",
            why_no_cgroup()
        );
        report(Layer::PidsMax, Level::Partial, detail)
    } else {
        let detail = format!(
            "forks are not bounded (containment {containment}): {}",
            why_no_cgroup()
        );
        report(Layer::PidsMax, Level::None, detail)
    };
    [namespace, pids_max]
}

/// Why the mount and network namespaces are missing, in words a user can act on: as root,
/// the kernel (or a container) refused them; otherwise corral lacks `CAP_SYS_ADMIN`, and
/// the user-namespace probe says whether the host would allow one.
pub(super) fn why_no_namespaces() -> String {
    if rustix::process::geteuid().is_root() {
        return "the kernel refused them to root: a container without CAP_SYS_ADMIN, or a \
                seccomp profile that refuses unshare"
            .into();
    }
    match corral_sys::userns::probe() {
        corral_sys::userns::UserNamespaces::Allowed => {
            "corral is not root (no CAP_SYS_ADMIN), and the box could not be made in a user \
             namespace, though this host allows them"
                .into()
        }
        corral_sys::userns::UserNamespaces::Refused(why) => {
            format!("corral is not root (no CAP_SYS_ADMIN), and {why}")
        }
    }
}

/// Why a call has no PID namespace.
fn why_no_pid_namespace() -> String {
    if rustix::process::geteuid().is_root() {
        "turned off (--pid-namespace off, `pid_namespace = false`), or refused by the kernel".into()
    } else if corral_sys::sandbox::host_support().user_namespace {
        "corral is not root, and no PID namespace could be made in its user namespace \
         (turned off with --pid-namespace off, or this kernel cannot start a command in \
         one: clone3, Linux 5.9)"
            .into()
    } else {
        why_no_namespaces()
    }
}

/// Why a call has no cgroup of its own.
fn why_no_cgroup() -> String {
    if rustix::process::geteuid().is_root() {
        "no cgroup hierarchy corral may write here, or cgroups turned off".into()
    } else {
        "corral is not root and runs in no delegated cgroup v2 subtree (started under \
         `systemd-run --user --scope -p Delegate=yes corral …` it gets one)"
            .into()
    }
}

/// The programs a deny rule names (none: no line): each file of theirs covered by a stub
/// that cannot run them, or why nothing is.
pub(super) fn denied_programs(
    e: &Enforced,
    denied: &super::programs::DeniedPrograms,
    stubs: Option<&corral_sys::program_stubs::StubSet>,
) -> Option<LayerReport> {
    let rules = denied.programs.len();
    if rules == 0 {
        return None;
    }
    let (level, detail) = if !e.mount_namespace && e.programs_landlocked > 0 {
        (
            Level::Full,
            format!(
                "the programs a deny rule names cannot start or be read: {} files left \
                 out of a Landlock layer that grants running and reading everywhere \
                 else (no mount namespace for stubs on this host)",
                e.programs_landlocked
            ),
        )
    } else if !e.mount_namespace {
        (
            Level::None,
            "unenforced: no mount namespace for stubs and no Landlock layer on this host; the deny \
             rules are corral's checks of what a command line names"
                .to_string(),
        )
    } else if stubs.is_none() {
        (
            Level::None,
            "unenforced: no stub can be made for this architecture; the deny rules are \
             corral's checks of what a command line names"
                .to_string(),
        )
    } else {
        let covered = stubs.map_or(0, |s| s.stubs.len());
        let multi = if covered < rules {
            format!(
                "; {} not installed or a multi-call binary's, left to corral's checks",
                rules - covered
            )
        } else {
            String::new()
        };
        (
            Level::Full,
            format!(
                "{covered} of {rules} programs a deny rule names cannot start: {} files \
                 covered by a stub that names the rule and exits 126, however they are \
                 reached{multi}",
                e.programs_stubbed
            ),
        )
    };
    Some(report(Layer::DeniedPrograms, level, detail))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn landlock_with(abi: u32, closed: &[u16]) -> String {
        let e = Enforced {
            landlock_abi: abi,
            landlock_fs: true,
            landlock_scope: abi >= 6,
            landlock_closed_ports: closed.to_vec(),
            ..Enforced::default()
        };
        landlock(&e, true).detail
    }

    #[test]
    fn corral_s_own_ports_are_named_where_landlock_closes_them() {
        let detail = landlock_with(7, &[8123]);
        assert!(
            detail.contains("corral's own port 8123 refused on every address"),
            "{detail}"
        );
        assert!(
            detail.contains("a remote service on that port too"),
            "{detail}"
        );
    }

    #[test]
    fn below_abi_4_a_listener_is_guarded_by_its_token_only() {
        super::super::listeners::keep_out(8124);
        let detail = landlock_with(3, &[]);
        assert!(detail.contains("listener: token only"), "{detail}");
    }
}
