//! The kernel side of corral's sandbox: probe what the host can enforce, build every
//! restriction in the parent, and apply them in the child between fork and exec with raw
//! syscalls only.
//!
//! The layers, in the order the child applies them (after the containment unit's own
//! hooks, so the child is already in its cgroup and has its parent-death signal):
//!
//! 1. `unshare(CLONE_NEWNS)`, and for the network off either `setns` into the run's
//!    network namespace ([`NetNamespace`]: loopback up, nothing else) or, without one,
//!    `unshare(CLONE_NEWNET)` (a namespace of the call's own whose loopback is down); a
//!    mount namespace of its own, made private, in which every mount is read-only but
//!    the writable roots' and `/tmp` and the runtime directory are the run's own (see
//!    [`crate::box_dirs`]), the protected paths are bind-mounted read-only over
//!    themselves, the read-denied paths and the host's socket files are hidden under
//!    empty read-only mounts and `/dev` is replaced by a private one; then the
//!    capabilities that read around permissions are dropped (see [`crate::sandbox_reach`]).
//!    A child whose PID namespace's init copied these very mounts (see
//!    [`Confinement::use_mounts_in_place`]) makes no mount namespace and takes them as
//!    they are.
//! 2. `close_range(3, ~0, CLOSE_RANGE_CLOEXEC)`: no descriptor above stderr crosses exec.
//! 3. `prctl(PR_SET_NO_NEW_PRIVS)`: no set-uid elevation; required by the next two.
//! 4. `landlock_restrict_self(ruleset)`: writes only beneath the allowed roots; with ABI
//!    4+ no TCP bind/connect (network off); with ABI 6+ no signals to, and no abstract
//!    Unix sockets of, processes outside the sandbox.
//! 5. `seccomp(SECCOMP_SET_MODE_FILTER)`: the syscalls the other layers do not cover.
//!
//! Everything the child uses (the ruleset descriptor, the path strings, the BPF programs)
//! is built before the fork and only read afterwards: the hook allocates nothing, takes no
//! lock and logs nothing. An error is returned as a raw errno, and the spawn fails with it.

use std::collections::BTreeMap;
use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::Command;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use crate::box_redirects::Redirects;
use crate::sandbox_reach::Reach;
use landlock::{
    ABI, Access, AccessFs, AccessNet, NetPort, PathBeneath, PathFd, Ruleset, RulesetAttr,
    RulesetCreatedAttr, Scope,
};
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

/// What the host offers, probed once per process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HostSupport {
    /// The Landlock ABI version (0: no Landlock).
    pub landlock_abi: u32,
    /// Whether the child can make network and mount namespaces: as root (`CAP_SYS_ADMIN`),
    /// or as an ordinary user inside this process's user namespace.
    pub namespaces: bool,
    /// Whether those are made inside [`crate::userns::shared`] (an ordinary user).
    pub user_namespace: bool,
    /// Whether seccomp filters can be installed (and BPF built for this architecture).
    pub seccomp: bool,
    /// Whether `close_range(2)` exists (Linux 5.11+).
    pub close_range: bool,
    /// Whether `mount_setattr(2)` exists (Linux 5.12+): the host's mounts can be made
    /// read-only in the box, whole trees at once.
    pub mount_setattr: bool,
}

impl HostSupport {
    /// Whether a box can keep a program from starting: by a mount over it, or by Landlock.
    pub fn namespaces_or_landlock(&self) -> bool {
        self.namespaces || self.landlock_abi > 0
    }
}

/// Probe the host once: the Landlock ABI, whether a child may unshare namespaces (tried
/// for real on `/bin/true`), whether seccomp is there.
pub fn host_support() -> HostSupport {
    static HOST: OnceLock<HostSupport> = OnceLock::new();
    *HOST.get_or_init(|| {
        let direct = probe_namespaces(None);
        let user_namespace = !direct
            && crate::userns::shared().is_some_and(|ns| probe_namespaces(Some(ns.as_raw_fd())));
        HostSupport {
            landlock_abi: landlock_abi(),
            namespaces: direct || user_namespace,
            user_namespace,
            seccomp: probe_seccomp(),
            close_range: probe_close_range(),
            mount_setattr: probe_mount_setattr(),
        }
    })
}

/// `mount_setattr(2)` with no flags and an invalid descriptor: `ENOSYS` where the kernel
/// lacks it, `EBADF` or `EINVAL` where it has it.
fn probe_mount_setattr() -> bool {
    // SAFETY: the call is refused before it reads the null pointers.
    let r = unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            -1,
            std::ptr::null::<libc::c_char>(),
            0u32,
            std::ptr::null::<crate::box_dirs::MountAttr>(),
            0usize,
        )
    };
    r == 0 || errno() != libc::ENOSYS
}

/// The Landlock ABI the running kernel supports; 0 when Landlock is absent or disabled.
pub fn landlock_abi() -> u32 {
    const LANDLOCK_CREATE_RULESET_VERSION: u32 = 1;
    // SAFETY: landlock_create_ruleset(NULL, 0, VERSION) only returns a number; it takes no
    // pointer that is dereferenced and creates no descriptor.
    let v = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<u8>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    u32::try_from(v).unwrap_or(0)
}

/// Whether this process may make the namespaces a sandboxed child makes: a child that
/// borrows corral's memory (nothing is copied, nothing is exec'd) calls the same
/// `unshare(2)` and exits with what it said.
fn probe_namespaces(join_user: Option<libc::c_int>) -> bool {
    extern "C" fn try_unshare(arg: *mut libc::c_void) -> libc::c_int {
        // The user namespace to join first, passed as an integer in the pointer (-1: none).
        let join = arg as isize as libc::c_int;
        // SAFETY: raw setns(2) and unshare(2) with constant flags on a descriptor the
        // parent holds open, in a child with a stack of its own.
        let joined = join < 0 || unsafe { libc::setns(join, libc::CLONE_NEWUSER) } == 0;
        // SAFETY: as above.
        let ok = joined && unsafe { libc::unshare(libc::CLONE_NEWNET | libc::CLONE_NEWNS) } == 0;
        if ok { 0 } else { 1 }
    }
    let arg = join_user.unwrap_or(-1) as isize as *mut libc::c_void;
    let Ok(mut stack) = crate::clone_stack::Stack::new() else {
        return rustix::process::geteuid().is_root();
    };
    let flags = libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD;
    let all = crate::clone_stack::Signals::block_all();
    // SAFETY: `try_unshare` runs on `stack`, a mapping of its own that outlives it
    // (CLONE_VFORK: clone returns once the child has exited). It touches no memory of
    // corral's but, through the C library's errno, this thread's thread-local storage,
    // while this thread is suspended; every signal is blocked meanwhile, so no handler of
    // corral's runs in it. CLONE_NEWNS implies a file-system context of the child's own,
    // so its unshare leaves corral's untouched.
    let pid = unsafe { libc::clone(try_unshare, stack.top(), flags, arg) };
    drop(all);
    drop(stack);
    if pid < 0 {
        return false;
    }
    let mut status = 0;
    let waited = loop {
        // SAFETY: waitpid(2) on the child just made, with a status word on this frame.
        let r = unsafe { libc::waitpid(pid, &raw mut status, libc::__WALL) };
        if r >= 0 || errno() != libc::EINTR {
            break r;
        }
    };
    waited == pid && libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0
}

fn probe_seccomp() -> bool {
    let in_kernel = std::fs::read_to_string("/proc/self/status")
        .is_ok_and(|s| s.lines().any(|l| l.starts_with("Seccomp:")));
    in_kernel && TargetArch::try_from(std::env::consts::ARCH).is_ok()
}

fn probe_close_range() -> bool {
    // close_range on an empty range above any descriptor we could hold: a no-op, but it
    // tells ENOSYS from support.
    // SAFETY: closes nothing (first > last is EINVAL; an empty high range is a no-op).
    let r = unsafe { libc::syscall(libc::SYS_close_range, u32::MAX - 1, u32::MAX - 1, 0u32) };
    r == 0 || errno() != libc::ENOSYS
}

fn errno() -> i32 {
    io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EPERM)
}

