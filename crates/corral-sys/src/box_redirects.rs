//! A sandboxed stage's redirects, opened by the stage itself inside its box.
//!
//! A redirect corral opened in its own process would be opened with corral's view of the
//! file system and none of the box's rules: `cat < ~/.ssh/id_ed25519` would read a key the
//! box hides from `cat ~/.ssh/id_ed25519`. So a boxed stage's redirects travel with its
//! launch and the child applies them, in the order they were written, after Landlock is
//! in force and before the seccomp filter and the exec (see
//! [`crate::sandbox::confine_before_exec`]): what a redirect may reach is exactly what the
//! command may.
//!
//! Each step is a raw system call on what [`Redirects`] holds, prepared before the clone:
//! an `openat2` (without following symlinks: the path is the one the policy checked, fully
//! resolved) then `dup2` onto the target, a `dup2` of one standard descriptor onto another,
//! or a `dup2` of a descriptor the parent made (a here-document's text). A file is opened
//! non-blocking, so that a named pipe never holds the child (and, with `CLONE_VFORK`, the
//! thread that spawns it); a pipe is refused, anything else is made blocking again.
//!
//! A step that fails ends the child before its exec with an error [`failure`] reads back:
//! which redirect, and the errno (`ENXIO` standing for "a named pipe").

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::Path;

/// How a redirect opens its file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpenFor {
    /// `<`
    Read,
    /// `>`: created (mode 0666 less the umask) or truncated.
    Write,
    /// `>>`: created or appended to.
    Append,
}

#[derive(Debug)]
enum Step {
    Open {
        target: libc::c_int,
        path: CString,
        flags: libc::c_int,
    },
    Dup {
        target: libc::c_int,
        source: libc::c_int,
    },
    Fd {
        target: libc::c_int,
        fd: OwnedFd,
    },
}

/// A stage's redirects in order, for the child to apply (see the module docs).
#[derive(Debug, Default)]
pub struct Redirects {
    steps: Vec<Step>,
}

/// `open_how` of openat2(2).
#[repr(C)]
struct OpenHow {
    flags: u64,
    mode: u64,
    resolve: u64,
}

const RESOLVE_NO_SYMLINKS: u64 = 0x04;
const RESOLVE_NO_MAGICLINKS: u64 = 0x02;

/// Errors [`failure`] decodes: this bit, the redirect's index above bit 12, the errno
/// below (errnos are under 4096).
const FAILED_REDIRECT: i32 = 0x4000_0000;
const MAX_STEPS: usize = 1 << 17;

impl Redirects {
    /// No redirects yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }

    fn push(&mut self, step: Step) -> io::Result<()> {
        if self.steps.len() >= MAX_STEPS {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "too many redirects on one stage",
            ));
        }
        self.steps.push(step);
        Ok(())
    }

    /// Descriptor `target` (0, 1 or 2) becomes `path`, opened `how`.
    pub fn open(&mut self, target: u8, path: &Path, how: OpenFor) -> io::Result<()> {
        let path = CString::new(path.as_os_str().as_encoded_bytes()).map_err(|_| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                "a NUL byte in a redirect target",
            )
        })?;
        let flags = libc::O_NOCTTY
            | libc::O_NONBLOCK
            | match how {
                OpenFor::Read => libc::O_RDONLY,
                OpenFor::Write => libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC,
                OpenFor::Append => libc::O_WRONLY | libc::O_CREAT | libc::O_APPEND,
            };
        self.push(Step::Open {
            target: target.into(),
            path,
            flags,
        })
    }

    /// Descriptor `target` becomes a copy of what `source` is at that point (`2>&1`).
    pub fn dup(&mut self, target: u8, source: u8) -> io::Result<()> {
        self.push(Step::Dup {
            target: target.into(),
            source: source.into(),
        })
    }

    /// Descriptor `target` becomes `fd` (a here-document's text, made by the caller).
    pub fn descriptor(&mut self, target: u8, fd: OwnedFd) -> io::Result<()> {
        self.push(Step::Fd {
            target: target.into(),
            fd,
        })
    }

    /// Apply every step in order, in a child before its exec.
    ///
    /// Raw system calls on what `self` holds; nothing is allocated, locked or logged.
    pub(crate) fn apply(&self) -> io::Result<()> {
        for (index, step) in self.steps.iter().enumerate() {
            let failed = |errno: i32| {
                Err(io::Error::from_raw_os_error(
                    FAILED_REDIRECT | ((index as i32) << 12) | (errno & 0xfff),
                ))
            };
            match step {
                Step::Open {
                    target,
                    path,
                    flags,
                } => {
                    // SAFETY: raw system calls on a NUL-terminated path and a structure on
                    // this frame, and on the descriptor the open returned.
                    let errno = unsafe { open_onto(*target, path, *flags) };
                    if errno != 0 {
                        return failed(errno);
                    }
                }
                Step::Dup { target, source } => {
                    // SAFETY: dup2(2) on two descriptor numbers.
                    if unsafe { libc::dup2(*source, *target) } < 0 {
                        return failed(errno());
                    }
                }
                Step::Fd { target, fd } => {
                    // SAFETY: dup2(2) of a descriptor `self` owns onto a number.
                    if unsafe { libc::dup2(fd.as_raw_fd(), *target) } < 0 {
                        return failed(errno());
                    }
                }
            }
        }
        Ok(())
    }
}

