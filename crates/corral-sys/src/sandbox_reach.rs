//! What a sandboxed command can read around its permissions: paths hidden by empty
//! read-only mounts, a private `/dev` with only the usual nodes, and the capabilities
//! that read around permissions or reach raw devices taken away. Built in the parent
//! (`Reach::build`), applied in the child (`Reach::apply_mounts`, `Reach::apply_caps`)
//! with raw syscalls only, inside the call's own mount namespace and before
//! `no_new_privs`, Landlock and seccomp.
//!
//! - **Read denies.** A denied directory gets an empty tmpfs mounted over it, read-only,
//!   mode `000`; a denied file gets `/dev/null` bind-mounted over it, remounted
//!   read-only and `nodev`, so opening it fails with `EACCES` (a device node on a `nodev`
//!   mount cannot be opened, whatever the caller's capabilities).
//! - **Private `/dev`.** A tmpfs over `/dev` holding binds of the host's `null`, `zero`,
//!   `full`, `random`, `urandom` and `tty`, a `devpts` instance of its own (`pts`, with
//!   `ptmx` linking to it), a `shm` tmpfs, and the `fd`, `stdin`, `stdout`, `stderr`
//!   links; then remounted read-only. The host's nodes are reached through descriptors
//!   opened before the fork (`/proc/self/fd/N`), since the tmpfs hides them.
//! - **Capabilities.** Every capability ([`CAPABILITIES`]) leaves the bounding set (so
//!   an exec as root cannot get it back) and the effective, permitted and inheritable
//!   sets; the ambient set is cleared, and `RLIMIT_RTPRIO` is 0 (no real-time priority to
//!   starve the host with). Only done when the process holds `CAP_SETPCAP` (root, or a
//!   child in corral's user namespace): otherwise it holds none to begin with. A root box
//!   whose writable root belongs to another user keeps [`OWNER_CAPS`], without which uid
//!   0 could not write there.

use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

/// Every capability the kernel has defined, by number: a sandboxed command holds none.
/// A kernel that knows more than these (`/proc/sys/kernel/cap_last_cap`) has the rest
/// dropped too, by number.
pub const CAPABILITIES: &[&str] = &[
    "CAP_CHOWN",
    "CAP_DAC_OVERRIDE",
    "CAP_DAC_READ_SEARCH",
    "CAP_FOWNER",
    "CAP_FSETID",
    "CAP_KILL",
    "CAP_SETGID",
    "CAP_SETUID",
    "CAP_SETPCAP",
    "CAP_LINUX_IMMUTABLE",
    "CAP_NET_BIND_SERVICE",
    "CAP_NET_BROADCAST",
    "CAP_NET_ADMIN",
    "CAP_NET_RAW",
    "CAP_IPC_LOCK",
    "CAP_IPC_OWNER",
    "CAP_SYS_MODULE",
    "CAP_SYS_RAWIO",
    "CAP_SYS_CHROOT",
    "CAP_SYS_PTRACE",
    "CAP_SYS_PACCT",
    "CAP_SYS_ADMIN",
    "CAP_SYS_BOOT",
    "CAP_SYS_NICE",
    "CAP_SYS_RESOURCE",
    "CAP_SYS_TIME",
    "CAP_SYS_TTY_CONFIG",
    "CAP_MKNOD",
    "CAP_LEASE",
    "CAP_AUDIT_WRITE",
    "CAP_AUDIT_CONTROL",
    "CAP_SETFCAP",
    "CAP_MAC_OVERRIDE",
    "CAP_MAC_ADMIN",
    "CAP_SYSLOG",
    "CAP_WAKE_ALARM",
    "CAP_BLOCK_SUSPEND",
    "CAP_AUDIT_READ",
    "CAP_PERFMON",
    "CAP_BPF",
    "CAP_CHECKPOINT_RESTORE",
];