/// What to confine a command to.
#[derive(Debug, Clone, Default)]
pub struct Spec {
    /// Directories (or files) beneath which every write is allowed. Missing ones are skipped.
    pub writable: Vec<PathBuf>,
    /// Files that may be written but not replaced (`/dev/null`, …). Missing ones are skipped.
    pub writable_files: Vec<PathBuf>,
    /// Existing paths bind-mounted read-only over themselves in the mount namespace.
    pub read_only: Vec<PathBuf>,
    /// Existing directories bound over themselves, writable, before the read-only binds
    /// (which may lie inside them): a mount point cannot be renamed or removed, so the
    /// box cannot move one aside and put a copy in its place (a repository's `.git`).
    pub pinned: Vec<PathBuf>,
    /// Make every mount of the box read-only but these directories (the writable roots),
    /// which keep their own mounts as they are: a `chmod`, `chown`, `utime` or `setxattr`
    /// of a host file (none of which Landlock covers) fails there. Empty: the host's
    /// mounts are left as they are.
    pub writable_mounts: Vec<PathBuf>,
    /// Paths the box must see (read-only) where its own `/tmp` would hide them: the
    /// workspace of a `read-only` box.
    pub visible: Vec<PathBuf>,
    /// A directory of the run's mounted over `/tmp` in the box (with
    /// [`Self::writable_mounts`], on a host with `mount_setattr`): no socket or file a host
    /// program keeps in `/tmp` is reachable. See [`crate::box_dirs`].
    pub own_tmp: Option<PathBuf>,
    /// (a directory of the run's, the runtime directory it goes over): the user's D-Bus,
    /// key agents and rootless container engines unreachable.
    pub own_runtime: Option<(PathBuf, PathBuf)>,
    /// (a directory of the run's, the home it goes over): the box sees of the home only
    /// what [`Self::visible`] names there (the toolchains) and the writable roots in it.
    pub own_home: Option<(PathBuf, PathBuf)>,
    /// (a directory of the run's, another home it goes over): root's when it is not the
    /// person's, seen as [`Self::own_home`] is.
    pub other_homes: Vec<(PathBuf, PathBuf)>,
    /// Socket files hidden as the read denies are (`connect(2)` then reaches no socket):
    /// a container engine's, the system bus. One gone by the time the box is made is
    /// skipped.
    pub hide_sockets: Vec<PathBuf>,
    /// Whether the network stays on.
    pub network: bool,
    /// Whether `socket(AF_UNIX, …)` may be allowed: it is where the box has its own `/tmp`
    /// (see [`Self::own_tmp`]), so the host's sockets are out of its reach.
    pub unix_sockets: bool,
    /// With the network off: join this namespace instead of making one per call. Its
    /// loopback is up, so TCP on loopback is left to it (Landlock's TCP rules stay off).
    pub join_network: Option<NetNamespace>,
    /// Join this IPC namespace (the run's) instead of making one per call: a handle's
    /// shared memory or message queue serves the run's later calls, and nothing of the
    /// host's System V IPC is reachable.
    pub join_ipc: Option<IpcNamespace>,
    /// Paths hidden by an empty read-only mount (see [`crate::sandbox_reach`]). Missing
    /// ones are skipped.
    pub deny_read: Vec<PathBuf>,
    /// A private `/dev` holding only the usual nodes.
    pub private_dev: bool,
    /// Drop every capability (when the process holds them; see
    /// [`crate::sandbox_reach`]).
    pub drop_caps: bool,
    /// A writable root belongs to this uid, not to root's 0: a root box keeps
    /// [`crate::sandbox_reach::OWNER_CAPS`] to write there.
    pub foreign_owner: Option<u32>,
    /// Bound the processes of this user in this process's user namespace with
    /// `RLIMIT_NPROC` (where the box is built in one, [`crate::userns::shared`]): the bound
    /// on forks where no cgroup's `pids.max` can be had. The kernel counts every process
    /// of the user in that namespace, so the run's boxed calls share it.
    pub nproc: Option<u64>,
    /// Denied programs: stubs bound over their files (see [`crate::program_stubs`]).
    pub program_stubs: Option<crate::program_stubs::StubSet>,
    /// TCP ports no connect from the box may reach, on any address: the ports corral
    /// itself listens on. Where the box has the host's network (`network`), Landlock (ABI
    /// 4+) closes them; elsewhere the box's loopback is its own and they are out of reach.
    pub closed_ports: Vec<u16>,
    /// A file of the run's, as the box names it, bound over `/etc/resolv.conf` after every
    /// other mount (in the call's own mount namespace, as [`Confinement::set_overlays`] binds): it
    /// names the resolver corral answers on the run namespace's loopback (see
    /// [`NetNamespace::bind_dns`]). Where `/etc/resolv.conf` is missing, or a link to a
    /// missing file, nothing is bound: the C library then asks `127.0.0.1` anyway.
    pub resolv_conf: Option<PathBuf>,
}

/// A network namespace with only a loopback interface, up: the network of one run. Calls
/// that join it reach each other's loopback servers and nothing else; the namespace
/// lives as long as a clone of this handle (the descriptor keeps it).
#[derive(Debug, Clone)]
pub struct NetNamespace(Arc<OwnedFd>);

impl NetNamespace {
    /// Make one: a child that shares corral's memory and descriptor table (nothing is
    /// copied, nothing is exec'd) joins this process's user namespace where corral is not
    /// root ([`crate::userns::shared`], whose capabilities let it), unshares its network
    /// namespace, brings `lo` up, opens the namespace into the shared table and exits.
    pub fn create() -> io::Result<NetNamespace> {
        Ok(NetNamespace(Arc::new(Beside::run(
            make_namespace,
            -1,
            libc::CLONE_NEWNET,
        )?)))
    }

    /// A TCP listener on `127.0.0.1` (a port the kernel picks) inside this namespace: a
    /// child as in [`Self::create`] joins it (`setns`), binds, listens and exits. The
    /// socket stays in the namespace, so processes in it can connect to it, while the
    /// caller accepts from any thread and makes its own connections from the host's
    /// namespace.
    pub fn listen_loopback(&self) -> io::Result<std::net::TcpListener> {
        extern "C" fn bind(arg: *mut libc::c_void) -> libc::c_int {
            // SAFETY: `arg` is the `Beside` on the parent's frame, which waits (vfork).
            let beside = unsafe { &mut *arg.cast::<Beside>() };
            loopback_socket(beside, libc::SOCK_STREAM, 0)
        }
        let listener = Beside::run(bind, self.0.as_raw_fd(), 0)?;
        Ok(std::net::TcpListener::from(listener))
    }

    /// A UDP socket on `127.0.0.1:53` inside this namespace, made as
    /// [`Self::listen_loopback`] makes its listener: the resolver a box's
    /// `/etc/resolv.conf` names ([`Spec::resolv_conf`]). The port is below 1024, which
    /// the child may bind as root of the namespace's user namespace.
    pub fn bind_dns(&self) -> io::Result<std::net::UdpSocket> {
        extern "C" fn bind(arg: *mut libc::c_void) -> libc::c_int {
            // SAFETY: `arg` is the `Beside` on the parent's frame, which waits (vfork).
            let beside = unsafe { &mut *arg.cast::<Beside>() };
            loopback_socket(beside, libc::SOCK_DGRAM, 53)
        }
        let socket = Beside::run(bind, self.0.as_raw_fd(), 0)?;
        Ok(std::net::UdpSocket::from(socket))
    }

    /// The namespace's inode, as `/proc/PID/ns/net` of a process in it names it.
    pub fn inode(&self) -> io::Result<u64> {
        use std::os::unix::fs::MetadataExt;
        let file = std::fs::File::from(self.0.try_clone()?);
        Ok(file.metadata()?.ino())
    }
}

/// In a child beside the caller (see [`NetNamespace::listen_loopback`]): join the
/// namespace `beside` names, make a socket of `kind` bound to `127.0.0.1:port` there
/// (`0`: the kernel picks), listening if it is a stream, and leave it in `beside.made`.
/// Raw system calls only; `0`, or the errno.
fn loopback_socket(beside: &mut Beside, kind: libc::c_int, port: u16) -> libc::c_int {
    // SAFETY: raw system calls on descriptors the parent holds open and on a socket
    // address on this stack.
    unsafe {
        if beside.user >= 0 && libc::setns(beside.user, libc::CLONE_NEWUSER) != 0 {
            return errno();
        }
        if libc::setns(beside.net, libc::CLONE_NEWNET) != 0 {
            return errno();
        }
        let fd = libc::socket(libc::AF_INET, kind | libc::SOCK_CLOEXEC, 0);
        if fd < 0 {
            return errno();
        }
        let mut addr: libc::sockaddr_in = std::mem::zeroed();
        addr.sin_family = libc::AF_INET as libc::sa_family_t;
        addr.sin_port = port.to_be();
        addr.sin_addr.s_addr = u32::from(std::net::Ipv4Addr::LOCALHOST).to_be();
        let len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
        if libc::bind(fd, (&raw const addr).cast(), len) != 0
            || (kind == libc::SOCK_STREAM && libc::listen(fd, 128) != 0)
        {
            let e = errno();
            libc::close(fd);
            return e;
        }
        beside.made = fd;
        0
    }
}

/// An IPC namespace of its own: the System V semaphores, message queues and shared
/// memory, and the POSIX message queues, of one run. Calls that join it share those
/// objects with each other and reach none of the host's (a host process's `0600` segment
/// is owned by a uid the box may hold too); the namespace lives as long as a clone of
/// this handle.
#[derive(Debug, Clone)]
pub struct IpcNamespace(Arc<OwnedFd>);

impl IpcNamespace {
    /// Make one, as [`NetNamespace::create`] makes a network namespace: a child beside
    /// corral joins its user namespace where corral is not root, unshares its IPC
    /// namespace, opens it into the shared descriptor table and exits.
    pub fn create() -> io::Result<IpcNamespace> {
        Ok(IpcNamespace(Arc::new(Beside::run(
            make_namespace,
            -1,
            libc::CLONE_NEWIPC,
        )?)))
    }

