//! Whether an ordinary user may make a user namespace here, and if not, why.
//!
//! Without `CAP_SYS_ADMIN`, mount, PID and network namespaces can be made only inside a
//! user namespace of one's own. Hosts differ in whether that is allowed: Ubuntu 24.04 and
//! later refuse it to programs without an AppArmor profile that says `userns,`
//! (`kernel.apparmor_restrict_unprivileged_userns`), older Debian kernels had
//! `kernel.unprivileged_userns_clone`, `user.max_user_namespaces = 0` turns it off, and a
//! container's seccomp profile may refuse `unshare` and `clone` with the flag.
//!
//! [`probe`] finds out by trying, once per process, in a forked child (a process that
//! shares corral's memory, or one with other threads, cannot make one): the child calls
//! `unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWPID)` and exits with
//! its errno. The sysctls are read only afterwards, to word the reason of a refusal.

use std::sync::OnceLock;

/// What the probe found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UserNamespaces {
    /// This process may make a user namespace, and mount, network and PID namespaces in it.
    Allowed,
    /// It may not: the reason, in words a user can act on.
    Refused(String),
}

impl UserNamespaces {
    /// Whether they are allowed.
    pub fn allowed(&self) -> bool {
        matches!(self, UserNamespaces::Allowed)
    }
}

/// Try, once per process (see the module docs).
pub fn probe() -> &'static UserNamespaces {
    static PROBED: OnceLock<UserNamespaces> = OnceLock::new();
    PROBED.get_or_init(|| match try_in_child() {
        Ok(()) => UserNamespaces::Allowed,
        Err(errno) => UserNamespaces::Refused(why_refused(errno, &Sysctls::read())),
    })
}

/// The user namespace of this process's boxes, where corral is not root and the host
/// allows one: made once, mapping this user (and group) to itself, so nothing inside is
/// root and a command's capabilities end at its `exec`. A sandboxed child joins it
/// (`setns`) before it makes its mount and network namespaces, which it then owns.
///
/// A forked helper makes it (`unshare(CLONE_NEWUSER)`), this process writes its maps
/// (`uid_map`, `setgroups` = `deny`, `gid_map`: an ordinary user may map only itself),
/// keeps a descriptor of `/proc/<helper>/ns/user`, and the helper exits. `None` as root
/// (namespaces are made directly) and where the probe found them refused.
pub fn shared() -> Option<&'static std::os::fd::OwnedFd> {
    static SHARED: OnceLock<Option<std::os::fd::OwnedFd>> = OnceLock::new();
    SHARED
        .get_or_init(|| {
            if rustix::process::geteuid().is_root() || !probe().allowed() {
                return None;
            }
            make().ok()
        })
        .as_ref()
}

/// The descriptor of [`shared`], where corral builds its boxes in it (an ordinary user
/// on a host that allows it): what the namespaces' makers join first.
pub(crate) fn inside() -> Option<std::os::fd::RawFd> {
    use std::os::fd::AsRawFd;
    shared().map(AsRawFd::as_raw_fd)
}

