//! What the proxy's protocol handlers share with it: how they ask the proxy about a
//! host and reach it (the [`Upstream`] it implements), the text of a refusal, and the
//! relay that copies a connection's bytes both ways once it is allowed.

use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::time::Duration;

use corral_policy::snippet::Snippet;

/// The largest request head read.
pub(crate) const MAX_HEAD_BYTES: usize = 64 * 1024;
/// The copy buffer of each direction.
const BUFFER: usize = 64 * 1024;
/// The text a refusal carries: which domain to ask for. It ends with the TOML that allows
/// it for good, on lines of its own, then a newline: what follows it is set off by a blank
/// line.
pub(crate) fn refusal_text(host: &str) -> String {
    let snippet = Snippet::new().item("sandbox", "network_allow", host);
    format!(
        "corral's sandbox lets the network reach only listed domains, and `{host}` is not one. \
         Ask the person to allow `{host}`: for this run, approve it when asked, or start \
         corral with --network allow={}; for good, add these lines to a trusted policy \
         file; {}",
        super::domains::allow_word(host),
        snippet.pasting()
    )
}

/// The first line of the answer to a request with the network off (the run's proxy has
/// no allow-list): what to ask for.
pub(crate) fn off_line(host: &str) -> String {
    let word = super::domains::allow_word(host);
    let domain = if word == super::domains::normalize_host(host) {
        String::new()
    } else {
        " (or the domain)".to_string()
    };
    format!("corral: the network is off for this run; ask for --network allow={word}{domain}")
}

/// What the protocol handlers need of the proxy.
pub(crate) trait Upstream {
    /// Whether `host` may be reached; records a refusal.
    fn decide(&self, host: &str, port: u16, how: &str) -> bool;
    /// Connect to `host:port` from corral's namespace.
    fn connect(&self, host: &str, port: u16) -> io::Result<TcpStream>;
    /// Record an allowed connection once it ended.
    fn finished(&self, host: &str, port: u16, bytes: u64, detail: String);
    /// Whether the run's network is off (no allow-list): a refusal says so.
    fn off(&self) -> bool {
        false
    }
}

/// How long an upstream may stay silent once its client has hung up.
const AFTER_CLIENT: Duration = Duration::from_secs(60);

/// Copy both ways until both sides are done; `early` goes upstream first. Returns the
/// bytes carried in both directions together.
pub(crate) fn pipe(client: TcpStream, upstream: TcpStream, early: &[u8]) -> u64 {
    let _ = client.set_read_timeout(None);
    let (Ok(client2), Ok(upstream2)) = (client.try_clone(), upstream.try_clone()) else {
        return 0;
    };
    let mut first = &upstream;
    if !early.is_empty() && first.write_all(early).is_err() {
        return 0;
    }
    let sent = early.len() as u64;
    let (to_upstream, to_client) = std::thread::scope(|scope| {
        let up_side = scope.spawn(|| copy(client2, upstream));
        let down = copy(upstream2, client);
        (up_side.join().unwrap_or(0), down)
    });
    sent + to_upstream + to_client
}

/// Copy `from` into `to` until end of file or an error, then end `to`'s writing side.
/// The bytes go through a pipe with `splice(2)`, never through user memory; where the
/// kernel will not splice, through a buffer.
fn copy(from: TcpStream, to: TcpStream) -> u64 {
    let total = match splice_copy(&from, &to) {
        Ok(n) => n,
        // Nothing moved and the kernel will not splice these: copy through memory.
        Err((0, e)) if e.kind() == io::ErrorKind::InvalidInput => buffered_copy(&from, &to),
        Err((n, _)) => n,
    };
    let _ = to.shutdown(Shutdown::Write);
    // The other direction reads `to` now: it may not wait forever for an upstream that
    // keeps quiet once its client is gone.
    let _ = to.set_read_timeout(Some(AFTER_CLIENT));
    total
}

/// `splice` `from` → pipe → `to`; on an error, the bytes moved so far with it.
fn splice_copy(from: &TcpStream, to: &TcpStream) -> Result<u64, (u64, io::Error)> {
    use rustix::pipe::{PipeFlags, SpliceFlags, pipe_with, splice};
    let (r, w) = pipe_with(PipeFlags::CLOEXEC).map_err(|e| (0, e.into()))?;
    let mut total = 0u64;
    loop {
        let n = match splice(from, None, &w, None, BUFFER * 16, SpliceFlags::MOVE) {
            Ok(0) => return Ok(total),
            Ok(n) => n,
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return Err((total, e.into())),
        };
        let mut left = n;
        while left > 0 {
            match splice(&r, None, to, None, left, SpliceFlags::MOVE) {
                Ok(0) => return Err((total, io::ErrorKind::WriteZero.into())),
                Ok(m) => left -= m,
                Err(rustix::io::Errno::INTR) => continue,
                Err(e) => {
                    let _ = from.shutdown(Shutdown::Read);
                    return Err((total + (n - left) as u64, e.into()));
                }
            }
        }
        total += n as u64;
    }
}

fn buffered_copy(mut from: &TcpStream, mut to: &TcpStream) -> u64 {
    let mut buf = vec![0u8; BUFFER];
    let mut total = 0u64;
    loop {
        match from.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                if to.write_all(&buf[..n]).is_err() {
                    let _ = from.shutdown(Shutdown::Read);
                    break;
                }
                total += n as u64;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        }
    }
    total
}