    /// The namespace's inode, as `/proc/PID/ns/ipc` of a process in it names it.
    pub fn inode(&self) -> io::Result<u64> {
        use std::os::unix::fs::MetadataExt;
        let file = std::fs::File::from(self.0.try_clone()?);
        Ok(file.metadata()?.ino())
    }
}

/// The child of [`NetNamespace::create`] and [`IpcNamespace::create`]: it joins corral's
/// user namespace where there is one, unshares the namespace `Beside::kind` names (a
/// network one gets its loopback up), opens it into the shared descriptor table and
/// exits.
extern "C" fn make_namespace(arg: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `arg` is the `Beside` on the parent's frame, which waits (vfork).
    let beside = unsafe { &mut *arg.cast::<Beside>() };
    let path = if beside.kind == libc::CLONE_NEWNET {
        c"/proc/thread-self/ns/net"
    } else {
        c"/proc/thread-self/ns/ipc"
    };
    // SAFETY: raw system calls on a descriptor the parent holds open and constant
    // strings; loopback_up makes only raw system calls on its stack.
    unsafe {
        if beside.user >= 0 && libc::setns(beside.user, libc::CLONE_NEWUSER) != 0 {
            return errno();
        }
        if libc::unshare(beside.kind) != 0 {
            return errno();
        }
        if beside.kind == libc::CLONE_NEWNET
            && let Err(e) = loopback_up()
        {
            return e.raw_os_error().unwrap_or(libc::EPERM);
        }
        beside.made = libc::open(path.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC);
        if beside.made < 0 { errno() } else { 0 }
    }
}

/// What a child run beside corral (memory and descriptors shared, see
/// [`NetNamespace::create`]) is given and gives back.
#[repr(C)]
struct Beside {
    /// The user namespace to join first, or -1.
    user: libc::c_int,
    /// The network namespace to join, or -1.
    net: libc::c_int,
    /// The kind of namespace to make (`CLONE_NEW*`), for [`make_namespace`].
    kind: libc::c_int,
    /// The descriptor it made, in the shared table.
    made: libc::c_int,
}

impl Beside {
    /// Run `f` in a `CLONE_VM | CLONE_VFORK | CLONE_FILES` child on a stack of its own,
    /// with this process's user namespace (where corral is not root), `net` and `kind`;
    /// the descriptor it made, or the errno it exited with.
    fn run(
        f: extern "C" fn(*mut libc::c_void) -> libc::c_int,
        net: libc::c_int,
        kind: libc::c_int,
    ) -> io::Result<OwnedFd> {
        let user = if rustix::process::geteuid().is_root() {
            -1
        } else {
            crate::userns::shared()
                .ok_or_else(|| io::Error::from_raw_os_error(libc::EPERM))?
                .as_raw_fd()
        };
        let mut beside = Beside {
            user,
            net,
            kind,
            made: -1,
        };
        let mut stack = crate::clone_stack::Stack::new()?;
        let flags = libc::CLONE_VM | libc::CLONE_VFORK | libc::CLONE_FILES | libc::SIGCHLD;
        let all = crate::clone_stack::Signals::block_all();
        // SAFETY: `f` runs on `stack`, a mapping of its own that outlives it (CLONE_VFORK:
        // clone returns once the child has exited), and writes only `beside`, on this
        // frame, and, through the C library's errno, this thread's thread-local storage,
        // while this thread is suspended; every signal is blocked meanwhile, so no handler
        // of corral's runs in it. Its setns and unshare change only its own namespaces.
        let pid = unsafe { libc::clone(f, stack.top(), flags, (&raw mut beside).cast()) };
        drop(all);
        drop(stack);
        if pid < 0 {
            return Err(io::Error::last_os_error());
        }
        let mut status = 0;
        loop {
            // SAFETY: waitpid(2) on the child just made, with a status word on this frame.
            let r = unsafe { libc::waitpid(pid, &raw mut status, libc::__WALL) };
            if r >= 0 || errno() != libc::EINTR {
                break;
            }
        }
        let code = if libc::WIFEXITED(status) {
            libc::WEXITSTATUS(status)
        } else {
            libc::EINTR
        };
        if code != 0 || beside.made < 0 {
            if beside.made >= 0 {
                // SAFETY: a descriptor the child opened in this table and nothing owns.
                unsafe { libc::close(beside.made) };
            }
            return Err(io::Error::from_raw_os_error(if code == 0 {
                libc::EBADF
            } else {
                code
            }));
        }
        // SAFETY: the child opened `made` in this process's table and nothing else owns it.
        Ok(unsafe { <OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(beside.made) })
    }
}

