//! A box's view of the host's mounts: everything read-only but its writable roots, and
//! its own `/tmp` and runtime directory over the host's.
//!
//! Landlock does not cover `chmod`, `chown`, `utimensat` or `setxattr`, and read-only
//! mounts do not stop `connect(2)` to a socket file. So a box's mount namespace is made
//! read-only as a whole, with its writable roots cloned beforehand and put back over
//! themselves; and the two places where a host's programs keep their sockets for anyone
//! of the same user to reach (`/tmp`: X11, tmux, `ssh-agent`; the runtime directory:
//! D-Bus, a rootless Docker, a key agent) are covered by directories of the run's own.
//! What the box had to see of the host below the new `/tmp` (a workspace, a writable
//! root, the workspace in `read-only` mode) is put back at its own path, the directories
//! on the way made in the run's `/tmp`.
//!
//! The home can be one of the run's own too: then the box sees of the person's home only
//! what is put back (the toolchains, read-only; a workspace there, writable), files and
//! symbolic links as well as directories. So can another home the host has outside
//! `/home` (root's, when it is not the person's), on the same terms.
//!
//! Built in the parent ([`Plan::build`]), applied in the child ([`Plan::apply`]) with raw
//! system calls only: every path and every directory to make is a C string made before
//! the fork, and the clones are held on the child's stack.

use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// The most paths a box keeps from the host (its writable roots and what it must see
/// below its own `/tmp`); a box with more leaves the host's mounts as they are, and its
/// report says so.
pub(crate) const MAX_KEPT: usize = 128;

/// The path the box's own temporary directory covers.
pub const BOX_TMP: &str = "/tmp";

/// One path kept from the host.
#[derive(Debug)]
struct Kept {
    path: CString,
    /// Writable (a writable root) or read-only (seen, as the rest of the host).
    writable: bool,
    /// The directories to make in the box's own directory before it is put back,
    /// outermost first (empty where it does not lie below one); for a file, the last is
    /// the file itself, made empty as the mount's target.
    make: Vec<CString>,
    file: bool,
}

/// A symbolic link kept from the host below one of the box's own directories (a
/// toolchain linked from elsewhere): made again there, as it reads.
#[derive(Debug)]
struct Link {
    path: CString,
    target: CString,
    /// The directories on the way, as for [`Kept::make`].
    make: Vec<CString>,
}

/// What a box's mount namespace is made into, built before the fork.
#[derive(Debug, Default)]
pub(crate) struct Plan {
    kept: Vec<Kept>,
    links: Vec<Link>,
    /// The box's own `/tmp`, runtime directory and home.
    own: Vec<Own>,
}

/// A directory of the run's that goes over one of the host's.
#[derive(Debug)]
struct Own {
    from: CString,
    to: CString,
    /// The device and inode of `from`: a namespace copied from one where it went over
    /// `to` already (a run's sandbox mounts, see `crate::sandbox_mounts`) shows it there,
    /// and no longer shows `from` to clone.
    id: (u64, u64),
}

impl Own {
    fn new(from: &Path, to: &Path) -> io::Result<Own> {
        use std::os::unix::fs::MetadataExt;
        let meta = std::fs::metadata(from)?;
        Ok(Own {
            from: cstring(from)?,
            to: cstring(to)?,
            id: (meta.dev(), meta.ino()),
        })
    }

    fn to_path(&self) -> &Path {
        Path::new(std::ffi::OsStr::from_bytes(self.to.as_bytes()))
    }

    /// Whether `to` shows `from` already (raw system calls only).
    fn in_place(&self) -> bool {
        // SAFETY: stat(2) into a zeroed structure on this frame, of a NUL-terminated
        // path built before the fork.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: as above.
        let r = unsafe { libc::stat(self.to.as_ptr(), &raw mut st) };
        r == 0 && (st.st_dev, st.st_ino) == self.id
    }
}

