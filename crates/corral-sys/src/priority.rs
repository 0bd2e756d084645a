//! A started command's scheduling priority: niced below corral's own, with no way back.
//!
//! A busy build at corral's own priority competes for the CPU with the process that must
//! answer the model (or the person) while it runs. Each call's processes are niced by a
//! few steps more than corral ([`lower`]), and their `RLIMIT_NICE` is 0: the ceiling the
//! kernel lets an unprivileged process raise its priority to is then its nice value as
//! it stands, so nothing they start gets back above it. (A root process keeps
//! `CAP_SYS_NICE` and could; a sandboxed one has none.)

use std::io;
use std::os::unix::process::CommandExt;
use std::process::Command;

/// In the calling process, between fork and exec: add `by` to its nice value (at most
/// 19) and set `RLIMIT_NICE` to 0. Raw system calls only.
pub fn lower(by: u8) -> io::Result<()> {
    // SAFETY: getpriority(2) on this process. The raw call answers 20 - nice (1..40),
    // never negative, so an error is told apart from a value.
    let kernel = unsafe { libc::syscall(libc::SYS_getpriority, libc::PRIO_PROCESS, 0) };
    if kernel < 0 {
        return Err(io::Error::last_os_error());
    }
    let now = 20 - kernel as i32;
    let to = (now + i32::from(by)).min(19);
    // SAFETY: setpriority(2) on this process with an integer.
    if unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, to) } != 0 {
        return Err(io::Error::last_os_error());
    }
    let none = libc::rlimit64 {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: prlimit64(2) on this process with a structure on this frame.
    if unsafe { libc::prlimit64(0, libc::RLIMIT_NICE, &none, std::ptr::null_mut()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// [`lower`] in the child `cmd` forks, before its exec.
pub fn lower_before_exec(cmd: &mut Command, by: u8) {
    // SAFETY: the hook runs in the forked child before exec and makes three raw system
    // calls on integers and a structure on its stack; it does not allocate, lock or log.
    unsafe {
        cmd.pre_exec(move || lower(by));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_runs_niced_and_cannot_raise_it() {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "cut -d' ' -f19 /proc/self/stat; renice -n 0 -p $$ >/dev/null 2>&1 && echo raised || echo held"]);
        lower_before_exec(&mut cmd, 7);
        let out = cmd.output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        let mut lines = text.lines();
        let own: i32 = std::fs::read_to_string("/proc/self/stat").unwrap()[..]
            .rsplit(')')
            .next()
            .unwrap()
            .split_whitespace()
            .nth(16)
            .unwrap()
            .parse()
            .unwrap();
        let child: i32 = lines.next().unwrap().trim().parse().unwrap();
        assert_eq!(child, (own + 7).min(19), "{text}");
        // Root keeps CAP_SYS_NICE outside a box; anyone else is held.
        if !rustix::process::geteuid().is_root() {
            assert_eq!(lines.next(), Some("held"), "{text}");
        }
    }
}