/// Bring the loopback interface of this thread's network namespace up (the kernel then
/// gives it 127.0.0.1/8 and ::1).
fn loopback_up() -> io::Result<()> {
    // SAFETY: socket(2) with constant arguments; the descriptor is owned right away.
    let raw = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    if raw < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `raw` is a descriptor this function just opened and nothing else owns.
    let sock = unsafe { <OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(raw) };
    // SAFETY: ifreq is plain data; all zeroes is a valid value.
    let mut req: libc::ifreq = unsafe { std::mem::zeroed() };
    for (dst, src) in req.ifr_name.iter_mut().zip(b"lo\0") {
        *dst = *src as libc::c_char;
    }
    // SAFETY: SIOCGIFFLAGS reads the named interface's flags into `req`, which lives on
    // this stack frame for the call.
    if unsafe { libc::ioctl(sock.as_raw_fd(), libc::SIOCGIFFLAGS, &mut req) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the kernel filled `ifru_flags` above; reading and setting that union field.
    unsafe {
        req.ifr_ifru.ifru_flags |= (libc::IFF_UP | libc::IFF_RUNNING) as libc::c_short;
    }
    // SAFETY: SIOCSIFFLAGS reads `req` (name and flags) for the call.
    if unsafe { libc::ioctl(sock.as_raw_fd(), libc::SIOCSIFFLAGS, &req) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// What one confinement enforces on this host, layer by layer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Enforced {
    /// The Landlock ABI the ruleset was built for (0: none).
    pub landlock_abi: u32,
    /// Writes confined by Landlock.
    pub landlock_fs: bool,
    /// TCP bind/connect refused by Landlock (network off, ABI 4+).
    pub landlock_net: bool,
    /// The ports of [`Spec::closed_ports`] Landlock keeps TCP connects from, on every
    /// address (network on, ABI 4+).
    pub landlock_closed_ports: Vec<u16>,
    /// Signals and abstract Unix sockets scoped by Landlock (ABI 6+).
    pub landlock_scope: bool,
    /// A network namespace of its own, or the run's.
    pub net_namespace: bool,
    /// The network namespace is the run's (loopback up), not the call's own.
    pub net_namespace_shared: bool,
    /// An IPC namespace of its own, or the run's.
    pub ipc_namespace: bool,
    /// The IPC namespace is the run's, shared by its calls.
    pub ipc_namespace_shared: bool,
    /// A mount namespace of its own.
    pub mount_namespace: bool,
    /// How many protected paths are bind-mounted read-only.
    pub read_only_mounts: usize,
    /// Every mount outside the writable roots is read-only.
    pub read_only_host: bool,
    /// ... made so mount by mount (no `mount_setattr`, before Linux 5.12).
    pub read_only_walk: bool,
    /// `/tmp` is a directory of the run's own.
    pub own_tmp: bool,
    /// The runtime directory is one of the run's own.
    pub own_runtime: bool,
    /// The home is one of the run's own, with the toolchains put back.
    pub own_home: bool,
    /// The other homes covered as the home is (see [`Spec::other_homes`]).
    pub other_homes: Vec<PathBuf>,
    /// How many socket files are hidden.
    pub sockets_hidden: usize,
    /// How many read-denied paths are hidden by an empty read-only mount.
    pub read_denied: usize,
    /// `/dev` is a private one holding only the usual nodes.
    pub private_dev: bool,
    /// Every capability is dropped but [`Self::caps_kept`] (false when the process does
    /// not hold them to begin with: not root).
    pub caps_dropped: bool,
    /// The capabilities kept, by number: [`crate::sandbox_reach::OWNER_CAPS`] where a
    /// writable root belongs to [`Self::foreign_owner`].
    pub caps_kept: Vec<u32>,
    /// The other user a writable root belongs to, where that made the box keep some.
    pub foreign_owner: Option<u32>,
    /// The process holds no capability to drop (not root): nothing to read around with.
    pub caps_none_held: bool,
    /// The seccomp filter is installed.
    pub seccomp: bool,
    /// Every `socket(2)` is refused by seccomp (network off without a namespace).
    pub seccomp_all_sockets: bool,
    /// `socket(AF_UNIX, …)` is refused by seccomp.
    pub seccomp_unix_sockets: bool,
    /// Only the listed socket families may be opened (see `family_filter`).
    pub socket_families: bool,
    /// Descriptors above stderr are closed on exec.
    pub close_fds: bool,
    /// The `RLIMIT_NPROC` bound set in the user namespace, if one was.
    pub nproc: Option<u64>,
    /// How many files of denied programs have a stub bound over them.
    pub programs_stubbed: usize,
    /// How many files of denied programs a Landlock layer keeps from running and from
    /// being read, where there is no mount namespace for stubs (see
    /// [`crate::program_landlock`]).
    pub programs_landlocked: usize,
}

/// Everything the child applies, built before the fork. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Confinement(Arc<Inner>);

#[derive(Debug)]
struct Inner {
    /// The user namespace the child joins first (an ordinary user's: see
    /// [`crate::userns::shared`]), whose capabilities let it make the others.
    join_user: Option<libc::c_int>,
    /// What the child unshares. Without `CLONE_NEWNS` it mounts nothing: it has no mount
    /// namespace of its own, or that namespace already has this confinement's mounts (its
    /// PID namespace's init copied them from a [`MountKey`]'s template).
    unshare: libc::c_int,
    /// The run's network namespace, joined with setns(2).
    join_network: Option<NetNamespace>,
    /// The run's IPC namespace, joined with setns(2).
    join_ipc: Option<IpcNamespace>,
    read_only: Vec<CString>,
    /// [`Spec::pinned`], as C strings.
    pinned: Vec<CString>,
    /// The host read-only but the writable roots, and the box's own directories (none:
    /// the host's mounts stay as they are).
    box_dirs: Option<crate::box_dirs::Plan>,
    /// The host read-only mount by mount, where there is no `mount_setattr`.
    read_only_walk: Option<crate::read_only_walk::Walk>,
    reach: Reach,
    /// Denied programs' stubs (see [`crate::program_stubs`]).
    stubs: Option<crate::program_stubs::Stubs>,
    /// Denied programs' Landlock layer, where there are no stubs (see
    /// [`crate::program_landlock`]), restricted after the box's own.
    exec_layer: Option<Arc<OwnedFd>>,
    /// The Landlock layer closing [`Spec::closed_ports`] (see [`closed_ports_layer`]).
    port_layer: Option<Arc<OwnedFd>>,
    /// Per-call copies bound over paths (see [`Confinement::set_overlays`]).
    overlays: Vec<(CString, CString)>,
    /// [`Spec::resolv_conf`], as a C string.
    resolv_conf: Option<CString>,
    /// The key of its mounts (see [`Confinement::mount_key`]), taken when first asked:
    /// the call that settles its mounts and the thread that makes them for later calls
    /// ask the same confinement.
    mount_key: OnceLock<Option<MountKey>>,
    ruleset: Option<OwnedFd>,
    /// Directories the box makes itself (its private `/dev/shm`): their Landlock rules
    /// are added in the child, from descriptors opened inside its mount namespace, since
    /// the parent sees only the host's inodes at those paths. With the access they get.
    box_writable: Vec<CString>,
    box_access: u64,
    filters: Arc<[BpfProgram]>,
    close_range: bool,
    /// `RLIMIT_NPROC` set after joining the user namespace.
    nproc: Option<u64>,
}

impl Inner {
    /// Whether it mounts anything in the child's mount namespace: read-only binds, read
    /// denies or a private `/dev`.
    fn has_mounts(&self) -> bool {
        !self.read_only.is_empty()
            || !self.pinned.is_empty()
            || self.box_dirs.is_some()
            || self.read_only_walk.is_some()
            || self.reach.mounts()
            || self.stubs.is_some()
    }

    /// The paths its mounts cover, each with the file it names now.
    fn key_now(&self) -> Option<MountKey> {
        if self.unshare & libc::CLONE_NEWNS == 0 || !self.has_mounts() {
            return None;
        }
        let read_only = self
            .read_only
            .iter()
            .map(|p| Some((p.clone(), FileId::of(p)?)))
            .collect::<Option<_>>()?;
        let walked = self.read_only_walk.iter().flat_map(|walk| walk.paths());
        let writable = self
            .box_dirs
            .iter()
            .flat_map(|plan| plan.paths())
            .chain(walked)
            .chain(self.pinned.iter().map(CString::as_c_str))
            .map(|p| Some((p.to_owned(), FileId::of(p)?)))
            .collect::<Option<_>>()?;
        let reach = self
            .reach
            .mount_targets()
            .map(|(p, kind)| Some((p.to_owned(), kind, FileId::of(p)?)))
            .collect::<Option<_>>()?;
        let stubs = self
            .stubs
            .iter()
            .flat_map(|s| s.paths())
            .map(|p| Some((p.to_owned(), FileId::of(p)?)))
            .collect::<Option<_>>()?;
        Some(MountKey {
            read_only,
            writable,
            reach,
            stubs,
        })
    }
}

/// What a confinement's mounts cover, and the file each path named when the key was
/// taken: mounts made earlier for an equal key are the mounts this confinement would
/// make now. A mount is made on the file its path named then, and the kernel takes it
/// away in every other namespace when that file is removed or renamed over, so a path
/// whose file was replaced since (written by rename, a directory made anew) must change
/// the key: a file is its device and inode, and, since a freed inode number is soon
/// given to the next new file, its birth time (or, on a filesystem that keeps none, its
/// status-change time, which any replacement moves too, as does any write: calls then
/// make their own mounts). Not the status-change time everywhere: the trace's log, a
/// denied file, changes at every call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MountKey {
    read_only: Vec<(CString, FileId)>,
    writable: Vec<(CString, FileId)>,
    reach: Vec<(CString, char, FileId)>,
    stubs: Vec<(CString, FileId)>,
}

/// One file, as [`MountKey`] tells files apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FileId {
    dev: (u32, u32),
    ino: u64,
    /// Birth time, or status-change time where the filesystem keeps no birth time.
    born: (i64, u32),
}

impl FileId {
    /// The file `path` names now (following links, as a mount does); `None` when there
    /// is none, or it lies under `/proc`.
    fn of(path: &std::ffi::CStr) -> Option<Self> {
        use rustix::fs::{AtFlags, CWD, StatxFlags, statx};
        let bytes = path.to_bytes();
        if bytes == b"/proc" || bytes.starts_with(b"/proc/") {
            return None;
        }
        let want = StatxFlags::INO | StatxFlags::BTIME | StatxFlags::CTIME;
        let st = statx(CWD, path, AtFlags::empty(), want).ok()?;
        let has = StatxFlags::from_bits_retain(st.stx_mask);
        // A birth time of nothing at all is one the filesystem does not really keep.
        let kept = |t: &rustix::fs::StatxTimestamp| t.tv_sec != 0 || t.tv_nsec != 0;
        let born = if has.contains(StatxFlags::BTIME) && kept(&st.stx_btime) {
            st.stx_btime
        } else if has.contains(StatxFlags::CTIME) {
            st.stx_ctime
        } else {
            return None;
        };
        Some(Self {
            dev: (st.stx_dev_major, st.stx_dev_minor),
            ino: st.stx_ino,
            born: (born.tv_sec, born.tv_nsec),
        })
    }
}

impl Confinement {
    /// The key of this confinement's mounts, or `None` when it makes none (no mount
    /// namespace of its own, or nothing to mount), when a path it covers cannot be
    /// identified now, or when one lies under `/proc` (mounted per call, after a
    /// template's mounts, where it would cover them).
    pub fn mount_key(&self) -> Option<MountKey> {
        if self.0.unshare & libc::CLONE_NEWNS == 0 {
            return None;
        }
        self.0.mount_key.get_or_init(|| self.0.key_now()).clone()
    }

    /// Have the child take its mounts as they are (its PID namespace's init copied a
    /// template made for this confinement's [`MountKey`]) instead of making them. `false`
    /// (and nothing changed) when this confinement is shared already.
    pub fn use_mounts_in_place(&mut self) -> bool {
        let Some(inner) = Arc::get_mut(&mut self.0) else {
            return false;
        };
        inner.unshare &= !libc::CLONE_NEWNS;
        true
    }

    /// Have the box see each of `overlays` (a copy of the call's own, the path it goes
    /// over, both as the box names them) bound over its path, after every other mount:
    /// the box reads and writes the copy there while the host keeps its own file (the
    /// files host programs run, see corral's `autorun`). `false`, and nothing changed,
    /// where the box has no mount namespace of its own or this confinement is shared
    /// already. Bound in the call's own namespace, so a template's mounts never hold
    /// them.
    pub fn set_overlays(&mut self, overlays: &[(PathBuf, PathBuf)]) -> io::Result<bool> {
        let Some(inner) = Arc::get_mut(&mut self.0) else {
            return Ok(false);
        };
        if inner.unshare & libc::CLONE_NEWNS == 0 {
            return Ok(false);
        }
        inner.overlays = overlays
            .iter()
            .map(|(copy, path)| {
                Ok((
                    CString::new(copy.as_os_str().as_bytes()).map_err(other)?,
                    CString::new(path.as_os_str().as_bytes()).map_err(other)?,
                ))
            })
            .collect::<io::Result<_>>()?;
        Ok(!inner.overlays.is_empty())
    }

    /// In a thread of its own, with a mount namespace of its own: make this
    /// confinement's mounts there, as a child would in its own. For a template.
    pub(crate) fn make_mounts_here(&self) -> io::Result<()> {
        apply_mounts(&self.0)
    }