/// Where the host's mounts go read-only but for what a box keeps: see [`Plan::build`].
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Request {
    /// The writable roots: they keep their own mounts.
    pub writable: Vec<PathBuf>,
    /// Paths the box must see, read-only, where a directory of its own would hide them
    /// (directories, files or symbolic links).
    pub visible: Vec<PathBuf>,
    /// A host directory mounted over `/tmp` in the box ([`BOX_TMP`]).
    pub own_tmp: Option<PathBuf>,
    /// (host directory, the runtime directory it goes over).
    pub own_runtime: Option<(PathBuf, PathBuf)>,
    /// (host directory, the home it goes over).
    pub own_home: Option<(PathBuf, PathBuf)>,
    /// (host directory, another home it goes over): root's, when it is not the person's.
    pub other_homes: Vec<(PathBuf, PathBuf)>,
}

fn cstring(p: &Path) -> io::Result<CString> {
    CString::new(p.as_os_str().as_bytes()).map_err(|e| io::Error::other(e.to_string()))
}

/// The existing directories among `paths`, canonical, without those inside another.
fn outermost_dirs(paths: &[PathBuf]) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = paths
        .iter()
        .filter_map(|p| p.canonicalize().ok())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs.dedup();
    let all = dirs.clone();
    dirs.retain(|d| !all.iter().any(|o| o != d && d.starts_with(o)));
    dirs
}

/// The directories from just below `top` down to `path`, outermost first.
fn on_the_way(top: &Path, path: &Path) -> io::Result<Vec<CString>> {
    let Ok(rest) = path.strip_prefix(top) else {
        return Ok(Vec::new());
    };
    let mut at = top.to_path_buf();
    let mut out = Vec::new();
    for part in rest.components() {
        at.push(part);
        out.push(cstring(&at)?);
    }
    Ok(out)
}

