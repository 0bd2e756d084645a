//! The PID namespace's init as a program of its own, a few dozen bytes long.
//!
//! What the init does is read its stdin (the lifeline) until it closes, then exit; the
//! system's `cat` does that, but it is a dynamically linked program: its exec maps the
//! loader and the C library, and its start-up (relocations, the C library's CPU probing,
//! slow where `cpuid` traps to the hypervisor) runs on a core next to the call it is
//! meant to serve. On x86-64 corral carries the same loop as a static ELF image with no
//! loader and no library: its name for `ps` (`prctl`), then `read` until 0 and
//! `exit_group`. It is
//! written once per process into a sealed `memfd` (`corral-init`) that the init execs
//! with `execveat`, so nothing is written to the filesystem. Where the image cannot be
//! had (another architecture, `memfd_create` refused, a `vm.memfd_noexec` policy that
//! forbids executing it), [`crate::pidns`] runs `cat` as before.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::OnceLock;

/// Where the image is loaded; any page-aligned address above `vm.mmap_min_addr`.
const BASE: u64 = 0x40_0000;
const EHDR_SIZE: usize = 64;
const PHDR_SIZE: usize = 56;

/// The init's code, x86-64, followed by its name:
///
/// ```text
///     mov  eax, 157          ; prctl(PR_SET_NAME, "corral-init"): what `ps` shows
///     mov  edi, 15
///     lea  rsi, [rip + name]
///     syscall
///     sub  rsp, 64
/// 1:  xor  eax, eax          ; read(0, rsp, 64)
///     xor  edi, edi
///     mov  rsi, rsp
///     mov  edx, 64
///     syscall
///     cmp  rax, -4           ; EINTR: again
///     je   1b
///     test rax, rax          ; more bytes: again
///     jg   1b
///     mov  eax, 231          ; EOF or error: exit_group(0)
///     xor  edi, edi
///     syscall
///     ud2
/// name: .asciz "corral-init"
/// ```
#[cfg(target_arch = "x86_64")]
const CODE: &[u8] = &[
    0xb8, 0x9d, 0x00, 0x00, 0x00, 0xbf, 0x0f, 0x00, 0x00, 0x00, 0x48, 0x8d, 0x35, 0x2a, 0x00, 0x00,
    0x00, 0x0f, 0x05, 0x48, 0x83, 0xec, 0x40, 0x31, 0xc0, 0x31, 0xff, 0x48, 0x89, 0xe6, 0xba, 0x40,
    0x00, 0x00, 0x00, 0x0f, 0x05, 0x48, 0x83, 0xf8, 0xfc, 0x74, 0xec, 0x48, 0x85, 0xc0, 0x7f, 0xe7,
    0xb8, 0xe7, 0x00, 0x00, 0x00, 0x31, 0xff, 0x0f, 0x05, 0x0f, 0x0b, b'c', b'o', b'r', b'r', b'a',
    b'l', b'-', b'i', b'n', b'i', b't', 0x00,
];

#[cfg(target_arch = "x86_64")]
const MACHINE: u16 = 0x3e;