    /// Apply it to the calling process, as the hook [`confine_before_exec`] adds does: for
    /// a child between its birth and its exec that is not forked (see
    /// [`crate::spawn::Launch::confinement`]). Raw system calls on what was built before;
    /// nothing is allocated, locked or logged.
    pub(crate) fn apply_in_child(
        &self,
        redirects: Option<&Redirects>,
        in_user_namespace: bool,
    ) -> io::Result<()> {
        apply(&self.0, redirects, in_user_namespace)
    }
}

fn abi_of(v: u32) -> ABI {
    match v {
        0 => ABI::Unsupported,
        1 => ABI::V1,
        2 => ABI::V2,
        3 => ABI::V3,
        4 => ABI::V4,
        5 => ABI::V5,
        6 => ABI::V6,
        7 => ABI::V7,
        8 => ABI::V8,
        _ => ABI::V9,
    }
}

fn other(e: impl std::fmt::Display) -> io::Error {
    io::Error::other(e.to_string())
}

/// Build the confinement `spec` asks for, as far as `host` allows; what it reaches is
/// returned beside it.
pub fn build(spec: &Spec, host: &HostSupport) -> io::Result<(Confinement, Enforced)> {
    let mut enforced = Enforced::default();
    let mut unshare = 0;
    let mut read_only = Vec::new();
    let mut pinned = Vec::new();
    let mut box_dirs = None;
    let mut read_only_walk = None;
    let mut join_network = None;
    let mut join_ipc = None;
    let mut stubs = None;
    let mut exec_layer = None;
    if !host.namespaces
        && host.landlock_abi > 0
        && let Some(set) = &spec.program_stubs
        && let Some(layer) = crate::program_landlock::ruleset(set)?
    {
        enforced.programs_landlocked = layer.denied;
        exec_layer = Some(layer.ruleset);
    }
    if host.namespaces {
        if let Some(set) = &spec.program_stubs {
            stubs = crate::program_stubs::Stubs::build(set)?;
            enforced.programs_stubbed = stubs.as_ref().map_or(0, |s| s.count());
        }
        unshare |= libc::CLONE_NEWNS;
        enforced.mount_namespace = true;
        match &spec.join_ipc {
            Some(ns) => {
                join_ipc = Some(ns.clone());
                enforced.ipc_namespace_shared = true;
            }
            None => unshare |= libc::CLONE_NEWIPC,
        }
        enforced.ipc_namespace = true;
        if !spec.network {
            match &spec.join_network {
                Some(ns) => {
                    join_network = Some(ns.clone());
                    enforced.net_namespace_shared = true;
                }
                None => unshare |= libc::CLONE_NEWNET,
            }
            enforced.net_namespace = true;
        }
        for p in spec.read_only.iter().filter(|p| p.exists()) {
            read_only.push(CString::new(p.as_os_str().as_bytes()).map_err(other)?);
        }
        enforced.read_only_mounts = read_only.len();
        for p in spec.pinned.iter().filter(|p| p.is_dir()) {
            pinned.push(CString::new(p.as_os_str().as_bytes()).map_err(other)?);
        }
        if host.mount_setattr && (!spec.writable_mounts.is_empty() || spec.own_tmp.is_some()) {
            box_dirs = crate::box_dirs::Plan::build(&crate::box_dirs::Request {
                writable: spec.writable_mounts.clone(),
                visible: spec.visible.clone(),
                own_tmp: spec.own_tmp.clone(),
                own_runtime: spec.own_runtime.clone(),
                own_home: spec.own_home.clone(),
                other_homes: spec.other_homes.clone(),
            })?;
            enforced.read_only_host = box_dirs.is_some();
            enforced.own_tmp = box_dirs.as_ref().is_some_and(|p| p.own_tmp());
            let owns = |target: &Option<(PathBuf, PathBuf)>| {
                target
                    .as_ref()
                    .zip(box_dirs.as_ref())
                    .is_some_and(|((_, to), plan)| plan.owns(to))
            };
            enforced.own_runtime = owns(&spec.own_runtime);
            // A home in `/tmp` is the box's own `/tmp`'s.
            let home_in_tmp = spec.own_home.as_ref().is_some_and(|(_, to)| {
                to.starts_with(crate::box_dirs::BOX_TMP) && enforced.own_tmp
            });
            enforced.own_home = owns(&spec.own_home) || home_in_tmp;
            enforced.other_homes = spec
                .other_homes
                .iter()
                .filter(|(_, to)| box_dirs.as_ref().is_some_and(|plan| plan.owns(to)))
                .map(|(_, to)| to.clone())
                .collect();
        } else if !host.mount_setattr && !spec.writable_mounts.is_empty() {
            let roots: Vec<PathBuf> = spec
                .writable_mounts
                .iter()
                .filter_map(|p| p.canonicalize().ok())
                .filter(|p| p.is_dir())
                .collect();
            read_only_walk = crate::read_only_walk::Walk::build(&roots).ok();
            enforced.read_only_host = read_only_walk.is_some();
            enforced.read_only_walk = read_only_walk.is_some();
        }
    }
    // In this process's user namespace the child holds every capability there until its
    // exec: it drops them as root's child does.
    let setpcap = crate::sandbox_reach::holds_setpcap() || host.user_namespace;
    let drop_caps = spec.drop_caps && setpcap;
    enforced.caps_dropped = drop_caps;
    enforced.caps_none_held = spec.drop_caps && !setpcap && !rustix::process::geteuid().is_root();
    // Root over another user's workspace writes it only with these.
    let keep: &[u32] = match spec.foreign_owner {
        Some(_) if drop_caps && !host.user_namespace => crate::sandbox_reach::OWNER_CAPS,
        _ => &[],
    };
    enforced.caps_kept = keep.to_vec();
    enforced.foreign_owner = spec.foreign_owner.filter(|_| !keep.is_empty());
    let reach = if host.namespaces {
        Reach::build(&spec.deny_read, spec.private_dev, drop_caps, keep)?
            .with_sockets(&spec.hide_sockets)?
    } else {
        Reach::build(&[], false, drop_caps, keep)?
    };
    enforced.read_denied = reach.hidden();
    enforced.sockets_hidden = reach.sockets();
    enforced.private_dev = host.namespaces && spec.private_dev;
    let ruleset = if host.landlock_abi > 0 {
        // In the run's namespace loopback is the whole network, and calls may use it.
        let tcp_rules = !spec.network && join_network.is_none();
        let r = landlock_ruleset(spec, tcp_rules, host.landlock_abi, &mut enforced)?;
        enforced.landlock_abi = host.landlock_abi;
        r
    } else {
        None
    };
    let resolv_conf = match &spec.resolv_conf {
        Some(file) if host.namespaces => {
            Some(CString::new(file.as_os_str().as_bytes()).map_err(other)?)
        }
        _ => None,
    };
    let port_layer = if spec.network && host.landlock_abi >= 4 && !spec.closed_ports.is_empty() {
        let (layer, closed) = closed_ports_layer(&spec.closed_ports)?;
        enforced.landlock_closed_ports = closed;
        Some(layer)
    } else {
        None
    };
    let filters = if host.seccomp {
        let all_sockets = !spec.network && !enforced.net_namespace;
        // Unix sockets where the host's are out of reach: the box's own `/tmp` (and the
        // runtime directory and the sockets found elsewhere, hidden).
        let unix = !spec.unix_sockets || !enforced.own_tmp || all_sockets;
        enforced.seccomp = true;
        enforced.seccomp_all_sockets = all_sockets;
        enforced.seccomp_unix_sockets = unix;
        enforced.socket_families = !all_sockets;
        filters(all_sockets, unix)?
    } else {
        Arc::default()
    };
    enforced.close_fds = host.close_range;
    let nproc = spec.nproc.filter(|_| host.user_namespace);
    enforced.nproc = nproc;
    Ok((
        Confinement(Arc::new(Inner {
            join_user: host
                .user_namespace
                .then(crate::userns::shared)
                .flatten()
                .map(AsRawFd::as_raw_fd),
            unshare,
            join_network,
            join_ipc,
            read_only,
            pinned,
            box_dirs,
            read_only_walk,
            reach,
            stubs,
            exec_layer,
            port_layer,
            overlays: Vec::new(),
            resolv_conf,
            mount_key: OnceLock::new(),
            box_writable: if enforced.private_dev && ruleset.is_some() {
                vec![c"/dev/shm".to_owned()]
            } else {
                Vec::new()
            },
            box_access: AccessFs::from_write(abi_of(host.landlock_abi.max(1))).bits(),
            ruleset,
            filters,
            close_range: host.close_range,
            nproc,
        })),
        enforced,
    ))
}