/// What a root box keeps where a writable root belongs to another user: writing files
/// whatever their mode (`CAP_DAC_OVERRIDE`) and changing their times and modes
/// (`CAP_FOWNER`). Landlock still confines where.
pub const OWNER_CAPS: &[u32] = &[1, 3];

/// The name of capability `cap`.
pub fn capability_name(cap: u32) -> String {
    CAPABILITIES
        .get(cap as usize)
        .map_or_else(|| format!("capability {cap}"), |n| n.to_string())
}

/// The host's device nodes the private `/dev` binds.
pub const DEV_NODES: &[&str] = &["null", "zero", "full", "random", "urandom", "tty"];

/// The links the private `/dev` holds: (name, target).
const DEV_LINKS: &[(&std::ffi::CStr, &std::ffi::CStr)] = &[
    (c"/dev/ptmx", c"pts/ptmx"),
    (c"/dev/fd", c"/proc/self/fd"),
    (c"/dev/stdin", c"/proc/self/fd/0"),
    (c"/dev/stdout", c"/proc/self/fd/1"),
    (c"/dev/stderr", c"/proc/self/fd/2"),
];

/// Whether this process holds `CAP_SETPCAP` in its effective set (it can drop
/// capabilities from the bounding set).
pub fn holds_setpcap() -> bool {
    std::fs::read_to_string("/proc/self/status").is_ok_and(|s| {
        s.lines()
            .find_map(|l| l.strip_prefix("CapEff:"))
            .and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
            .is_some_and(|bits| bits & (1 << 8) != 0)
    })
}

/// One host node bound into the private `/dev`: its path, which is both where the child
/// opens it (before the tmpfs hides it) and where it is bound.
#[derive(Debug)]
struct DevNode {
    target: CString,
}

/// The reach limits of one confinement, built before the fork.
#[derive(Debug, Default)]
pub(crate) struct Reach {
    deny_dirs: Vec<CString>,
    deny_files: Vec<CString>,
    /// Socket files hidden as denied files are; one gone by the time the box is made is
    /// skipped (nothing is left there to connect to).
    sockets: Vec<CString>,
    dev: Option<Vec<DevNode>>,
    drop_caps: bool,
    /// The capabilities kept (bit `n` for capability `n`).
    keep: u64,
}

fn cstring(p: &std::path::Path) -> io::Result<CString> {
    CString::new(p.as_os_str().as_bytes()).map_err(|e| io::Error::other(e.to_string()))
}

impl Reach {
    /// Prepare the read denies for `deny` (existing paths only; a directory gets a tmpfs,
    /// anything else `/dev/null`), a private `/dev` when `private_dev`, and the capability
    /// drop when `drop_caps`, but for those in `keep`. Returns how many paths will be
    /// hidden.
    pub fn build(
        deny: &[PathBuf],
        private_dev: bool,
        drop_caps: bool,
        keep: &[u32],
    ) -> io::Result<Reach> {
        let mut reach = Reach {
            drop_caps,
            keep: keep.iter().fold(0, |mask, cap| mask | 1 << cap),
            ..Reach::default()
        };
        for path in deny {
            let Ok(meta) = std::fs::metadata(path) else {
                continue;
            };
            if meta.is_dir() {
                reach.deny_dirs.push(cstring(path)?);
            } else {
                reach.deny_files.push(cstring(path)?);
            }
        }
        if private_dev {
            let mut nodes = Vec::new();
            for name in DEV_NODES {
                let host = PathBuf::from("/dev").join(name);
                if host.exists() {
                    nodes.push(DevNode {
                        target: cstring(&host)?,
                    });
                }
            }
            reach.dev = Some(nodes);
        }
        Ok(reach)
    }