/// Make the namespace: see [`shared`].
fn make() -> std::io::Result<std::os::fd::OwnedFd> {
    use std::io::{Read, Write};
    let (mut made_rx, made_tx) = std::io::pipe()?;
    let (done_rx, mut done_tx) = std::io::pipe()?;
    let (made_fd, done_fd) = {
        use std::os::fd::AsRawFd;
        (made_tx.as_raw_fd(), done_rx.as_raw_fd())
    };
    // SAFETY: a raw clone(2) with only SIGCHLD is a fork: the child gets a copy of this
    // thread alone and makes only raw system calls on descriptors and a buffer on its
    // stack (unshare, write, read, _exit).
    let pid = unsafe { libc::syscall(libc::SYS_clone, libc::SIGCHLD, 0, 0, 0, 0) };
    if pid == 0 {
        // SAFETY: the child, as above; it never returns into corral's code.
        unsafe {
            let ok: u8 = if libc::unshare(libc::CLONE_NEWUSER) == 0 {
                1
            } else {
                0
            };
            libc::write(made_fd, (&raw const ok).cast(), 1);
            let mut byte = 0u8;
            libc::read(done_fd, (&raw mut byte).cast(), 1);
            libc::_exit(0);
        }
    }
    drop(made_tx);
    drop(done_rx);
    let pid = libc::pid_t::try_from(pid).map_err(|_| std::io::Error::last_os_error())?;
    if pid < 0 {
        return Err(std::io::Error::last_os_error());
    }
    let made = (|| {
        let mut ok = [0u8];
        made_rx.read_exact(&mut ok)?;
        if ok[0] != 1 {
            return Err(std::io::Error::other(
                "the helper could not make a user namespace",
            ));
        }
        let uid = rustix::process::geteuid().as_raw();
        let gid = rustix::process::getegid().as_raw();
        let dir = format!("/proc/{pid}");
        std::fs::write(format!("{dir}/uid_map"), format!("{uid} {uid} 1"))?;
        std::fs::write(format!("{dir}/setgroups"), "deny")?;
        std::fs::write(format!("{dir}/gid_map"), format!("{gid} {gid} 1"))?;
        Ok(std::os::fd::OwnedFd::from(std::fs::File::open(format!(
            "{dir}/ns/user"
        ))?))
    })();
    let _ = done_tx.write_all(b"x");
    drop(done_tx);
    let mut status = 0;
    // SAFETY: waitpid(2) on the helper just made, with a status word on this frame.
    while unsafe { libc::waitpid(pid, &raw mut status, 0) } < 0
        && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR)
    {}
    made
}

/// Fork a child that tries, and return its errno (0: it could).
fn try_in_child() -> Result<(), i32> {
    let flags = libc::CLONE_NEWUSER | libc::CLONE_NEWNS | libc::CLONE_NEWNET | libc::CLONE_NEWPID;
    // SAFETY: a raw clone(2) with only SIGCHLD is a fork: the child gets a copy of this
    // thread alone. It makes only raw system calls (unshare, _exit) on values on its
    // stack, so no lock another thread held at the fork is ever taken in it.
    let pid = unsafe { libc::syscall(libc::SYS_clone, libc::SIGCHLD, 0, 0, 0, 0) };
    if pid == 0 {
        // SAFETY: the child: unshare(2) with constant flags, then _exit(2), never
        // returning into corral's code.
        unsafe {
            let code = if libc::unshare(flags) == 0 {
                0
            } else {
                *libc::__errno_location()
            };
            libc::_exit(code.clamp(0, 255));
        }
    }
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return Err(libc::EPERM);
    };
    if pid < 0 {
        return Err(std::io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EPERM));
    }
    let mut status = 0;
    loop {
        // SAFETY: waitpid(2) on the child just made, with a status word on this frame.
        let r = unsafe { libc::waitpid(pid, &raw mut status, 0) };
        if r == pid {
            break;
        }
        let e = std::io::Error::last_os_error().raw_os_error();
        if r < 0 && e != Some(libc::EINTR) {
            return Err(libc::EPERM);
        }
    }
    match (libc::WIFEXITED(status), libc::WEXITSTATUS(status)) {
        (true, 0) => Ok(()),
        (true, errno) => Err(errno),
        _ => Err(libc::EPERM),
    }
}

/// The settings that word a refusal.
#[derive(Debug, Default)]
struct Sysctls {
    apparmor_restrict: Option<String>,
    unprivileged_clone: Option<String>,
    max_user_namespaces: Option<String>,
    under_seccomp: bool,
}

impl Sysctls {
    fn read() -> Self {
        let read = |p: &str| {
            std::fs::read_to_string(p)
                .ok()
                .map(|s| s.trim().to_string())
        };
        let seccomp = std::fs::read_to_string("/proc/self/status").ok();
        Self {
            apparmor_restrict: read("/proc/sys/kernel/apparmor_restrict_unprivileged_userns"),
            unprivileged_clone: read("/proc/sys/kernel/unprivileged_userns_clone"),
            max_user_namespaces: read("/proc/sys/user/max_user_namespaces"),
            under_seccomp: seccomp.is_some_and(|s| {
                s.lines()
                    .any(|l| l.split_whitespace().collect::<Vec<_>>() == ["Seccomp:", "2"])
            }),
        }
    }
}