fn landlock_ruleset(
    spec: &Spec,
    tcp_rules: bool,
    abi: u32,
    enforced: &mut Enforced,
) -> io::Result<Option<OwnedFd>> {
    let abi = abi_of(abi);
    let write = AccessFs::from_write(abi);
    let file_write = write & AccessFs::from_file(abi);
    let mut ruleset = Ruleset::default().handle_access(write).map_err(other)?;
    if tcp_rules && abi as u32 >= 4 {
        ruleset = ruleset
            .handle_access(AccessNet::from_all(abi))
            .map_err(other)?;
        enforced.landlock_net = true;
    }
    if abi as u32 >= 6 {
        ruleset = ruleset.scope(Scope::from_all(abi)).map_err(other)?;
        enforced.landlock_scope = true;
    }
    let mut created = ruleset.create().map_err(other)?;
    for path in &spec.writable {
        let Ok(meta) = std::fs::metadata(path) else {
            continue;
        };
        let access = if meta.is_dir() { write } else { file_write };
        let fd = PathFd::new(path).map_err(other)?;
        created = created
            .add_rule(PathBeneath::new(fd, access))
            .map_err(other)?;
    }
    for path in spec.writable_files.iter().filter(|p| p.exists()) {
        let fd = PathFd::new(path).map_err(other)?;
        created = created
            .add_rule(PathBeneath::new(fd, file_write))
            .map_err(other)?;
    }
    enforced.landlock_fs = true;
    let fd: Option<OwnedFd> = created.into();
    Ok(fd)
}

/// A Landlock layer that lets TCP connect to every port but `closed`, on every address
/// (Landlock's TCP rules name a port only). That is 65,535 rules less the closed ones, so
/// it is made once per process for each set of ports and its descriptor shared by every
/// box that has it. Binding stays unhandled. Answers the layer and the ports it closes.
fn closed_ports_layer(closed: &[u16]) -> io::Result<(Arc<OwnedFd>, Vec<u16>)> {
    type Made = Vec<(Vec<u16>, Arc<OwnedFd>)>;
    static MADE: Mutex<Made> = Mutex::new(Vec::new());
    let mut key = closed.to_vec();
    key.sort_unstable();
    key.dedup();
    let mut made = MADE.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some((_, layer)) = made.iter().find(|(k, _)| *k == key) {
        return Ok((layer.clone(), key));
    }
    let mut created = Ruleset::default()
        .handle_access(AccessNet::ConnectTcp)
        .map_err(other)?
        .create()
        .map_err(other)?;
    for port in (0..=u16::MAX).filter(|p| key.binary_search(p).is_err()) {
        created = created
            .add_rule(NetPort::new(port, AccessNet::ConnectTcp))
            .map_err(other)?;
    }
    let fd: Option<OwnedFd> = created.into();
    let layer = Arc::new(fd.ok_or_else(|| other("Landlock made no TCP ruleset"))?);
    made.push((key.clone(), layer.clone()));
    Ok((layer, key))
}

const NAMESPACE_FLAGS: [u64; 7] = [
    libc::CLONE_NEWNS as u64,
    libc::CLONE_NEWCGROUP as u64,
    libc::CLONE_NEWUTS as u64,
    libc::CLONE_NEWIPC as u64,
    libc::CLONE_NEWUSER as u64,
    libc::CLONE_NEWPID as u64,
    libc::CLONE_NEWNET as u64,
];

/// The syscalls refused outright inside the sandbox, with EPERM.
fn denied_syscalls() -> Vec<i64> {
    let mut v = vec![
        libc::SYS_ptrace,
        libc::SYS_process_vm_readv,
        libc::SYS_process_vm_writev,
        libc::SYS_pidfd_getfd,
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
        libc::SYS_mount,
        libc::SYS_umount2,
        libc::SYS_move_mount,
        libc::SYS_open_tree,
        libc::SYS_fsopen,
        libc::SYS_fsmount,
        libc::SYS_fsconfig,
        libc::SYS_fspick,
        libc::SYS_mount_setattr,
        libc::SYS_pivot_root,
        libc::SYS_chroot,
        libc::SYS_unshare,
        libc::SYS_setns,
        libc::SYS_bpf,
        libc::SYS_perf_event_open,
        libc::SYS_keyctl,
        libc::SYS_add_key,
        libc::SYS_request_key,
        libc::SYS_init_module,
        libc::SYS_finit_module,
        libc::SYS_delete_module,
        libc::SYS_kexec_load,
        libc::SYS_kexec_file_load,
        libc::SYS_reboot,
        libc::SYS_swapon,
        libc::SYS_swapoff,
        libc::SYS_open_by_handle_at,
        libc::SYS_userfaultfd,
        libc::SYS_acct,
        libc::SYS_settimeofday,
        libc::SYS_clock_settime,
        libc::SYS_quotactl,
    ];
    #[cfg(target_arch = "x86_64")]
    v.extend([libc::SYS_iopl, libc::SYS_ioperm]);
    v
}

/// The seccomp filters of a box that refuses every socket (`all_sockets`) or Unix ones
/// (`unix`), compiled once per process for each of the few shapes they take: every stage
/// of every sandboxed call installs them, and they depend on nothing else.
fn filters(all_sockets: bool, unix: bool) -> io::Result<Arc<[BpfProgram]>> {
    type Compiled = Vec<((bool, bool), Arc<[BpfProgram]>)>;
    static COMPILED: Mutex<Compiled> = Mutex::new(Vec::new());
    let key = (all_sockets, unix);
    let mut compiled = COMPILED.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some((_, filters)) = compiled.iter().find(|(k, _)| *k == key) {
        return Ok(filters.clone());
    }
    let arch = TargetArch::try_from(std::env::consts::ARCH).map_err(other)?;
    let mut filters = vec![deny_filter(arch, all_sockets, unix)?, enosys_filter(arch)?];
    if !all_sockets {
        filters.push(family_filter(arch)?);
    }
    let filters: Arc<[BpfProgram]> = filters.into();
    compiled.push((key, filters.clone()));
    Ok(filters)
}

fn deny_filter(arch: TargetArch, all_sockets: bool, unix: bool) -> io::Result<BpfProgram> {
    let cond = |arg, len, op, value| SeccompCondition::new(arg, len, op, value).map_err(other);
    let rule = |conds| SeccompRule::new(conds).map_err(other);
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    for nr in denied_syscalls() {
        rules.insert(nr, Vec::new());
    }
    // New namespaces through clone(2): refuse any namespace flag.
    let mut clone = Vec::new();
    for flag in NAMESPACE_FLAGS {
        clone.push(rule(vec![cond(
            0,
            SeccompCmpArgLen::Qword,
            SeccompCmpOp::MaskedEq(flag),
            flag,
        )?])?);
    }
    rules.insert(libc::SYS_clone, clone);
    // Typing into a terminal's input queue (TIOCSTI) is how a command escapes a session.
    rules.insert(
        libc::SYS_ioctl,
        vec![rule(vec![cond(
            1,
            SeccompCmpArgLen::Dword,
            SeccompCmpOp::Eq,
            libc::TIOCSTI,
        )?])?],
    );
    for (nr, set_id) in set_id_rules()? {
        rules.insert(nr, set_id);
    }
    if all_sockets {
        rules.insert(libc::SYS_socket, Vec::new());
    } else if unix {
        rules.insert(
            libc::SYS_socket,
            vec![rule(vec![cond(
                0,
                SeccompCmpArgLen::Dword,
                SeccompCmpOp::Eq,
                libc::AF_UNIX as u64,
            )?])?],
        );
    }
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch,
    )
    .map_err(other)?;
    BpfProgram::try_from(filter).map_err(other)
}

/// `fchmodat2(2)` (Linux 6.6), which the libc crate names on few targets: the same number
/// on every architecture seccompiler builds for.
const SYS_FCHMODAT2: i64 = 452;

/// Each syscall that sets a file's mode or creates a file with one: the argument holding
/// the mode and, for an open, the one holding its flags (it creates only with `O_CREAT` or
/// `O_TMPFILE`, and the mode of any other open is whatever was in the register).
fn mode_syscalls() -> Vec<(i64, u8, Option<u8>)> {
    let mut v = vec![
        (libc::SYS_fchmod, 1, None),
        (libc::SYS_fchmodat, 2, None),
        (SYS_FCHMODAT2, 2, None),
        (libc::SYS_openat, 3, Some(2)),
        (libc::SYS_mkdirat, 2, None),
        (libc::SYS_mknodat, 2, None),
    ];
    // The older calls the *at ones replaced, which only some architectures still have.
    #[cfg(target_arch = "x86_64")]
    v.extend([
        (libc::SYS_chmod, 1, None),
        (libc::SYS_open, 2, Some(1)),
        (libc::SYS_creat, 1, None),
        (libc::SYS_mkdir, 1, None),
        (libc::SYS_mknod, 1, None),
    ]);
    v
}

/// A box leaves no set-user-ID or set-group-ID file behind for the host: a root box's
/// `chmod 4755` of its own copy of a shell needs no capability, and the person's other
/// users would run it as root (as a user, as that user). So every syscall in
/// [`mode_syscalls`] is refused when its mode holds either bit (and, for an open, when it
/// creates). `mkdir(2)` drops both bits itself (a directory inherits set-group-ID from its
/// parent); it is refused with them all the same, so a tool asking for them hears at once
/// that it did not get them. `openat2(2)` carries its mode in memory: [`enosys_filter`].
fn set_id_rules() -> io::Result<Vec<(i64, Vec<SeccompRule>)>> {
    let has = |arg, bit: u64| {
        let op = SeccompCmpOp::MaskedEq(bit);
        SeccompCondition::new(arg, SeccompCmpArgLen::Dword, op, bit).map_err(other)
    };
    let creating = [libc::O_CREAT as u64, libc::O_TMPFILE as u64];
    let mut out = Vec::new();
    for (nr, mode, flags) in mode_syscalls() {
        let mut rules = Vec::new();
        for bit in [libc::S_ISUID as u64, libc::S_ISGID as u64] {
            match flags {
                None => rules.push(SeccompRule::new(vec![has(mode, bit)?]).map_err(other)?),
                Some(flags) => {
                    for create in creating {
                        let conds = vec![has(flags, create)?, has(mode, bit)?];
                        rules.push(SeccompRule::new(conds).map_err(other)?);
                    }
                }
            }
        }
        out.push((nr, rules));
    }
    Ok(out)
}