    /// Hide the socket files among `paths` too (see [`Reach::sockets`]).
    pub fn with_sockets(mut self, paths: &[PathBuf]) -> io::Result<Reach> {
        use std::os::unix::fs::FileTypeExt;
        for path in paths {
            if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_socket()) {
                self.sockets.push(cstring(path)?);
            }
        }
        Ok(self)
    }

    /// How many paths are hidden.
    pub fn hidden(&self) -> usize {
        self.deny_dirs.len() + self.deny_files.len()
    }

    /// How many socket files are hidden.
    pub fn sockets(&self) -> usize {
        self.sockets.len()
    }

    /// The paths its mounts cover (denied directories and files, the private `/dev`'s
    /// nodes), each with what kind it was taken for: what a copy of these mounts made
    /// earlier must match to stand for them.
    pub(crate) fn mount_targets(&self) -> impl Iterator<Item = (&std::ffi::CStr, char)> {
        let dirs = self.deny_dirs.iter().map(|p| (p.as_c_str(), 'd'));
        let files = self.deny_files.iter().map(|p| (p.as_c_str(), 'f'));
        let sockets = self.sockets.iter().map(|p| (p.as_c_str(), 's'));
        let dev = self
            .dev
            .iter()
            .flatten()
            .map(|n| (n.target.as_c_str(), 'n'));
        dirs.chain(files).chain(sockets).chain(dev)
    }

    /// Whether anything needs the mount namespace.
    pub fn mounts(&self) -> bool {
        self.hidden() > 0 || !self.sockets.is_empty() || self.dev.is_some()
    }

    /// Apply the mounts (in the child, in its own private mount namespace).
    pub fn apply_mounts(&self) -> io::Result<()> {
        for dir in &self.deny_dirs {
            // SAFETY: mount(2) with NUL-terminated strings built before the fork.
            let r = unsafe {
                libc::mount(
                    c"tmpfs".as_ptr(),
                    dir.as_ptr(),
                    c"tmpfs".as_ptr(),
                    libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                    c"size=4k,nr_inodes=1,mode=000".as_ptr().cast(),
                )
            };
            if r != 0 {
                return fail();
            }
        }
        for file in &self.deny_files {
            bind(c"/dev/null", file)?;
            remount(
                file,
                libc::MS_RDONLY | libc::MS_NODEV | libc::MS_NOSUID | libc::MS_NOEXEC,
            )?;
        }
        for socket in &self.sockets {
            match bind(c"/dev/null", socket) {
                Ok(()) => remount(
                    socket,
                    libc::MS_RDONLY | libc::MS_NODEV | libc::MS_NOSUID | libc::MS_NOEXEC,
                )?,
                Err(e) if e.raw_os_error() == Some(libc::ENOENT) => {}
                Err(e) => return Err(e),
            }
        }
        if let Some(nodes) = &self.dev {
            private_dev(nodes)?;
        }
        Ok(())
    }

    /// Drop every capability but the kept ones (in the child, after the mounts, which
    /// need `CAP_SYS_ADMIN`), and bound real-time priority at 0.
    pub fn apply_caps(&self) -> io::Result<()> {
        if !self.drop_caps {
            return Ok(());
        }
        let none = libc::rlimit64 {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: prlimit64(2) on this process with a structure on this frame.
        if unsafe { libc::prlimit64(0, libc::RLIMIT_RTPRIO, &none, std::ptr::null_mut()) } != 0 {
            return fail();
        }
        // SAFETY: prctl(2) with constant integer arguments.
        if unsafe {
            libc::prctl(
                libc::PR_CAP_AMBIENT,
                libc::PR_CAP_AMBIENT_CLEAR_ALL,
                0,
                0,
                0,
            )
        } != 0
        {
            return fail();
        }
        // `CAP_SETPCAP` (8), which every drop needs, goes from the bounding set last; the
        // kernel refuses a number past its last capability with EINVAL.
        for cap in (0..64u32).filter(|c| *c != 8).chain([8]) {
            if self.keep & (1 << cap) != 0 {
                continue;
            }
            // SAFETY: prctl(2) with integer arguments.
            if unsafe { libc::prctl(libc::PR_CAPBSET_DROP, cap as libc::c_ulong, 0, 0, 0) } != 0
                && errno() != libc::EINVAL
            {
                return fail();
            }
        }
        let mut header = CapHeader {
            version: LINUX_CAPABILITY_VERSION_3,
            pid: 0,
        };
        let kept = [self.keep as u32, (self.keep >> 32) as u32];
        let mut data = [CapData::default(); 2];
        // SAFETY: capget(2) writes two data structs (version 3) into `data`, which lives
        // on this stack frame; `header` is read and may be written.
        if unsafe { libc::syscall(libc::SYS_capget, &mut header, data.as_mut_ptr()) } != 0 {
            return fail();
        }
        for (d, k) in data.iter_mut().zip(kept) {
            d.effective &= k;
            d.permitted &= k;
            d.inheritable &= k;
        }
        // SAFETY: capset(2) reads the header and two data structs from this frame.
        if unsafe { libc::syscall(libc::SYS_capset, &mut header, data.as_ptr()) } != 0 {
            return fail();
        }
        Ok(())
    }
}

