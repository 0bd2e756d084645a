//! Denied programs that cannot start in the box, however they are reached.
//!
//! A policy's `deny` rule naming a program (`rm`, `/usr/bin/curl`) is held in a box's
//! mount namespace by the kernel, not by reading the command line: every file that is
//! that program (found by the library, see `corral::sandbox::programs`) has a stub
//! bind-mounted over it, read-only. An `exec` of the path, of a symlink to it, of a copy
//! made in the box (the copy is of the stub) starts the stub, which writes one line
//! naming the rule to stderr and exits [`STUB_STATUS`]; nothing of the real program can be
//! read. A stub is made per rule ([`stub_image`]): it knows its line from its own bytes,
//! never from `argv[0]`, which a symlink can make anything.
//!
//! The stubs lie in one directory of corral's ([`StubSet::dir`]). The child opens it first
//! in its mount namespace (before the box's own directories may cover where it lies),
//! then, after every other mount, binds each stub over its targets through
//! `/proc/self/fd`, with raw system calls on what was built before the fork. A target
//! the box does not show (a home it covers) is skipped: nothing there to start.

use std::ffi::{CStr, CString, OsString};
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

/// How a stub exits, as a shell's "found but cannot execute" does.
pub const STUB_STATUS: i32 = 126;

/// Where a stub is loaded: below 4 GiB, so a 32-bit immediate holds its addresses.
const BASE: u64 = 0x40_0000;
/// An ELF64 header and one program header.
const HEADERS: usize = 64 + 56;

/// A static executable for this host's architecture that writes `line` (a newline added)
/// to stderr and exits [`STUB_STATUS`]; `None` on an architecture corral has no stub for,
/// or for a line too long for one.
pub fn stub_image(line: &str) -> Option<Vec<u8>> {
    let mut text = line.as_bytes().to_vec();
    text.push(b'\n');
    let len = u32::try_from(text.len()).ok().filter(|&n| n < 0x1_0000)?;
    let (machine, code) = code(len)?;
    let mut image = elf_headers(machine, (HEADERS + code.len() + text.len()) as u64);
    image.extend_from_slice(&code);
    image.extend_from_slice(&text);
    Some(image)
}

/// `write(2, text, len); exit(126)`, with `text` right after the code: the ELF machine
/// number and the code.
#[cfg(target_arch = "x86_64")]
fn code(len: u32) -> Option<(u16, Vec<u8>)> {
    const CODE_LEN: u32 = 34;
    let text_at = u32::try_from(BASE).ok()? + HEADERS as u32 + CODE_LEN;
    let mut c = Vec::with_capacity(CODE_LEN as usize);
    c.extend_from_slice(&[0xB8, 1, 0, 0, 0]); // mov eax, 1 (write)
    c.extend_from_slice(&[0xBF, 2, 0, 0, 0]); // mov edi, 2
    c.push(0xBE); // mov esi, text
    c.extend_from_slice(&text_at.to_le_bytes());
    c.push(0xBA); // mov edx, len
    c.extend_from_slice(&len.to_le_bytes());
    c.extend_from_slice(&[0x0F, 0x05]); // syscall
    c.extend_from_slice(&[0xB8, 60, 0, 0, 0]); // mov eax, 60 (exit)
    c.extend_from_slice(&[0xBF, STUB_STATUS as u8, 0, 0, 0]); // mov edi, 126
    c.extend_from_slice(&[0x0F, 0x05]); // syscall
    debug_assert_eq!(c.len(), CODE_LEN as usize);
    Some((62, c))
}

