//! Pseudo-terminals: open a pair, size it, make it the controlling terminal of a child.
//!
//! - [`open`]: a master and a slave, with a window size. The master stays with corral
//!   (what the program prints is read from it, what is typed is written to it); the slave
//!   becomes the child's stdin, stdout and stderr.
//! - [`controlling_terminal_before_exec`]: in the child, between fork and exec, start a
//!   session of its own and take its stdin (the slave) as its controlling terminal, so
//!   that `C-c` typed on the master reaches the foreground job as SIGINT and a resize
//!   reaches it as SIGWINCH.
//! - [`set_size`] / [`size`]: `TIOCSWINSZ` / `TIOCGWINSZ`. Setting the size through the
//!   master sends SIGWINCH to the terminal's foreground process group.
//! - [`Raw`]: puts a terminal corral itself sits on in raw mode and restores it when
//!   dropped (the CLI's attached sessions).

use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::Command;

use rustix::pty::OpenptFlags;
use rustix::termios::{OptionalActions, Termios, Winsize};

/// Both ends of a new pseudo-terminal.
#[derive(Debug)]
pub struct Pty {
    /// corral's end: read the program's output, write its input, resize.
    pub master: OwnedFd,
    /// The program's end: its stdin, stdout and stderr.
    pub slave: OwnedFd,
}

/// Open a pseudo-terminal pair of `rows` × `cols`. Both ends are close-on-exec; the slave
/// reaches the child only through the descriptors it is given as stdio.
pub fn open(rows: u16, cols: u16) -> io::Result<Pty> {
    let master =
        rustix::pty::openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY | OpenptFlags::CLOEXEC)?;
    rustix::pty::grantpt(&master)?;
    rustix::pty::unlockpt(&master)?;
    let slave = match rustix::pty::ioctl_tiocgptpeer(
        &master,
        OpenptFlags::RDWR | OpenptFlags::NOCTTY | OpenptFlags::CLOEXEC,
    ) {
        Ok(fd) => fd,
        // Kernels before 4.13: open the slave by name.
        Err(_) => {
            let name = rustix::pty::ptsname(&master, Vec::new())?;
            rustix::fs::open(
                name.as_c_str(),
                rustix::fs::OFlags::RDWR | rustix::fs::OFlags::NOCTTY | rustix::fs::OFlags::CLOEXEC,
                rustix::fs::Mode::empty(),
            )?
        }
    };
    set_size(&master, rows, cols)?;
    Ok(Pty { master, slave })
}

/// Set the window size (`TIOCSWINSZ`); through the master, the foreground process group
/// gets SIGWINCH.
pub fn set_size(fd: impl AsFd, rows: u16, cols: u16) -> io::Result<()> {
    rustix::termios::tcsetwinsize(
        fd,
        Winsize {
            ws_row: rows,
            ws_col: cols,
            ws_xpixel: 0,
            ws_ypixel: 0,
        },
    )?;
    Ok(())
}

/// The window size (`TIOCGWINSZ`) as `(rows, cols)`.
pub fn size(fd: impl AsFd) -> io::Result<(u16, u16)> {
    let ws = rustix::termios::tcgetwinsize(fd)?;
    Ok((ws.ws_row, ws.ws_col))
}

/// Whether `fd` is a terminal.
pub fn is_terminal(fd: impl AsFd) -> bool {
    rustix::termios::isatty(fd)
}

/// In the child `cmd` spawns: a new session (`setsid`), then stdin, which must be the
/// slave of a pseudo-terminal by then, as its controlling terminal (`TIOCSCTTY`).
///
/// `setsid` fails for a process group leader, and the standard library applies
/// `Command::process_group` before this hook runs: a command given to this function must
/// not be given a group. `setsid` makes the child the leader of a new group with its own
/// pid, which is the group a containment can then signal.
pub fn controlling_terminal_before_exec(cmd: &mut Command) {
    let hook = || -> io::Result<()> {
        // Raw setsid(2) and ioctl(2) syscalls; errors are built from an errno without
        // allocating.
        if let Err(e) = rustix::process::setsid() {
            return Err(io::Error::from_raw_os_error(e.raw_os_error()));
        }
        // Descriptor 0 is the slave: the standard library installs the stdio descriptors
        // before the hooks run.
        if let Err(e) = rustix::process::ioctl_tiocsctty(rustix::stdio::stdin()) {
            return Err(io::Error::from_raw_os_error(e.raw_os_error()));
        }
        Ok(())
    };
    // SAFETY: the hook runs in the forked child before exec. It makes two syscalls
    // (setsid(2), ioctl(2) TIOCSCTTY on descriptor 0) and builds an io::Error from a raw
    // errno on failure, which does not allocate; it captures nothing, takes no lock and
    // does not log.
    unsafe {
        cmd.pre_exec(hook);
    }
}

/// A terminal put in raw mode; dropping it restores the mode it had.
#[derive(Debug)]
pub struct Raw<Fd: AsFd> {
    fd: Fd,
    saved: Termios,
}

impl<Fd: AsFd> Raw<Fd> {
    /// Put the terminal `fd` in raw mode: no echo, no line editing, no signals from keys,
    /// every byte passed on as typed.
    pub fn enter(fd: Fd) -> io::Result<Self> {
        let saved = rustix::termios::tcgetattr(&fd)?;
        let mut raw = saved.clone();
        raw.make_raw();
        rustix::termios::tcsetattr(&fd, OptionalActions::Flush, &raw)?;
        Ok(Self { fd, saved })
    }
}

impl<Fd: AsFd> Drop for Raw<Fd> {
    fn drop(&mut self) {
        let _ = rustix::termios::tcsetattr(&self.fd, OptionalActions::Flush, &self.saved);
    }
}

/// Wait up to `timeout` for `fd` to be readable (or closed); whether it is.
pub fn wait_readable(fd: impl AsFd, timeout: std::time::Duration) -> io::Result<bool> {
    use rustix::event::{PollFd, PollFlags, Timespec, poll};
    let timeout = Timespec {
        tv_sec: timeout.as_secs() as _,
        tv_nsec: timeout.subsec_nanos() as _,
    };
    let mut fds = [PollFd::new(&fd, PollFlags::IN)];
    match poll(&mut fds, Some(&timeout)) {
        Ok(n) => Ok(n > 0),
        Err(rustix::io::Errno::INTR) => Ok(false),
        Err(e) => Err(e.into()),
    }
}