/// The socket families a box may open: Unix (unless [`deny_filter`] refuses it), IPv4 and
/// IPv6 (inside the network namespace, or the host's with the network on), and netlink
/// for routes only (what `ip addr` and the C library's interface lookups use). Every
/// other (`AF_VSOCK`, a channel to a hypervisor; `AF_ALG`, the kernel's crypto; packet,
/// Bluetooth, …) is answered `EAFNOSUPPORT`, as a kernel without it would answer, so a
/// program falls back as it would there.
fn family_filter(arch: TargetArch) -> io::Result<BpfProgram> {
    const NETLINK_ROUTE: u64 = 0;
    let cond = |arg, op, value| {
        SeccompCondition::new(arg, SeccompCmpArgLen::Dword, op, value).map_err(other)
    };
    let rule = |conds| SeccompRule::new(conds).map_err(other);
    let mut outside_the_list = Vec::new();
    for family in [
        libc::AF_UNIX,
        libc::AF_INET,
        libc::AF_INET6,
        libc::AF_NETLINK,
    ] {
        outside_the_list.push(cond(0, SeccompCmpOp::Ne, family as u64)?);
    }
    let netlink_not_route = vec![
        cond(0, SeccompCmpOp::Eq, libc::AF_NETLINK as u64)?,
        cond(2, SeccompCmpOp::Ne, NETLINK_ROUTE)?,
    ];
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    rules.insert(
        libc::SYS_socket,
        vec![rule(outside_the_list)?, rule(netlink_not_route)?],
    );
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EAFNOSUPPORT as u32),
        arch,
    )
    .map_err(other)?;
    BpfProgram::try_from(filter).map_err(other)
}

/// clone3(2) passes its flags, and openat2(2) its flags and mode, in memory seccomp cannot
/// read: both answer ENOSYS, as a kernel without them would, and the C library falls back
/// to clone(2), a program to openat(2), whose arguments [`deny_filter`] checks. corral's
/// own `openat2` (redirects, the file tools) runs in its own process or before the filter.
fn enosys_filter(arch: TargetArch) -> io::Result<BpfProgram> {
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    rules.insert(libc::SYS_clone3, Vec::new());
    rules.insert(libc::SYS_openat2, Vec::new());
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::ENOSYS as u32),
        arch,
    )
    .map_err(other)?;
    BpfProgram::try_from(filter).map_err(other)
}

/// Apply `confinement` in the child `cmd` spawns, after the hooks registered before it,
/// and open the stage's `redirects` inside it, after Landlock and before seccomp (see
/// [`crate::box_redirects`]).
pub fn confine_before_exec(
    cmd: &mut Command,
    confinement: &Confinement,
    redirects: Option<Arc<Redirects>>,
) {
    let inner = Arc::clone(&confinement.0);
    let hook = move || -> io::Result<()> { apply(&inner, redirects.as_deref(), false) };
    // SAFETY: the hook runs in the forked child before exec. It reads only data built
    // before the fork (an integer, C strings, descriptors, BPF programs) and makes raw
    // syscalls (unshare, setns, mount, close_range, prctl, landlock_restrict_self, seccomp); it
    // does not allocate, lock or log, and its errors are raw errnos.
    unsafe {
        cmd.pre_exec(hook);
    }
}

fn fail() -> io::Result<()> {
    Err(io::Error::from_raw_os_error(errno()))
}

/// The confinement's mounts, in the child's own mount namespace (or a template's): every
/// mount private, the host read-only outside the writable roots, the protected paths
/// read-only, the read denies and the private `/dev`.
fn apply_mounts(inner: &Inner) -> io::Result<()> {
    if inner.has_mounts() {
        let root = c"/";
        // SAFETY: mount(2) with NUL-terminated strings that live in `inner` for the whole
        // call; the first makes every mount private to this new namespace so nothing
        // propagates back to the host.
        if unsafe {
            libc::mount(
                std::ptr::null(),
                root.as_ptr(),
                std::ptr::null(),
                libc::MS_REC | libc::MS_PRIVATE,
                std::ptr::null(),
            )
        } != 0
        {
            return fail();
        }
        // Before anything covers where the stubs lie.
        let stub_dir = inner.stubs.as_ref().map(|s| s.open_dir()).transpose()?;
        // First, so that the mounts below (the protected paths, the read denies, the
        // private `/dev` and its `shm`) keep their own flags.
        if let Some(plan) = &inner.box_dirs {
            plan.apply()?;
        }
        if let Some(walk) = &inner.read_only_walk {
            walk.apply()?;
        }
        for path in &inner.pinned {
            let p = path.as_ptr();
            // SAFETY: as above; a bind mount of the directory onto itself, writable.
            if unsafe { libc::mount(p, p, std::ptr::null(), libc::MS_BIND, std::ptr::null()) } != 0
            {
                return fail();
            }
        }
        for path in &inner.read_only {
            let p = path.as_ptr();
            // SAFETY: as above; a bind mount of the path onto itself.
            if unsafe { libc::mount(p, p, std::ptr::null(), libc::MS_BIND, std::ptr::null()) } != 0
            {
                return fail();
            }
            crate::sandbox_reach::remount(path, libc::MS_RDONLY)?;
        }
        inner.reach.apply_mounts()?;
        // Last, over whatever put the programs' directories back.
        if let (Some(stubs), Some(dir)) = (&inner.stubs, &stub_dir) {
            stubs.bind(dir)?;
        }
    }
    Ok(())
}

/// Bind each per-call copy over its path, in this call's own mount namespace (made by
/// [`apply_mounts`] or copied from a template by the call's init). One that cannot be
/// bound leaves the path as it is: corral compares the host's file after the call too.
fn apply_overlays(inner: &Inner) {
    for (copy, path) in &inner.overlays {
        // SAFETY: mount(2) with NUL-terminated strings that live in `inner`; a bind of
        // the copy, which the box sees, over a path of the workspace.
        let _ = unsafe {
            libc::mount(
                copy.as_ptr(),
                path.as_ptr(),
                std::ptr::null(),
                libc::MS_BIND,
                std::ptr::null(),
            )
        };
    }
}

/// Bind the run's resolver file over `/etc/resolv.conf`, in this call's own mount
/// namespace (as [`apply_overlays`] binds). Where that fails (no such file, or a link to
/// none) the path stays as it is: a box without a resolver file asks `127.0.0.1`.
fn apply_resolv_conf(inner: &Inner) {
    if let Some(file) = &inner.resolv_conf {
        // SAFETY: mount(2) with NUL-terminated strings that live in `inner` or are
        // static; a bind of a file the box sees over another file.
        let _ = unsafe {
            libc::mount(
                file.as_ptr(),
                c"/etc/resolv.conf".as_ptr(),
                std::ptr::null(),
                libc::MS_BIND,
                std::ptr::null(),
            )
        };
    }
}

/// `struct landlock_path_beneath_attr`, packed as the kernel declares it.
#[repr(C, packed)]
struct PathBeneathAttr {
    allowed_access: u64,
    parent_fd: i32,
}

/// Add the rules of the box's own directories to `ruleset`, opened here, in the child's
/// mount namespace. Every call of a run adds the same rule (its copy of the namespace
/// has the same tmpfs), which the kernel merges. A rule that cannot be added leaves that
/// directory unwritable, as it would be without this: the box is not loosened by a
/// failure.
fn add_box_rules(inner: &Inner, ruleset: &OwnedFd) {
    const LANDLOCK_RULE_PATH_BENEATH: libc::c_int = 1;
    for path in &inner.box_writable {
        // SAFETY: open(2) of a NUL-terminated path `inner` owns, landlock_add_rule(2)
        // reading a structure on this frame, close(2) of the descriptor just opened.
        unsafe {
            let fd = libc::open(
                path.as_ptr(),
                libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC | libc::O_NOFOLLOW,
            );
            if fd < 0 {
                continue;
            }
            let attr = PathBeneathAttr {
                allowed_access: inner.box_access,
                parent_fd: fd,
            };
            libc::syscall(
                libc::SYS_landlock_add_rule,
                ruleset.as_raw_fd(),
                LANDLOCK_RULE_PATH_BENEATH,
                &raw const attr,
                0u32,
            );
            libc::close(fd);
        }
    }
}