#[cfg(target_arch = "aarch64")]
fn code(len: u32) -> Option<(u16, Vec<u8>)> {
    let movz = |reg: u32, imm: u32| 0xD280_0000 | (imm << 5) | reg;
    // adr x1, text: text lies 24 bytes after this instruction (the third of eight).
    let adr_x1 = 0x1000_0000 | ((24 >> 2) << 5) | 1;
    let svc = 0xD400_0001;
    let words = [
        movz(8, 64), // write
        movz(0, 2),
        adr_x1,
        movz(2, len),
        svc,
        movz(8, 93), // exit
        movz(0, STUB_STATUS as u32),
        svc,
    ];
    Some((183, words.iter().flat_map(|w| w.to_le_bytes()).collect()))
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
fn code(_len: u32) -> Option<(u16, Vec<u8>)> {
    None
}

/// An executable's ELF header and its one loadable segment: the whole file, read and
/// execute, at [`BASE`].
fn elf_headers(machine: u16, size: u64) -> Vec<u8> {
    let mut h = Vec::with_capacity(HEADERS);
    h.extend_from_slice(&[0x7F, b'E', b'L', b'F', 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    h.extend_from_slice(&2u16.to_le_bytes()); // ET_EXEC
    h.extend_from_slice(&machine.to_le_bytes());
    h.extend_from_slice(&1u32.to_le_bytes()); // version
    h.extend_from_slice(&(BASE + HEADERS as u64).to_le_bytes()); // entry
    h.extend_from_slice(&64u64.to_le_bytes()); // program headers
    h.extend_from_slice(&0u64.to_le_bytes()); // no section headers
    h.extend_from_slice(&0u32.to_le_bytes()); // flags
    h.extend_from_slice(&64u16.to_le_bytes()); // header size
    h.extend_from_slice(&56u16.to_le_bytes()); // program header size
    h.extend_from_slice(&1u16.to_le_bytes()); // one of them
    h.extend_from_slice(&[0; 6]); // no sections
    h.extend_from_slice(&1u32.to_le_bytes()); // PT_LOAD
    h.extend_from_slice(&5u32.to_le_bytes()); // read, execute
    h.extend_from_slice(&0u64.to_le_bytes()); // from the file's start
    h.extend_from_slice(&BASE.to_le_bytes());
    h.extend_from_slice(&BASE.to_le_bytes());
    h.extend_from_slice(&size.to_le_bytes());
    h.extend_from_slice(&size.to_le_bytes());
    h.extend_from_slice(&0x1000u64.to_le_bytes());
    h
}

/// The stubs a box binds: a directory of corral's holding them, and for each (by its
/// file name there) the files it goes over.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StubSet {
    /// Where the stubs are.
    pub dir: PathBuf,
    /// (a stub's file name in [`Self::dir`], the files it goes over).
    pub stubs: Vec<(OsString, Vec<PathBuf>)>,
}

/// The longest stub file name: the child builds `/proc/self/fd/N/NAME` on its stack.
const MAX_NAME: usize = 64;

/// A [`StubSet`] as the child applies it.
#[derive(Debug)]
pub(crate) struct Stubs {
    dir: CString,
    /// (a stub's file name, a target).
    binds: Vec<(CString, CString)>,
}

fn cstring(bytes: &[u8]) -> io::Result<CString> {
    CString::new(bytes).map_err(|e| io::Error::other(e.to_string()))
}

impl Stubs {
    /// Prepare `set` for the child; `None` when it binds nothing.
    pub(crate) fn build(set: &StubSet) -> io::Result<Option<Stubs>> {
        let mut binds = Vec::new();
        for (name, targets) in &set.stubs {
            if name.len() > MAX_NAME || name.as_bytes().contains(&b'/') {
                return Err(io::Error::other("a stub's file name is too long"));
            }
            for target in targets {
                binds.push((
                    cstring(name.as_bytes())?,
                    cstring(target.as_os_str().as_bytes())?,
                ));
            }
        }
        if binds.is_empty() {
            return Ok(None);
        }
        Ok(Some(Stubs {
            dir: cstring(set.dir.as_os_str().as_bytes())?,
            binds,
        }))
    }

    /// How many files are covered.
    pub(crate) fn count(&self) -> usize {
        self.binds.len()
    }

    /// The stub directory and the targets: what a copy of these mounts must match.
    pub(crate) fn paths(&self) -> impl Iterator<Item = &CStr> {
        std::iter::once(self.dir.as_c_str()).chain(self.binds.iter().map(|(_, t)| t.as_c_str()))
    }

    /// Open the stub directory in the child's mount namespace, before anything covers
    /// it: the descriptor [`Self::bind`] takes.
    pub(crate) fn open_dir(&self) -> io::Result<OpenDir> {
        // SAFETY: open(2) with a NUL-terminated path built before the fork.
        let fd = unsafe {
            libc::open(
                self.dir.as_ptr(),
                libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC,
            )
        };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(OpenDir(fd))
    }

    /// Bind each stub over its targets, read-only; a target the box does not show is
    /// skipped.
    pub(crate) fn bind(&self, dir: &OpenDir) -> io::Result<()> {
        let mut buf = [0u8; 96];
        for (name, target) in &self.binds {
            let source = stub_path(dir.0, name, &mut buf);
            // SAFETY: mount(2) with NUL-terminated strings that outlive the call.
            let r = unsafe {
                libc::mount(
                    source.as_ptr(),
                    target.as_ptr(),
                    std::ptr::null(),
                    libc::MS_BIND,
                    std::ptr::null(),
                )
            };
            if r != 0 {
                let e = io::Error::last_os_error();
                if e.raw_os_error() == Some(libc::ENOENT) {
                    continue;
                }
                return Err(e);
            }
            crate::sandbox_reach::remount(
                target,
                libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV,
            )?;
        }
        Ok(())
    }
}

/// The stub directory, open in the child; closed when dropped.
#[derive(Debug)]
pub(crate) struct OpenDir(libc::c_int);

impl Drop for OpenDir {
    fn drop(&mut self) {
        // SAFETY: close(2) of the descriptor this owns.
        unsafe { libc::close(self.0) };
    }
}

/// `/proc/self/fd/<fd>/<name>` with a NUL, written into `buf` without allocating.
fn stub_path<'a>(fd: libc::c_int, name: &CStr, buf: &'a mut [u8; 96]) -> &'a CStr {
    const PREFIX: &[u8] = b"/proc/self/fd/";
    let mut at = PREFIX.len();
    buf[..at].copy_from_slice(PREFIX);
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
        buf[at] = digits[len - 1 - i];
        at += 1;
    }
    buf[at] = b'/';
    at += 1;
    let name = name.to_bytes();
    buf[at..at + name.len()].copy_from_slice(name);
    at += name.len();
    buf[at] = 0;
    CStr::from_bytes_until_nul(&buf[..]).unwrap_or(c"/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stub_path_names_the_file_through_the_descriptor() {
        let mut buf = [0u8; 96];
        assert_eq!(
            stub_path(17, c"3", &mut buf).to_bytes(),
            b"/proc/self/fd/17/3"
        );
    }

    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    #[test]
    fn a_stub_says_its_line_and_exits_126_whatever_it_is_called() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("corral-stub-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let stub = dir.join("0");
        let line = r#"corral: rm is denied here by rule "rm" (layer operator, p.toml:2)"#;
        std::fs::write(&stub, stub_image(line).unwrap()).unwrap();
        std::fs::set_permissions(&stub, std::fs::Permissions::from_mode(0o555)).unwrap();
        let link = dir.join("ls");
        std::os::unix::fs::symlink(&stub, &link).unwrap();
        for path in [&stub, &link] {
            let out = std::process::Command::new(path)
                .arg("victim")
                .output()
                .unwrap();
            assert_eq!(out.status.code(), Some(STUB_STATUS));
            assert_eq!(String::from_utf8_lossy(&out.stderr), format!("{line}\n"));
            assert!(out.stdout.is_empty());
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
