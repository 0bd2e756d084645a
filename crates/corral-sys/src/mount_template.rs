//! The mount namespace every PID namespace's init copies.
//!
//! A call's init needs a mount namespace of its own, for a `/proc` that shows its PID
//! namespace: one that receives the host's mounts and sends none back (every mount a
//! slave), without the host's `/proc` beneath the fresh one where the kernel allows taking
//! it away (so a root command that unmounts the fresh one cannot see the host's processes).
//! Made from the host's namespace at every call, that is a walk over every mount to make
//! it a slave and an unmount of the host's `/proc`, which waits for an RCU grace period.
//!
//! The template is that namespace, made once: the host's mounts, each a slave, with the
//! host's `/proc` detached (see [`crate::pidns`] for when it stays). An init joins it and
//! copies it (`setns`, then `unshare(CLONE_NEWNS)`, whose copies of slave mounts are slaves
//! of the same masters), and mounts only its own `/proc`.
//!
//! No process holds it: a descriptor of the namespace does. On a host whose mounts
//! propagate, what the host mounts later reaches the template as it reaches any slave. On
//! one whose mounts do not, a copy would show the mounts of the moment the template was
//! made; so the host's mount table is watched (a read-only `/proc/self/mountinfo` reports
//! any change to its namespace as a priority event on `poll`, watched before the template
//! is made so none is missed) and the template is made anew after the host's mounts
//! change.
//!
//! A sandboxed run goes one step further: `sandbox_mounts` makes the template with a
//! sandbox's own mounts in it once, for the calls whose confinement would make the same
//! ones.

use std::io;
#[cfg(test)]
use std::os::fd::AsRawFd;
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// The template and the watch on the host's mounts it was made after.
struct Current {
    /// The template's mount namespace (`/proc/thread-self/ns/mnt` of the thread that made it).
    ns: Arc<OwnedFd>,
    /// The host's `/proc/self/mountinfo`, open since before the template was made.
    watch: OwnedFd,
}

static CURRENT: Mutex<Option<Current>> = Mutex::new(None);
/// How many times a template was made in this process: a copy of the host's mounts made
/// at another count than the current one is older than the host's last change.
static GENERATION: AtomicU64 = AtomicU64::new(0);
/// Set once a template could not be made or used here: inits then make their namespace
/// from the host's, as without one.
static REFUSED: AtomicBool = AtomicBool::new(false);

/// The template to copy, made (again) when there is none or the host's mounts changed
/// since; `None` where this host does not allow one. The host's `/proc` is taken away in
/// it where [`initial_user_namespace`] says the kernel allows that.
pub(crate) fn current() -> Option<Arc<OwnedFd>> {
    if REFUSED.load(Ordering::Relaxed) {
        return None;
    }
    let mut current = CURRENT.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(made) = current.as_ref()
        && !changed(&made.watch)
    {
        return Some(Arc::clone(&made.ns));
    }
    *current = None;
    GENERATION.fetch_add(1, Ordering::Relaxed);
    match make() {
        Ok(made) => {
            let ns = Arc::clone(&made.ns);
            *current = Some(made);
            Some(ns)
        }
        Err(_) => {
            // `current` is already `None`, and its lock is held here: only the flag.
            REFUSED.store(true, Ordering::Relaxed);
            None
        }
    }
}

/// Stop using templates in this process (an init could not join or copy one). Takes the
/// template's lock: never call it with the lock held.
pub(crate) fn refuse() {
    REFUSED.store(true, Ordering::Relaxed);
    *CURRENT.lock().unwrap_or_else(|e| e.into_inner()) = None;
}

/// The count of templates made so far, for a copy of the host's mounts made beside the
/// template to tell whether the host's mounts changed since it was made.
pub(crate) fn generation() -> u64 {
    GENERATION.load(Ordering::Relaxed)
}

/// Whether corral runs in the host's own user namespace (its uid map is the identity).
/// Only there is the host's `/proc` taken away beneath the fresh one: in a container's
/// user namespace the kernel lets a new `/proc` be mounted only while one is fully
/// visible, so there it stays beneath, and a root command that unmounts the fresh one
/// sees the container's processes again (but still cannot signal them).
pub(crate) fn initial_user_namespace() -> bool {
    static INITIAL: OnceLock<bool> = OnceLock::new();
    *INITIAL.get_or_init(|| {
        std::fs::read_to_string("/proc/self/uid_map")
            .is_ok_and(|map| map.split_whitespace().collect::<Vec<_>>() == ["0", "0", "4294967295"])
    })
}

/// Whether the mount table `watch` was opened on changed since it was last asked.
fn changed(watch: &OwnedFd) -> bool {
    // A watch that cannot be polled cannot vouch for the template either.
    crate::kernel_file::ready_now(watch, rustix::event::PollFlags::PRI)
}