/// Apply the confinement in the child; `in_user_namespace` if it was born in the boxes'
/// user namespace already (in a PID namespace made there), so it does not join it.
fn apply(inner: &Inner, redirects: Option<&Redirects>, in_user_namespace: bool) -> io::Result<()> {
    if let Some(ns) = inner.join_user {
        // SAFETY: setns(2) with the descriptor of the process's user namespace, which
        // stays open for the process's life (`userns::shared`).
        if !in_user_namespace && unsafe { libc::setns(ns, libc::CLONE_NEWUSER) } != 0 {
            return fail();
        }
        if let Some(max) = inner.nproc {
            let limit = libc::rlimit64 {
                rlim_cur: max,
                rlim_max: max,
            };
            // SAFETY: prlimit64(2) on this process with a structure on this frame.
            if unsafe { libc::prlimit64(0, libc::RLIMIT_NPROC, &limit, std::ptr::null_mut()) } != 0
            {
                return fail();
            }
        }
    }
    if inner.unshare != 0 {
        // SAFETY: raw unshare(2) with flags computed before the fork.
        if unsafe { libc::unshare(inner.unshare) } != 0 {
            return fail();
        }
    }
    if let Some(ns) = &inner.join_network {
        // SAFETY: setns(2) with a namespace descriptor owned by `inner`, which outlives
        // the call.
        if unsafe { libc::setns(ns.0.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
            return fail();
        }
    }
    if let Some(ns) = &inner.join_ipc {
        // SAFETY: setns(2) with a namespace descriptor owned by `inner`, which outlives
        // the call.
        if unsafe { libc::setns(ns.0.as_raw_fd(), libc::CLONE_NEWIPC) } != 0 {
            return fail();
        }
    }
    if inner.unshare & libc::CLONE_NEWNS != 0 {
        apply_mounts(inner)?;
    }
    apply_overlays(inner);
    apply_resolv_conf(inner);
    inner.reach.apply_caps()?;
    if inner.close_range {
        // SAFETY: marks every descriptor from 3 up close-on-exec; closes none now, so the
        // descriptors other hooks and std's own error pipe use stay valid until exec.
        if unsafe {
            libc::syscall(
                libc::SYS_close_range,
                3u32,
                u32::MAX,
                libc::CLOSE_RANGE_CLOEXEC,
            )
        } != 0
        {
            return fail();
        }
    }
    // SAFETY: prctl(2) with constant integer arguments.
    if unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } != 0 {
        return fail();
    }
    if let Some(fd) = &inner.ruleset {
        add_box_rules(inner, fd);
        // SAFETY: landlock_restrict_self(2) with a ruleset descriptor owned by `inner`.
        if unsafe { libc::syscall(libc::SYS_landlock_restrict_self, fd.as_raw_fd(), 0u32) } != 0 {
            return fail();
        }
    }
    for fd in [&inner.exec_layer, &inner.port_layer].into_iter().flatten() {
        // SAFETY: landlock_restrict_self(2) with a ruleset descriptor `inner` keeps alive.
        if unsafe { libc::syscall(libc::SYS_landlock_restrict_self, fd.as_raw_fd(), 0u32) } != 0 {
            return fail();
        }
    }
    // In the box, as the command will be: what Landlock and the mounts refuse it, they
    // refuse its redirects. Before seccomp, which may refuse the calls they make.
    if let Some(redirects) = redirects {
        redirects.apply()?;
    }
    install_filters(&inner.filters)
}

/// seccomp(2) each of `filters`, in order; no_new_privs already set.
fn install_filters(filters: &[BpfProgram]) -> io::Result<()> {
    for program in filters {
        let prog = libc::sock_fprog {
            len: program.len() as libc::c_ushort,
            filter: program.as_ptr() as *mut libc::sock_filter,
        };
        // SAFETY: seccomp(2) reads `prog`, a stack struct pointing at a BPF program the
        // caller owns (seccompiler's sock_filter has the kernel's layout); the kernel copies
        // it. no_new_privs is already set.
        if unsafe {
            libc::syscall(
                libc::SYS_seccomp,
                libc::SECCOMP_SET_MODE_FILTER,
                0u32,
                &prog as *const libc::sock_fprog,
            )
        } != 0
        {
            return fail();
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_build_for_this_arch() {
        let arch = TargetArch::try_from(std::env::consts::ARCH).unwrap();
        assert!(!deny_filter(arch, true, true).unwrap().is_empty());
        assert!(!enosys_filter(arch).unwrap().is_empty());
    }

    /// The set-ID refusals by their effect, in a child under the filters: each syscall
    /// that would leave a set-ID bit fails as it should (a failed check is the spawn's
    /// error, 1000 + its number), and the shell's tools leave no set-ID file, while
    /// ordinary modes still work.
    #[test]
    fn set_id_modes_are_refused() {
        use std::os::unix::fs::PermissionsExt;
        if !host_support().seccomp {
            return;
        }
        let dir = std::env::temp_dir().join(format!("corral-sys-setid-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join("mine"), "").unwrap();
        let filters = filters(false, false).unwrap();
        let (new, mine, here) = (c"new".to_owned(), c"mine".to_owned(), c".".to_owned());
        let mut cmd = Command::new("sh");
        cmd.current_dir(&dir).args([
            "-c",
            "set -e; : > a; chmod 4755 a || :; : > b; chmod g+s b || :; \
             mkdir -m 2755 d || :; mkdir e; chmod 2755 e || :; \
             : > ok; chmod 755 ok; mkdir -p p/q; chmod -R a+rX p",
        ]);
        let hook = move || -> io::Result<()> {
            let expect = |n: i32, r: libc::c_long, errno_wanted: i32| {
                if r == -1 && errno() == errno_wanted {
                    Ok(())
                } else {
                    Err(io::Error::from_raw_os_error(1000 + n))
                }
            };
            // SAFETY: prctl(2) with integer arguments.
            if unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } != 0 {
                return fail();
            }
            install_filters(&filters)?;
            // SAFETY: syscalls on NUL-terminated paths and a descriptor this hook opens;
            // `how` lives on this frame.
            unsafe {
                let creat = libc::O_CREAT | libc::O_WRONLY | libc::O_CLOEXEC;
                let r = libc::open(new.as_ptr(), creat, 0o4755);
                expect(1, r.into(), libc::EPERM)?;
                let r = libc::open(new.as_ptr(), creat, 0o2755);
                expect(2, r.into(), libc::EPERM)?;
                let r = libc::open(here.as_ptr(), libc::O_TMPFILE | libc::O_WRONLY, 0o4700);
                expect(3, r.into(), libc::EPERM)?;
                let how = [(creat as u64), 0o4755, 0];
                let r = libc::syscall(
                    libc::SYS_openat2,
                    libc::AT_FDCWD,
                    new.as_ptr(),
                    how.as_ptr(),
                    std::mem::size_of_val(&how),
                );
                expect(4, r, libc::ENOSYS)?;
                let r = libc::syscall(SYS_FCHMODAT2, libc::AT_FDCWD, mine.as_ptr(), 0o4755, 0);
                expect(5, r, libc::EPERM)?;
                let r = libc::mknodat(libc::AT_FDCWD, new.as_ptr(), libc::S_IFREG | 0o4755, 0);
                expect(6, r.into(), libc::EPERM)?;
                // Not creating: whatever the mode register holds, the open is the file's.
                let fd = libc::open(mine.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC, 0o4755);
                if fd < 0 {
                    return Err(io::Error::from_raw_os_error(1007));
                }
                expect(8, libc::fchmod(fd, 0o4755).into(), libc::EPERM)?;
                if libc::fchmod(fd, 0o640) != 0 {
                    return Err(io::Error::from_raw_os_error(1009));
                }
                libc::close(fd);
            }
            Ok(())
        };
        // SAFETY: a test's child; the hook's checks allocate nothing but their errors.
        unsafe {
            cmd.pre_exec(hook);
        }
        let status = cmd.status().unwrap();
        let mode = |name: &str| {
            std::fs::symlink_metadata(dir.join(name))
                .map(|m| m.permissions().mode() & 0o7777)
                .ok()
        };
        let left = ["a", "b", "d", "e", "new"]
            .into_iter()
            .filter(|name| mode(name).is_some_and(|m| m & 0o6000 != 0))
            .collect::<Vec<_>>();
        assert!(status.success(), "{status:?}");
        assert!(left.is_empty(), "set-ID modes left: {left:?}");
        assert_eq!(mode("ok"), Some(0o755));
        assert_eq!(mode("mine"), Some(0o640));
        assert!(mode("p/q").is_some());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn each_run_namespace_is_its_own() {
        if !host_support().namespaces {
            return;
        }
        let (a, b) = (
            NetNamespace::create().unwrap(),
            NetNamespace::create().unwrap(),
        );
        assert_ne!(a.inode().unwrap(), b.inode().unwrap());
        assert_eq!(a.inode().unwrap(), a.clone().inode().unwrap());
        let own = std::fs::metadata("/proc/self/ns/net").unwrap();
        assert_ne!(
            a.inode().unwrap(),
            std::os::unix::fs::MetadataExt::ino(&own),
            "the process stays in its own namespace"
        );
    }

    #[test]
    fn the_host_is_probed() {
        let host = host_support();
        assert_eq!(host, host_support());
    }
}
