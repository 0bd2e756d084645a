//! The host read-only in a box where the kernel has no `mount_setattr` (before Linux
//! 5.12): each mount remounted read-only by itself, after the writable roots are bound
//! over themselves as mounts of their own that the walk leaves writable.
//!
//! The mount points are read from `/proc/self/mountinfo` in the parent, as C strings;
//! the child binds and remounts with raw system calls only. A mount made on the host
//! after the list was taken is not in it: the box's copy of the mounts was made when the
//! child unshared, so it has none the list lacks that were there then.

use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// What the child does, built before the fork.
#[derive(Debug)]
pub(crate) struct Walk {
    /// The writable roots, each bound over itself first.
    binds: Vec<CString>,
    /// Every other mount point, remounted read-only.
    remount: Vec<CString>,
}

impl Walk {
    /// The walk that leaves `writable` (existing directories) writable.
    pub(crate) fn build(writable: &[PathBuf]) -> io::Result<Walk> {
        let info = std::fs::read_to_string("/proc/self/mountinfo")?;
        let cstring = |p: &Path| {
            CString::new(p.as_os_str().as_bytes()).map_err(|e| io::Error::other(e.to_string()))
        };
        let mut remount = Vec::new();
        for point in info.lines().filter_map(mount_point) {
            let inside = |root: &PathBuf| point.starts_with(root);
            if writable.iter().any(inside) || point.starts_with("/proc") {
                continue;
            }
            remount.push(cstring(&point)?);
        }
        remount.dedup();
        let binds = writable
            .iter()
            .map(|p| cstring(p))
            .collect::<io::Result<_>>()?;
        Ok(Walk { binds, remount })
    }

    /// The writable roots it binds, for a mount key.
    pub(crate) fn paths(&self) -> impl Iterator<Item = &std::ffi::CStr> {
        self.binds.iter().map(CString::as_c_str)
    }

    /// In the child's own private mount namespace: bind each writable root over itself,
    /// then remount every listed mount read-only (keeping the flags a user namespace
    /// locks). A mount gone since the list was taken is passed over.
    pub(crate) fn apply(&self) -> io::Result<()> {
        for root in &self.binds {
            // SAFETY: mount(2) binding a NUL-terminated path built before the fork onto
            // itself.
            let r = unsafe {
                libc::mount(
                    root.as_ptr(),
                    root.as_ptr(),
                    std::ptr::null(),
                    libc::MS_BIND | libc::MS_REC,
                    std::ptr::null(),
                )
            };
            if r != 0 {
                return Err(io::Error::last_os_error());
            }
        }
        for point in &self.remount {
            match crate::sandbox_reach::remount(point, libc::MS_RDONLY) {
                Ok(()) => {}
                Err(e) if e.raw_os_error() == Some(libc::ENOENT) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}

/// The mount point of a `/proc/self/mountinfo` line (its fifth field), unescaped.
fn mount_point(line: &str) -> Option<PathBuf> {
    let field = line.split(' ').nth(4)?;
    let mut bytes = Vec::with_capacity(field.len());
    let raw = field.as_bytes();
    let mut i = 0;
    while i < raw.len() {
        // Space, tab, newline and backslash are written as `\040`, `\011`, `\012`, `\134`.
        let escaped = (raw[i] == b'\\' && i + 3 < raw.len())
            .then(|| std::str::from_utf8(&raw[i + 1..i + 4]).ok())
            .flatten()
            .and_then(|digits| u8::from_str_radix(digits, 8).ok());
        if let Some(code) = escaped {
            bytes.push(code);
            i += 4;
        } else {
            bytes.push(raw[i]);
            i += 1;
        }
    }
    let os: std::ffi::OsString = std::os::unix::ffi::OsStringExt::from_vec(bytes);
    Some(PathBuf::from(os))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A box built as on a kernel without `mount_setattr`: a host file's mode cannot
    /// change (Landlock does not cover `chmod`), and the writable root stays writable.
    #[test]
    fn without_mount_setattr_the_host_is_read_only_mount_by_mount() {
        use std::os::unix::fs::PermissionsExt;
        let host = crate::sandbox::host_support();
        if !host.namespaces {
            eprintln!("skipped: no mount namespace here");
            return;
        }
        let stamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos();
        let dir = PathBuf::from(format!(
            "/var/tmp/corral-walk-{}-{stamp}",
            std::process::id()
        ));
        let ws = dir.join("ws");
        std::fs::create_dir_all(&ws).unwrap();
        let victim = dir.join("victim");
        std::fs::write(&victim, "v").unwrap();
        std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o644)).unwrap();
        let spec = crate::sandbox::Spec {
            writable: vec![ws.clone()],
            writable_mounts: vec![ws.clone()],
            ..crate::sandbox::Spec::default()
        };
        let old_kernel = crate::sandbox::HostSupport {
            mount_setattr: false,
            ..host
        };
        let (confinement, enforced) = crate::sandbox::build(&spec, &old_kernel).unwrap();
        assert!(enforced.read_only_walk && enforced.read_only_host);
        let script = format!(
            "chmod 600 '{}' 2>/dev/null && echo changed; echo x > '{}/made' && echo wrote",
            victim.display(),
            ws.display()
        );
        let mut cmd = std::process::Command::new("/bin/sh");
        cmd.args(["-c", &script]).current_dir(&ws);
        crate::sandbox::confine_before_exec(&mut cmd, &confinement, None);
        let out = cmd.output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            stdout,
            "wrote\n",
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let mode = std::fs::metadata(&victim).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o644);
        assert!(ws.join("made").exists());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_mount_point_is_read_unescaped() {
        let line = "36 35 98:0 /mnt1 /mnt/my\\040disk rw,noatime master:1 - ext3 /dev/root rw";
        assert_eq!(mount_point(line), Some(PathBuf::from("/mnt/my disk")));
        let plain = "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw";
        assert_eq!(mount_point(plain), Some(PathBuf::from("/")));
    }
}