/// Make a template and the watch it stands for.
fn make() -> io::Result<Current> {
    let watch = OwnedFd::from(std::fs::File::open("/proc/self/mountinfo")?);
    let ns = made_apart(|| {
        let none = std::ptr::null();
        // SAFETY: mount(2) with a static NUL-terminated string and null pointers; it
        // changes only this thread's new namespace (receive the host's mounts, send none).
        let slaved = unsafe {
            libc::mount(
                none,
                c"/".as_ptr(),
                none,
                libc::MS_REC | libc::MS_SLAVE,
                none.cast(),
            )
        };
        if slaved != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    })?;
    Ok(Current {
        ns: Arc::new(ns),
        watch,
    })
}

/// A mount namespace made from the host's on a thread of its own (which leaves corral's
/// other threads in the host's, and takes its own reference to the namespace with it when
/// it ends): `mounts` made in it, a descriptor of it, and then, where
/// [`initial_user_namespace`], the host's `/proc` detached from it. What the template and
/// a sandbox's mounts are.
///
/// Where corral builds its boxes in a user namespace (an ordinary user's,
/// [`crate::userns::shared`]), no thread of this process may join it: a helper that does
/// makes the namespace instead ([`made_inside`]), so the namespace is owned by it as the
/// inits that copy it are.
pub(crate) fn made_apart(
    mounts: impl Fn() -> io::Result<()> + Send + 'static,
) -> io::Result<OwnedFd> {
    if let Some(user) = crate::userns::inside() {
        return made_inside(user, &mounts);
    }
    let detach_host_proc = initial_user_namespace();
    std::thread::Builder::new()
        .name("corral-mounts".into())
        .spawn(move || {
            // SAFETY: unshare(2) on this thread alone (CLONE_FS first gives it a
            // filesystem context of its own, which a mount namespace needs): no memory of
            // corral's is touched.
            if unsafe { libc::unshare(libc::CLONE_FS | libc::CLONE_NEWNS) } != 0 {
                return Err(io::Error::last_os_error());
            }
            mounts()?;
            // The descriptor names the namespace, not a moment of it: taken before /proc
            // goes.
            let ns = OwnedFd::from(std::fs::File::open("/proc/thread-self/ns/mnt")?);
            // SAFETY: umount2(2) with a static NUL-terminated string, in this thread's
            // own namespace, whose mounts send nothing to the host's.
            if detach_host_proc
                && unsafe { libc::umount2(c"/proc".as_ptr(), libc::MNT_DETACH) } != 0
            {
                return Err(io::Error::last_os_error());
            }
            Ok(ns)
        })?
        .join()
        .map_err(|_| io::Error::other("the thread making a mount namespace panicked"))?
}

/// What [`make_inside`] runs, on the frame of [`made_inside`].
struct Inside<'a> {
    mounts: &'a (dyn Fn() -> io::Result<()> + Send),
}