impl Plan {
    /// The plan for `request`; `None` when it keeps more than [`MAX_KEPT`] paths, or
    /// keeps one that holds a directory of its own (a workspace of `/tmp` itself): the
    /// host's mounts are then left as they are, and the box has no directories of its own.
    pub(crate) fn build(request: &Request) -> io::Result<Option<Plan>> {
        let writable = outermost_dirs(&request.writable);
        let mut visible: Vec<PathBuf> = outermost_dirs(&request.visible)
            .into_iter()
            .filter(|v| !writable.iter().any(|w| v.starts_with(w)))
            .collect();
        let tmp = Path::new(BOX_TMP);
        let mut own = Vec::new();
        if let Some(source) = &request.own_tmp {
            if writable.iter().chain(&visible).any(|k| tmp.starts_with(k)) {
                return Ok(None);
            }
            own.push(Own::new(source, tmp)?);
        }
        let homes: Vec<&(PathBuf, PathBuf)> = request
            .own_home
            .iter()
            .chain(&request.other_homes)
            .collect();
        for (source, target) in request.own_runtime.iter().chain(homes.iter().copied()) {
            // Not one a writable root holds (a workspace of the whole home; one in it is
            // put back at its path), nor one below `/tmp`, the box's own already.
            let below_own = own.iter().any(|o: &Own| target.starts_with(o.to_path()));
            let held = writable.iter().any(|w| target.starts_with(w));
            if !held && !below_own && !target.starts_with(tmp) {
                own.push(Own::new(source, target)?);
            }
        }
        if own.len() > MAX_OWN {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("a box has at most {MAX_OWN} directories of its own"),
            ));
        }
        // What lies in a home and is seen only there: files, links and directories.
        for (_, home) in homes {
            visible.extend(
                request
                    .visible
                    .iter()
                    .filter(|v| v.starts_with(home))
                    .filter(|v| !writable.iter().any(|w| v.starts_with(w)))
                    .filter(|v| std::fs::symlink_metadata(v).is_ok_and(|m| !m.is_dir()))
                    .cloned(),
            );
        }
        let covering = |path: &Path| -> Option<PathBuf> {
            own.iter()
                .map(Own::to_path)
                .filter(|to| path.starts_with(to) && path != *to)
                .max_by_key(|to| to.as_os_str().len())
                .map(Path::to_path_buf)
        };
        let mut kept = Vec::new();
        let mut links = Vec::new();
        for (path, writable) in writable
            .iter()
            .map(|p| (p, true))
            .chain(visible.iter().map(|p| (p, false)))
        {
            let under = covering(path);
            // A read-only path no directory of the box's own hides is seen as it is.
            if !writable && under.is_none() {
                continue;
            }
            let meta = std::fs::symlink_metadata(path)?;
            let mut make = match &under {
                Some(top) => on_the_way(top, path)?,
                None => Vec::new(),
            };
            if meta.file_type().is_symlink() {
                make.pop();
                links.push(Link {
                    path: cstring(path)?,
                    target: cstring(&std::fs::read_link(path)?)?,
                    make,
                });
                continue;
            }
            kept.push(Kept {
                path: cstring(path)?,
                writable,
                make,
                file: !meta.is_dir(),
            });
        }
        if kept.len() > MAX_KEPT {
            return Ok(None);
        }
        // Outer paths first: a writable root below a read-only one put back (a build
        // cache in `~/.cache`) goes over it, not under it.
        kept.sort_by_key(|k| k.path.as_bytes().iter().filter(|b| **b == b'/').count());
        Ok(Some(Plan { kept, links, own }))
    }

    /// Whether it has the box's own `/tmp`.
    pub(crate) fn own_tmp(&self) -> bool {
        self.own
            .iter()
            .any(|o| o.to.as_bytes() == BOX_TMP.as_bytes())
    }

    /// Whether it has a directory of the box's own over `target`.
    pub(crate) fn owns(&self, target: &Path) -> bool {
        self.own.iter().any(|o| o.to_path() == target)
    }

    /// The paths its mounts come from, for a mount key: the kept paths and the sources of
    /// the box's own directories. Not the host directories those go over (`/tmp`, the
    /// home): on a filesystem that keeps no birth time a key follows their status-change
    /// time, which every file made in `/tmp` moves, and the run's mounts would be made
    /// again at every call.
    pub(crate) fn paths(&self) -> impl Iterator<Item = &std::ffi::CStr> {
        self.kept
            .iter()
            .map(|k| k.path.as_c_str())
            .chain(self.own.iter().map(|o| o.from.as_c_str()))
    }

    /// In the child's own private mount namespace: clone what is kept and the box's own
    /// directories, make the whole tree read-only at once (`mount_setattr`, recursive),
    /// put the box's own directories over the host's, and the kept clones back at their
    /// paths (the read-only ones made read-only first). A user namespace's locked mounts
    /// go only together, hence the recursive clones.
    pub(crate) fn apply(&self) -> io::Result<()> {
        const OPEN_TREE_CLONE: libc::c_uint = 1;
        let mut clones = Clones {
            kept: [-1; MAX_KEPT],
            own: [-1; MAX_OWN],
        };
        let clone_of = |path: &CString| -> io::Result<libc::c_int> {
            // SAFETY: open_tree(2) of a NUL-terminated path built before the fork.
            let fd = unsafe {
                libc::syscall(
                    libc::SYS_open_tree,
                    libc::AT_FDCWD,
                    path.as_ptr(),
                    OPEN_TREE_CLONE
                        | libc::O_CLOEXEC as libc::c_uint
                        | libc::AT_RECURSIVE as libc::c_uint,
                )
            };
            if fd < 0 {
                fail()
            } else {
                Ok(fd as libc::c_int)
            }
        };
        for (slot, k) in clones.kept.iter_mut().zip(&self.kept) {
            *slot = clone_of(&k.path)?;
        }
        for (slot, own) in clones.own.iter_mut().zip(&self.own) {
            // In a namespace copied from a run's sandbox mounts the directory is in
            // place already (and its source out of sight below it): kept as it is.
            if !own.in_place() {
                *slot = clone_of(&own.from)?;
            }
        }
        set_read_only(libc::AT_FDCWD, c"/", libc::AT_RECURSIVE as libc::c_uint)?;
        for (fd, own) in clones.own.iter().zip(&self.own) {
            if *fd >= 0 {
                move_onto(*fd, &own.to)?;
            } else {
                // In place, and made read-only with the rest just now: writable again.
                set_writable(libc::AT_FDCWD, &own.to, 0)?;
            }
        }
        for link in &self.links {
            make_dirs(&link.make)?;
            // SAFETY: symlink(2) of two NUL-terminated strings built before the fork.
            if unsafe { libc::symlink(link.target.as_ptr(), link.path.as_ptr()) } != 0
                && errno() != libc::EEXIST
            {
                return fail();
            }
        }
        for (fd, k) in clones.kept.iter().zip(&self.kept) {
            let (dirs, file) = match (k.file, k.make.split_last()) {
                (true, Some((file, dirs))) => (dirs, Some(file)),
                _ => (k.make.as_slice(), None),
            };
            make_dirs(dirs)?;
            if let Some(file) = file {
                // SAFETY: open(2) making an empty file (the mount's target) of a
                // NUL-terminated path built before the fork, and close(2) of it.
                unsafe {
                    // Read-only: in a namespace copied from one that has these mounts
                    // already, the file is there, on a read-only mount.
                    let fd = libc::open(
                        file.as_ptr(),
                        libc::O_CREAT | libc::O_RDONLY | libc::O_CLOEXEC | libc::O_NOFOLLOW,
                        0o600,
                    );
                    if fd < 0 {
                        return fail();
                    }
                    libc::close(fd);
                }
            }
            if !k.writable {
                let flags =
                    libc::AT_EMPTY_PATH as libc::c_uint | libc::AT_RECURSIVE as libc::c_uint;
                set_read_only(*fd, c"", flags)?;
            }
            move_onto(*fd, &k.path)?;
        }
        drop(clones);
        // The working directory, entered before, is still the read-only mount's (or the
        // host's `/tmp`): enter it again by its path, through the mount now over it.
        let mut cwd = [0 as libc::c_char; libc::PATH_MAX as usize];
        // SAFETY: getcwd(2) into a buffer on this frame, chdir(2) of the NUL-terminated
        // path it wrote there.
        unsafe {
            if libc::syscall(libc::SYS_getcwd, cwd.as_mut_ptr(), cwd.len()) > 0
                && cwd[0] == b'/' as libc::c_char
            {
                libc::chdir(cwd.as_ptr());
            }
        }
        Ok(())
    }
}