/// The ELF executable: a header, a loadable segment holding the whole file (read and
/// execute), a non-executable stack, then the code.
#[cfg(target_arch = "x86_64")]
fn image() -> Vec<u8> {
    let phnum = 2u16;
    let code_at = EHDR_SIZE + PHDR_SIZE * usize::from(phnum);
    let size = (code_at + CODE.len()) as u64;
    let mut elf = Vec::with_capacity(code_at + CODE.len());
    // e_ident: magic, 64-bit, little-endian, version 1, System V, padding.
    elf.extend_from_slice(&[0x7f, b'E', b'L', b'F', 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    elf.extend_from_slice(&2u16.to_le_bytes()); // e_type: ET_EXEC
    elf.extend_from_slice(&MACHINE.to_le_bytes());
    elf.extend_from_slice(&1u32.to_le_bytes()); // e_version
    elf.extend_from_slice(&(BASE + code_at as u64).to_le_bytes()); // e_entry
    elf.extend_from_slice(&(EHDR_SIZE as u64).to_le_bytes()); // e_phoff
    elf.extend_from_slice(&0u64.to_le_bytes()); // e_shoff
    elf.extend_from_slice(&0u32.to_le_bytes()); // e_flags
    elf.extend_from_slice(&(EHDR_SIZE as u16).to_le_bytes());
    elf.extend_from_slice(&(PHDR_SIZE as u16).to_le_bytes());
    elf.extend_from_slice(&phnum.to_le_bytes());
    elf.extend_from_slice(&[0; 6]); // no section headers
    // PT_LOAD, R+X, the whole file at BASE.
    elf.extend_from_slice(&1u32.to_le_bytes());
    elf.extend_from_slice(&5u32.to_le_bytes());
    elf.extend_from_slice(&0u64.to_le_bytes());
    elf.extend_from_slice(&BASE.to_le_bytes());
    elf.extend_from_slice(&BASE.to_le_bytes());
    elf.extend_from_slice(&size.to_le_bytes());
    elf.extend_from_slice(&size.to_le_bytes());
    elf.extend_from_slice(&0x1000u64.to_le_bytes());
    // PT_GNU_STACK, R+W: the stack is not executable.
    elf.extend_from_slice(&0x6474_e551u32.to_le_bytes());
    elf.extend_from_slice(&6u32.to_le_bytes());
    elf.extend_from_slice(&[0; 48]);
    elf.extend_from_slice(CODE);
    elf
}

#[cfg(not(target_arch = "x86_64"))]
fn image() -> Vec<u8> {
    Vec::new()
}

/// The sealed `memfd` holding the image, made on first use; `None` where it cannot be
/// had (see the module docs). The descriptor is close-on-exec: a child that execs it with
/// `execveat` closes it in the same step.
pub(crate) fn descriptor() -> Option<RawFd> {
    static FD: OnceLock<Option<OwnedFd>> = OnceLock::new();
    FD.get_or_init(|| make().ok())
        .as_ref()
        .map(AsRawFd::as_raw_fd)
}

fn make() -> io::Result<OwnedFd> {
    let image = image();
    if image.is_empty() {
        return Err(io::Error::from_raw_os_error(libc::ENOSYS));
    }
    const MFD_EXEC: libc::c_uint = 0x10;
    let base = libc::MFD_CLOEXEC | libc::MFD_ALLOW_SEALING;
    let create = |flags: libc::c_uint| {
        // SAFETY: memfd_create(2) with a static NUL-terminated name; a new descriptor on
        // success, owned by nobody else.
        let fd = unsafe { libc::memfd_create(c"corral-init".as_ptr(), flags) };
        if fd < 0 {
            Err(io::Error::last_os_error())
        } else {
            // SAFETY: a descriptor just returned to us, not owned elsewhere.
            Ok(unsafe { OwnedFd::from_raw_fd(fd) })
        }
    };
    // MFD_EXEC (Linux 6.3) says the file is meant to run; older kernels refuse the flag.
    let fd = create(base | MFD_EXEC).or_else(|_| create(base))?;
    let mut file = std::fs::File::from(fd);
    std::io::Write::write_all(&mut file, &image)?;
    let seals = libc::F_SEAL_SEAL | libc::F_SEAL_SHRINK | libc::F_SEAL_GROW | libc::F_SEAL_WRITE;
    // SAFETY: fcntl(2) on a descriptor this function owns.
    if unsafe { libc::fcntl(file.as_raw_fd(), libc::F_ADD_SEALS, seals) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(file.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg(target_arch = "x86_64")]
    fn the_image_runs_until_its_stdin_closes_then_exits_zero() {
        use std::io::Write;
        use std::process::{Command, Stdio};
        let fd = descriptor().expect("a memfd for the image");
        let path = format!("/proc/self/fd/{fd}");
        let mut child = Command::new(&path).stdin(Stdio::piped()).spawn().unwrap();
        let mut stdin = child.stdin.take().unwrap();
        // More than one read's worth: it reads on past what it got.
        stdin.write_all(&[b'x'; 200]).unwrap();
        drop(stdin);
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(0), "{status:?}");
    }

    #[test]
    #[cfg(target_arch = "x86_64")]
    fn the_image_names_itself_corral_init() {
        use std::process::{Command, Stdio};
        let fd = descriptor().expect("a memfd for the image");
        let mut child = Command::new(format!("/proc/self/fd/{fd}"))
            .stdin(Stdio::piped())
            .spawn()
            .unwrap();
        // The name is set before the first read: wait until it blocks there.
        let stat = || std::fs::read_to_string(format!("/proc/{}/stat", child.id())).unwrap();
        let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while !stat().contains(") S ") && std::time::Instant::now() < until {
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        let comm = std::fs::read_to_string(format!("/proc/{}/comm", child.id())).unwrap();
        drop(child.stdin.take());
        assert!(child.wait().unwrap().success());
        assert_eq!(comm, "corral-init\n");
    }
}