/// [`made_apart`] for an ordinary user: a helper beside corral (its memory and
/// descriptor table shared, see `joined`) joins the user namespace `user`, unshares a
/// mount namespace, makes `mounts` in it and opens it into the shared table. The host's
/// `/proc` stays beneath (the mounts a user namespace inherits are locked to it).
/// `mounts` must make only raw system calls, as a child between its birth and its exec
/// does (`Confinement::make_mounts_here`, the template's `MS_SLAVE`).
fn made_inside(
    user: std::os::fd::RawFd,
    mounts: &(dyn Fn() -> io::Result<()> + Send),
) -> io::Result<OwnedFd> {
    unsafe extern "C" fn make_inside(arg: *mut libc::c_void) -> libc::c_long {
        // SAFETY: `arg` is the `Inside` on the frame of `made_inside`, which waits for
        // this helper; `mounts` makes only raw system calls (the contract of
        // `made_inside`), and the open is of a static NUL-terminated string.
        unsafe {
            let inside = &*arg.cast::<Inside<'_>>();
            let errno = || -libc::c_long::from(*libc::__errno_location());
            if libc::unshare(libc::CLONE_NEWNS) != 0 {
                return errno();
            }
            if let Err(e) = (inside.mounts)() {
                return -libc::c_long::from(e.raw_os_error().unwrap_or(libc::EPERM));
            }
            let fd = libc::open(
                c"/proc/thread-self/ns/mnt".as_ptr(),
                libc::O_RDONLY | libc::O_CLOEXEC,
            );
            if fd < 0 {
                errno()
            } else {
                libc::c_long::from(fd)
            }
        }
    }
    let mut inside = Inside { mounts };
    // SAFETY: `make_inside` makes only raw system calls on what `inside` (on this frame,
    // alive through the call) points to, and returns once its namespace is open, which is
    // all it leaves behind: a descriptor in this process's table (CLONE_FILES).
    let fd = unsafe {
        crate::joined::clone_from_inside(
            user,
            libc::CLONE_NEWUSER,
            make_inside,
            (&raw mut inside).cast(),
        )
    }?;
    // SAFETY: the helper opened `fd` in this process's table, and nothing else owns it.
    Ok(unsafe { <OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(fd) })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    fn root() -> bool {
        rustix::process::geteuid().is_root()
    }

    /// Where no template can be made (an ordinary user without user namespaces), asking
    /// for one says so, now and again: it does not wait on its own lock.
    #[test]
    fn a_template_that_cannot_be_made_is_refused_without_a_hang() {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let made = [current().is_some(), current().is_some()];
            let _ = tx.send(made);
        });
        let made = rx
            .recv_timeout(std::time::Duration::from_secs(20))
            .expect("current() hung");
        assert_eq!(made[0], made[1], "the second answer agrees with the first");
        if !root() {
            // An ordinary user's is made in the boxes' user namespace, where there is one.
            let inside = crate::userns::shared().is_some();
            assert_eq!(made, [inside, inside], "user namespace: {inside}");
        }
    }

    #[test]
    fn a_change_to_the_host_mounts_is_seen_once() {
        if !root() {
            eprintln!("skipped: needs root (mounts a tmpfs on the host)");
            return;
        }
        let _alone = host_mounts();
        let watch = OwnedFd::from(std::fs::File::open("/proc/self/mountinfo").unwrap());
        assert!(!changed(&watch), "nothing changed yet");
        let Some(tmpfs) = Tmpfs::mount("corral-mounts") else {
            eprintln!("skipped: cannot mount a tmpfs here");
            return;
        };
        drop(tmpfs);
        assert!(changed(&watch), "a mount and an unmount were made");
        assert!(!changed(&watch), "a change is reported once");
    }

    #[test]
    fn the_template_has_no_host_proc() {
        if !root() || !initial_user_namespace() {
            eprintln!("skipped: needs root outside a container's user namespace (its /proc stays)");
            return;
        }
        let Ok(made) = make() else {
            eprintln!("skipped: no mount namespaces here");
            return;
        };
        let ns = Arc::clone(&made.ns);
        // A thread that joins the template starts `cat` there: it finds no /proc to read.
        let listed = std::thread::spawn(move || {
            // SAFETY: unshare(2) and setns(2) on this test thread alone, on a descriptor
            // it holds open.
            let joined = unsafe {
                libc::unshare(libc::CLONE_FS);
                libc::setns(ns.as_raw_fd(), libc::CLONE_NEWNS)
            };
            assert_eq!(joined, 0, "{}", io::Error::last_os_error());
            std::process::Command::new("/bin/cat")
                .arg("/proc/self/mountinfo")
                .output()
                .unwrap()
        })
        .join()
        .unwrap();
        assert!(
            !listed.status.success(),
            "the host's /proc was still there: {}",
            String::from_utf8_lossy(&listed.stdout)
        );
    }

    /// Held by each test that changes the host's mounts or watches them change, so that
    /// none sees another's change.
    pub(crate) fn host_mounts() -> std::sync::MutexGuard<'static, ()> {
        static HOST_MOUNTS: Mutex<()> = Mutex::new(());
        HOST_MOUNTS.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A tmpfs mounted on the host on a directory of its own, unmounted and removed when
    /// dropped (also when the test fails), for the tests that watch the host's mounts.
    pub(crate) struct Tmpfs {
        pub(crate) dir: std::path::PathBuf,
        path: std::ffi::CString,
    }

    impl Tmpfs {
        /// `None` where this process may not mount one.
        pub(crate) fn mount(name: &str) -> Option<Self> {
            let dir = std::env::temp_dir().join(format!("{name}-{}", std::process::id()));
            std::fs::create_dir_all(&dir).ok()?;
            let path = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes()).ok()?;
            // SAFETY: mount(2) of a tmpfs on a directory this test made, with
            // NUL-terminated strings that outlive the call.
            let mounted = unsafe {
                libc::mount(
                    c"corral-test".as_ptr(),
                    path.as_ptr(),
                    c"tmpfs".as_ptr(),
                    0,
                    std::ptr::null(),
                )
            };
            if mounted != 0 {
                let _ = std::fs::remove_dir(&dir);
                return None;
            }
            Some(Self { dir, path })
        }
    }

    impl Drop for Tmpfs {
        fn drop(&mut self) {
            // SAFETY: umount2(2) of the tmpfs `mount` made, on a string it owns.
            unsafe { libc::umount2(self.path.as_ptr(), libc::MNT_DETACH) };
            let _ = std::fs::remove_dir(&self.dir);
        }
    }
}