/// How many directories of its own a box has at most: `/tmp`, the runtime directory,
/// the home and another (see [`Request::other_homes`]).
const MAX_OWN: usize = 4;

/// Make `dirs` (outermost first), those there already left as they are.
fn make_dirs(dirs: &[CString]) -> io::Result<()> {
    for dir in dirs {
        // SAFETY: mkdir(2) of a NUL-terminated path built before the fork.
        if unsafe { libc::mkdir(dir.as_ptr(), 0o755) } != 0 && errno() != libc::EEXIST {
            return fail();
        }
    }
    Ok(())
}

/// The clones [`Plan::apply`] holds, closed when it returns, whichever way.
struct Clones {
    kept: [libc::c_int; MAX_KEPT],
    own: [libc::c_int; MAX_OWN],
}

impl Drop for Clones {
    fn drop(&mut self) {
        for fd in self
            .kept
            .iter()
            .chain(self.own.iter())
            .filter(|fd| **fd >= 0)
        {
            // SAFETY: close(2) of a descriptor open_tree made in this child.
            unsafe { libc::close(*fd) };
        }
    }
}

/// `struct mount_attr` (`MOUNT_ATTR_SIZE_VER0`).
#[repr(C)]
pub(crate) struct MountAttr {
    pub attr_set: u64,
    pub attr_clr: u64,
    pub propagation: u64,
    pub userns_fd: u64,
}

const MOUNT_ATTR_RDONLY: u64 = 1;