/// Word a refusal with errno `errno`, from what the sysctls say.
fn why_refused(errno: i32, s: &Sysctls) -> String {
    if s.apparmor_restrict.as_deref() == Some("1") {
        return "user namespaces are refused by AppArmor (kernel.apparmor_restrict_unprivileged_userns = 1): \
                an AppArmor profile with `userns,` for the corral binary allows them"
            .into();
    }
    if s.unprivileged_clone.as_deref() == Some("0") {
        return "user namespaces are off for ordinary users (kernel.unprivileged_userns_clone = 0): \
                `sysctl kernel.unprivileged_userns_clone=1` allows them"
            .into();
    }
    if s.max_user_namespaces.as_deref() == Some("0") {
        return "user namespaces are off (user.max_user_namespaces = 0)".into();
    }
    match errno {
        libc::ENOSPC => "the limit on user namespaces is reached (user.max_user_namespaces)".into(),
        libc::EINVAL | libc::ENOSYS => {
            "this kernel was built without user namespaces (CONFIG_USER_NS)".into()
        }
        _ if s.under_seccomp => {
            "user namespaces are refused, by the seccomp filter corral itself runs under \
             (a container's profile)"
                .into()
        }
        e => format!(
            "user namespaces are refused by the kernel ({})",
            std::io::Error::from_raw_os_error(e)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_probe_returns_and_agrees_with_itself() {
        let first = probe().clone();
        assert_eq!(&first, probe(), "cached");
        // `.ci/run` says so where `unshare --user` works for its unprivileged user: the
        // probe must then find them too, rather than report a refusal.
        if std::env::var_os("CORRAL_TEST_EXPECT_USERNS").is_some_and(|v| v == "1") {
            assert_eq!(first, UserNamespaces::Allowed);
        }
    }

    #[test]
    fn an_ordinary_user_gets_a_namespace_that_maps_only_itself() {
        let Some(ns) = shared() else {
            assert!(
                rustix::process::geteuid().is_root() || !probe().allowed(),
                "allowed, but none was made"
            );
            return;
        };
        // A forked child joins it and reads its own uid map: this user, to itself.
        use std::os::fd::AsRawFd;
        let fd = ns.as_raw_fd();
        let out = std::process::Command::new("/bin/cat")
            .arg("/proc/self/uid_map")
            .pre_exec_join(fd)
            .output()
            .unwrap();
        let uid = rustix::process::geteuid().as_raw();
        let map: Vec<String> = String::from_utf8_lossy(&out.stdout)
            .split_whitespace()
            .map(str::to_string)
            .collect();
        assert_eq!(map, [uid.to_string(), uid.to_string(), "1".into()]);
    }

    trait JoinBeforeExec {
        fn pre_exec_join(&mut self, fd: i32) -> &mut Self;
    }

    impl JoinBeforeExec for std::process::Command {
        fn pre_exec_join(&mut self, fd: i32) -> &mut Self {
            use std::os::unix::process::CommandExt;
            // SAFETY: setns(2) on a descriptor that outlives the spawn, in the forked child.
            unsafe {
                self.pre_exec(move || {
                    if libc::setns(fd, libc::CLONE_NEWUSER) == 0 {
                        Ok(())
                    } else {
                        Err(std::io::Error::last_os_error())
                    }
                })
            }
        }
    }

    #[test]
    fn a_refusal_names_the_setting_that_made_it() {
        let apparmor = Sysctls {
            apparmor_restrict: Some("1".into()),
            ..Sysctls::default()
        };
        assert!(why_refused(libc::EPERM, &apparmor).contains("AppArmor"));
        let debian = Sysctls {
            unprivileged_clone: Some("0".into()),
            ..Sysctls::default()
        };
        assert!(why_refused(libc::EPERM, &debian).contains("unprivileged_userns_clone = 0"));
        let container = Sysctls {
            under_seccomp: true,
            ..Sysctls::default()
        };
        assert!(why_refused(libc::EPERM, &container).contains("seccomp"));
        assert!(why_refused(libc::ENOSPC, &Sysctls::default()).contains("limit"));
    }
}
