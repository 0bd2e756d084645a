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