/// `mount_setattr(dirfd, path, flags)` making the mounts there read-only.
fn set_read_only(dirfd: libc::c_int, path: &std::ffi::CStr, flags: libc::c_uint) -> io::Result<()> {
    set_attr(dirfd, path, flags, MOUNT_ATTR_RDONLY, 0)
}

/// `mount_setattr(dirfd, path, flags)` making the mounts there writable again.
fn set_writable(dirfd: libc::c_int, path: &std::ffi::CStr, flags: libc::c_uint) -> io::Result<()> {
    set_attr(dirfd, path, flags, 0, MOUNT_ATTR_RDONLY)
}

fn set_attr(
    dirfd: libc::c_int,
    path: &std::ffi::CStr,
    flags: libc::c_uint,
    attr_set: u64,
    attr_clr: u64,
) -> io::Result<()> {
    let attr = MountAttr {
        attr_set,
        attr_clr,
        propagation: 0,
        userns_fd: 0,
    };
    // SAFETY: mount_setattr(2) on a path or descriptor of this child's, reading `attr`
    // on this frame.
    let r = unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            dirfd,
            path.as_ptr(),
            flags,
            &raw const attr,
            std::mem::size_of::<MountAttr>(),
        )
    };
    if r != 0 { fail() } else { Ok(()) }
}

/// `move_mount(2)` of the detached tree `fd` onto `path`.
fn move_onto(fd: libc::c_int, path: &CString) -> io::Result<()> {
    const MOVE_MOUNT_F_EMPTY_PATH: libc::c_uint = 4;
    // SAFETY: move_mount(2) of a detached tree this child cloned onto a NUL-terminated
    // path built before the fork.
    let r = unsafe {
        libc::syscall(
            libc::SYS_move_mount,
            fd,
            c"".as_ptr(),
            libc::AT_FDCWD,
            path.as_ptr(),
            MOVE_MOUNT_F_EMPTY_PATH,
        )
    };
    if r != 0 { fail() } else { Ok(()) }
}

fn errno() -> i32 {
    io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EPERM)
}

fn fail<T>() -> io::Result<T> {
    Err(io::Error::from_raw_os_error(errno()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_directories_on_the_way_are_made_outermost_first() {
        let made = on_the_way(Path::new("/tmp"), Path::new("/tmp/a/b/ws")).unwrap();
        let made: Vec<&[u8]> = made.iter().map(|c| c.as_bytes()).collect();
        assert_eq!(made, [&b"/tmp/a"[..], b"/tmp/a/b", b"/tmp/a/b/ws"]);
        assert!(
            on_the_way(Path::new("/tmp"), Path::new("/srv/ws"))
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn a_writable_root_below_a_read_only_one_goes_over_it() {
        let home = PathBuf::from(format!("/var/tmp/box-dirs-order-{}", std::process::id()));
        let cache = home.join(".cache/corral/ws-1");
        std::fs::create_dir_all(&cache).unwrap();
        let source = home.join("run-home");
        std::fs::create_dir_all(&source).unwrap();
        let plan = Plan::build(&Request {
            writable: vec![cache.clone()],
            visible: vec![home.join(".cache")],
            own_home: Some((source, home.clone())),
            ..Request::default()
        })
        .unwrap()
        .unwrap();
        let order: Vec<&[u8]> = plan.kept.iter().map(|k| k.path.as_bytes()).collect();
        let cache_dir = home.join(".cache");
        assert_eq!(
            order,
            [
                cache_dir.as_os_str().as_bytes(),
                cache.as_os_str().as_bytes()
            ]
        );
        let _ = std::fs::remove_dir_all(&home);
    }

    #[test]
    fn a_workspace_that_holds_tmp_leaves_the_hosts() {
        let request = Request {
            writable: vec![PathBuf::from("/")],
            own_tmp: Some(std::env::temp_dir()),
            ..Request::default()
        };
        assert!(Plan::build(&request).unwrap().is_none());
    }
}