fn errno() -> i32 {
    io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO)
}

/// Open `path` with `flags` and make it descriptor `target`; 0, or the errno.
///
/// # Safety
///
/// Raw system calls only; `path` must be NUL-terminated (a `CStr`'s pointer).
unsafe fn open_onto(target: libc::c_int, path: &std::ffi::CStr, flags: libc::c_int) -> i32 {
    let how = OpenHow {
        flags: (flags | libc::O_CLOEXEC) as u64,
        mode: if flags & libc::O_CREAT != 0 { 0o666 } else { 0 },
        resolve: RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
    };
    // SAFETY: openat2(2) reads the path and `how`, both alive for the call.
    let mut fd = unsafe {
        libc::syscall(
            libc::SYS_openat2,
            libc::AT_FDCWD,
            path.as_ptr(),
            &raw const how,
            std::mem::size_of::<OpenHow>(),
        )
    } as libc::c_int;
    if fd < 0 && errno() == libc::ENOSYS {
        // Before Linux 5.6: the last component at least is not followed.
        // SAFETY: open(2) on the same path.
        fd = unsafe {
            libc::open(
                path.as_ptr(),
                flags | libc::O_CLOEXEC | libc::O_NOFOLLOW,
                0o666 as libc::c_uint,
            )
        };
    }
    if fd < 0 {
        return errno();
    }
    // SAFETY: fstat(2) into a zeroed structure on this frame, fcntl(2) and dup2(2) on the
    // descriptor just opened, then its close(2) unless it is the target itself.
    unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        let placed = if fd == target {
            // Opened on the target's number (it was closed): it only has to survive exec.
            libc::fcntl(fd, libc::F_SETFD, 0) == 0
        } else {
            libc::dup2(fd, target) >= 0
        };
        let result = if libc::fstat(fd, &raw mut st) != 0 {
            errno()
        } else if st.st_mode & libc::S_IFMT == libc::S_IFIFO {
            libc::ENXIO
        } else if libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK) != 0 || !placed {
            errno()
        } else {
            0
        };
        if fd != target {
            libc::close(fd);
        }
        result
    }
}

/// Open `redirects` in the child `cmd` spawns, after the hooks registered before it: for
/// a stage with no confinement to open them in.
pub fn redirect_before_exec(cmd: &mut std::process::Command, redirects: std::sync::Arc<Redirects>) {
    use std::os::unix::process::CommandExt;
    let hook = move || redirects.apply();
    // SAFETY: the hook makes only the raw system calls of `Redirects::apply` on what was
    // built before the fork; it allocates nothing, takes no lock and does not log.
    unsafe {
        cmd.pre_exec(hook);
    }
}

/// Which redirect a spawn failed on, and why: `Some((index, error))` for an error a
/// child's [`Redirects`] ended it with; `ENXIO` means the target is a named pipe.
pub fn failure(e: &io::Error) -> Option<(usize, io::Error)> {
    let code = e.raw_os_error()?;
    (code & FAILED_REDIRECT != 0).then(|| {
        let index = ((code & !FAILED_REDIRECT) >> 12) as usize;
        (index, io::Error::from_raw_os_error(code & 0xfff))
    })
}