const LINUX_CAPABILITY_VERSION_3: u32 = 0x2008_0522;

#[repr(C)]
struct CapHeader {
    version: u32,
    pid: libc::c_int,
}

#[repr(C)]
#[derive(Clone, Copy, Default)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

fn errno() -> i32 {
    io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EPERM)
}

fn fail<T>() -> io::Result<T> {
    Err(io::Error::from_raw_os_error(errno()))
}

fn bind(source: &std::ffi::CStr, target: &std::ffi::CStr) -> io::Result<()> {
    // SAFETY: mount(2) with NUL-terminated strings that outlive the call.
    if unsafe {
        libc::mount(
            source.as_ptr(),
            target.as_ptr(),
            std::ptr::null(),
            libc::MS_BIND,
            std::ptr::null(),
        )
    } != 0
    {
        return fail();
    }
    Ok(())
}

/// Remount the bind at `target` with `flags` added to those it has. Keeping them matters
/// in a user namespace, where a mount inherited from the host has its flags locked
/// (`nosuid`, `nodev`, `noexec`, the atime ones): a remount that would clear one is
/// refused.
pub(crate) fn remount(target: &std::ffi::CStr, flags: libc::c_ulong) -> io::Result<()> {
    // SAFETY: statvfs(2) into a zeroed structure on this frame, for a NUL-terminated path.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    if unsafe { libc::statvfs(target.as_ptr(), &raw mut st) } != 0 {
        return fail();
    }
    const KEPT: [(libc::c_ulong, libc::c_ulong); 7] = [
        (libc::ST_RDONLY, libc::MS_RDONLY),
        (libc::ST_NOSUID, libc::MS_NOSUID),
        (libc::ST_NODEV, libc::MS_NODEV),
        (libc::ST_NOEXEC, libc::MS_NOEXEC),
        (libc::ST_NOATIME, libc::MS_NOATIME),
        (libc::ST_NODIRATIME, libc::MS_NODIRATIME),
        (libc::ST_RELATIME, libc::MS_RELATIME),
    ];
    let kept = KEPT
        .iter()
        .filter(|(st_flag, _)| st.f_flag & st_flag != 0)
        .fold(0, |all, (_, ms_flag)| all | ms_flag);
    // SAFETY: mount(2) remounting an existing bind with new flags; strings outlive it.
    if unsafe {
        libc::mount(
            std::ptr::null(),
            target.as_ptr(),
            std::ptr::null(),
            libc::MS_REMOUNT | libc::MS_BIND | flags | kept,
            std::ptr::null(),
        )
    } != 0
    {
        return fail();
    }
    Ok(())
}

fn mount_fs(
    fstype: &std::ffi::CStr,
    target: &std::ffi::CStr,
    flags: libc::c_ulong,
    data: &std::ffi::CStr,
) -> io::Result<()> {
    // SAFETY: mount(2) of a new filesystem instance; every string outlives the call.
    if unsafe {
        libc::mount(
            fstype.as_ptr(),
            target.as_ptr(),
            fstype.as_ptr(),
            flags,
            data.as_ptr().cast(),
        )
    } != 0
    {
        return fail();
    }
    Ok(())
}

