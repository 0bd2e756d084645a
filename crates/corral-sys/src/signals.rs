//! Signals as a started program expects them: every disposition the default, nothing
//! blocked.
//!
//! A process inherits ignored signals across `exec`. corral started from `nohup`, from
//! `cmd &` in a script, or from a service manager may itself have SIGINT, SIGQUIT, SIGHUP
//! or SIGPIPE ignored, and without this every command it ran would too: `C-c` typed into a
//! terminal handle would do nothing, and a filter whose reader went away would spin on
//! `EPIPE` instead of ending. A handler corral installed is reset by `exec` anyway; only an
//! ignored signal and the blocked mask survive it, so the child resets both, the way
//! `posix_spawn` with `POSIX_SPAWN_SETSIGDEF` and `POSIX_SPAWN_SETSIGMASK` does.
//!
//! [`default_signals_before_exec`] does it between fork and exec for a [`Command`]; the
//! PID namespace's init does the same in its own start-up (see [`crate::pidns`]).

use std::os::unix::process::CommandExt;
use std::process::Command;

/// In the child `cmd` spawns: every signal's disposition back to the default, then an
/// empty signal mask. Register it before hooks that may block signals of their own.
pub fn default_signals_before_exec(cmd: &mut Command) {
    // Read before the fork: `SIGRTMAX` is a libc call, cheap but not worth making in the
    // child.
    let last = libc::SIGRTMAX();
    let hook = move || -> std::io::Result<()> {
        // SAFETY: raw rt_sigaction(2) and rt_sigprocmask(2) on buffers on this stack; both
        // are async-signal-safe, allocate nothing and take no lock.
        unsafe { reset(last) };
        Ok(())
    };
    // SAFETY: the hook makes only the raw system calls of `reset`, on values on its own
    // stack and a copied integer; it allocates nothing, takes no lock and does not log.
    unsafe {
        cmd.pre_exec(hook);
    }
}

/// Whether `sig`'s disposition in this process is to ignore it: a hangup ignored on
/// entry (`nohup`) is asked for, and a handler installed over it would undo that.
pub fn ignored(sig: i32) -> bool {
    // SAFETY: sigaction(2) with no new action only reads the disposition into a zeroed
    // structure on this frame.
    unsafe {
        let mut old: libc::sigaction = std::mem::zeroed();
        libc::sigaction(sig, std::ptr::null(), &raw mut old) == 0
            && old.sa_sigaction == libc::SIG_IGN
    }
}

/// Every disposition from 1 to `last` the default (SIGKILL and SIGSTOP cannot be
/// changed), then nothing blocked.
///
/// Raw system calls, not the C library's wrappers: those refuse the real-time signals the
/// library keeps for itself (32 and 33 in glibc), and an ignored one would survive the
/// exec. An all-zero kernel `sigaction` is `SIG_DFL` with no flags and an empty mask,
/// whatever the order of its fields on this architecture.
///
/// # Safety
///
/// Only for a process about to exec (or in a single-threaded start-up): it takes every
/// handler of the process away.
pub(crate) unsafe fn reset(last: libc::c_int) {
    const SIGSET_BYTES: usize = 8;
    let default = [0u64; 4];
    let empty = [0u64; 1];
    // SAFETY: rt_sigaction(2) and rt_sigprocmask(2) read the buffers on this stack, large
    // enough for the kernel's structures, and write nothing (no old value is asked for).
    unsafe {
        for sig in 1..=last {
            if sig != libc::SIGKILL && sig != libc::SIGSTOP {
                libc::syscall(
                    libc::SYS_rt_sigaction,
                    sig,
                    default.as_ptr(),
                    std::ptr::null_mut::<libc::c_void>(),
                    SIGSET_BYTES,
                );
            }
        }
        libc::syscall(
            libc::SYS_rt_sigprocmask,
            libc::SIG_SETMASK,
            empty.as_ptr(),
            std::ptr::null_mut::<libc::c_void>(),
            SIGSET_BYTES,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `SigIgn` and `SigBlk` of the program `cmd` runs, as `/proc` shows them.
    fn masks(cmd: &mut Command) -> (String, String) {
        let out = cmd
            .args(["/proc/self/status"])
            .stdout(std::process::Stdio::piped())
            .output()
            .unwrap();
        let text = String::from_utf8(out.stdout).unwrap();
        let field = |name: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(name))
                .unwrap()
                .trim()
                .to_string()
        };
        (field("SigIgn:"), field("SigBlk:"))
    }

    #[test]
    fn an_ignored_signal_is_not_passed_on() {
        // This test process ignores SIGQUIT for a moment, as `nohup` or `cmd &` leaves a
        // program; no other test here sends it one.
        // SAFETY: sets a disposition to ignored; no handler is replaced.
        unsafe {
            libc::signal(libc::SIGQUIT, libc::SIG_IGN);
        }
        let plain = masks(&mut Command::new("cat"));
        let mut reset = Command::new("cat");
        default_signals_before_exec(&mut reset);
        let reset = masks(&mut reset);
        // SAFETY: restores the default this process started with.
        unsafe {
            libc::signal(libc::SIGQUIT, libc::SIG_DFL);
        }
        let quit_bit = 1u64 << (libc::SIGQUIT - 1);
        let bits = |s: &str| u64::from_str_radix(s, 16).unwrap();
        assert_ne!(bits(&plain.0) & quit_bit, 0, "the plain spawn inherited it");
        assert_eq!(
            reset,
            ("0000000000000000".into(), "0000000000000000".into())
        );
    }
}