fn mkdir(path: &std::ffi::CStr, mode: libc::mode_t) -> io::Result<()> {
    // SAFETY: mkdir(2) with a NUL-terminated string.
    if unsafe { libc::mkdir(path.as_ptr(), mode) } != 0 {
        return fail();
    }
    Ok(())
}

/// The most host nodes the private `/dev` binds.
const MAX_NODES: usize = 8;

/// `/proc/self/fd/<fd>` with a NUL, written into `buf` without allocating.
fn fd_path(fd: libc::c_int, buf: &mut [u8; 32]) -> &std::ffi::CStr {
    const PREFIX: &[u8] = b"/proc/self/fd/";
    buf[..PREFIX.len()].copy_from_slice(PREFIX);
    let mut digits = [0u8; 12];
    let mut n = fd.unsigned_abs();
    let mut len = 0;
    loop {
        digits[len] = b'0' + (n % 10) as u8;
        len += 1;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    for i in 0..len {
        buf[PREFIX.len() + i] = digits[len - 1 - i];
    }
    buf[PREFIX.len() + len] = 0;
    std::ffi::CStr::from_bytes_until_nul(&buf[..]).unwrap_or(c"/dev/null")
}

fn private_dev(nodes: &[DevNode]) -> io::Result<()> {
    // The host's nodes, opened (O_PATH: a terminal is not really opened) in this mount
    // namespace before the tmpfs hides them; a bind needs a source in the same namespace.
    let mut fds = [-1 as libc::c_int; MAX_NODES];
    for (node, fd) in nodes.iter().zip(fds.iter_mut()) {
        // SAFETY: open(2) with a NUL-terminated path built before the fork.
        *fd = unsafe { libc::open(node.target.as_ptr(), libc::O_PATH | libc::O_CLOEXEC) };
        if *fd < 0 {
            return fail();
        }
    }
    mount_fs(
        c"tmpfs",
        c"/dev",
        libc::MS_NOSUID | libc::MS_NOEXEC,
        c"mode=0755,size=64k,nr_inodes=64",
    )?;
    for (node, source) in nodes.iter().zip(fds) {
        // SAFETY: open(2) creating an empty file as the bind target, closed at once.
        let fd = unsafe {
            libc::open(
                node.target.as_ptr(),
                libc::O_CREAT | libc::O_WRONLY | libc::O_CLOEXEC,
                0o666 as libc::c_uint,
            )
        };
        if fd < 0 {
            return fail();
        }
        // SAFETY: `fd` was just opened here and is closed once.
        unsafe { libc::close(fd) };
        let mut buf = [0u8; 32];
        bind(fd_path(source, &mut buf), &node.target)?;
        // SAFETY: `source` was opened above and is closed once.
        unsafe { libc::close(source) };
    }
    mkdir(c"/dev/pts", 0o755)?;
    mount_fs(
        c"devpts",
        c"/dev/pts",
        libc::MS_NOSUID | libc::MS_NOEXEC,
        c"newinstance,ptmxmode=0666,mode=0620",
    )?;
    mkdir(c"/dev/shm", 0o1777)?;
    mount_fs(
        c"tmpfs",
        c"/dev/shm",
        libc::MS_NOSUID | libc::MS_NODEV,
        c"mode=1777",
    )?;
    for (link, target) in DEV_LINKS {
        // SAFETY: symlink(2) with NUL-terminated constant strings.
        if unsafe { libc::symlink(target.as_ptr(), link.as_ptr()) } != 0 {
            return fail();
        }
    }
    // SAFETY: mount(2) remounting the /dev tmpfs read-only; constant strings.
    if unsafe {
        libc::mount(
            std::ptr::null(),
            c"/dev".as_ptr(),
            std::ptr::null(),
            libc::MS_REMOUNT | libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NOEXEC,
            std::ptr::null(),
        )
    } != 0
    {
        return fail();
    }
    Ok(())
}
