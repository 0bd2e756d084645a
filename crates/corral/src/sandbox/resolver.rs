//! The run's resolver with the network off: every question answered at once with
//! `NXDOMAIN`.
//!
//! **Why.** A box in the run's network namespace has no route to the host's resolver, so
//! without this a lookup fails with `EAI_AGAIN`, a *temporary* failure that package
//! managers retry with back-off (npm for minutes). `NXDOMAIN` says the name does not
//! exist, which clients take as final. It answers every name, AAAA and search-domain
//! forms alike: nothing outside the run is reachable from it anyway.
//!
//! **Where.** A UDP socket on `127.0.0.1:53` in the run's namespace
//! ([`corral_sys::sandbox::NetNamespace::bind_dns`]), named by a file the run writes and
//! each box binds over `/etc/resolv.conf` ([`corral_sys::sandbox::Spec::resolv_conf`]).
//! One thread of corral's answers; it ends when the [`Resolver`] is dropped. Over TCP
//! nothing listens: a client that falls back to it is refused at once by the namespace.

use std::io;
use std::net::UdpSocket;
use std::path::{Path, PathBuf};

use corral_sys::sandbox::NetNamespace;

/// What the boxes' `/etc/resolv.conf` says: the resolver above, asked once.
pub(crate) const RESOLV_CONF: &str = "# corral: the network is off for this run; every name is answered NXDOMAIN\n\
     nameserver 127.0.0.1\noptions attempts:1 timeout:1\n";
/// The file's name in the directory the run's boxes share for their temporary files.
const FILE_NAME: &str = ".corral-resolv.conf";

/// The largest DNS message over UDP.
const MAX_MESSAGE: usize = 4096;

/// A running resolver; stopped when dropped.
#[derive(Debug)]
pub(crate) struct Resolver {
    socket: UdpSocket,
}

impl Resolver {
    /// Bind in `ns` and answer on a thread of its own.
    pub(crate) fn start(ns: &NetNamespace) -> io::Result<Resolver> {
        let socket = ns.bind_dns()?;
        let serving = socket.try_clone()?;
        std::thread::Builder::new()
            .name("corral-resolver".into())
            .spawn(move || serve(serving))?;
        Ok(Resolver { socket })
    }

    /// Write the resolver file in `dir`, a directory the run's boxes share: at the run's
    /// open, before any box runs there.
    pub(crate) fn write_file(dir: &Path) -> io::Result<()> {
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        let path = dir.join(FILE_NAME);
        let _ = std::fs::remove_file(&path);
        // Made new: never through a link someone left at the name.
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o444)
            .open(&path)?
            .write_all(RESOLV_CONF.as_bytes())
    }

    /// The resolver file as a box names it, for a call whose temporary directory lies in
    /// `host_dir`, which the box sees as `box_dir`: `None` where the run wrote none there.
    pub(crate) fn file_for(host_dir: &Path, box_dir: &Path) -> Option<PathBuf> {
        std::fs::symlink_metadata(host_dir.join(FILE_NAME))
            .is_ok_and(|m| m.is_file())
            .then(|| box_dir.join(FILE_NAME))
    }
}

impl Drop for Resolver {
    fn drop(&mut self) {
        // Wakes the thread: a receive on a socket shut down for reading returns nothing.
        let _ = rustix::net::shutdown(&self.socket, rustix::net::Shutdown::Read);
    }
}

fn serve(socket: UdpSocket) {
    let mut buf = [0u8; MAX_MESSAGE];
    loop {
        match socket.recv_from(&mut buf) {
            Ok((0, _)) => return,
            Ok((n, from)) => {
                if let Some(answer) = nxdomain(&buf[..n]) {
                    let _ = socket.send_to(&answer, from);
                }
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => return,
        }
    }
}

/// The answer to `query`: its header and question, marked a response with `NXDOMAIN`
/// (recursion available, no records). `None` for what is not a query with one question.
pub(crate) fn nxdomain(query: &[u8]) -> Option<Vec<u8>> {
    const HEADER: usize = 12;
    let header = query.get(..HEADER)?;
    let is_query = header[2] & 0x80 == 0;
    let opcode = (header[2] >> 3) & 0x0f;
    let questions = u16::from_be_bytes([header[4], header[5]]);
    if !is_query || questions != 1 {
        return None;
    }
    // The question: labels up to the root, then type and class.
    let mut at = HEADER;
    loop {
        let len = *query.get(at)? as usize;
        if len & 0xc0 != 0 {
            return None;
        }
        at += 1 + len;
        if len == 0 {
            break;
        }
    }
    let end = at + 4;
    let question = query.get(HEADER..end)?;
    let mut answer = Vec::with_capacity(end);
    answer.extend_from_slice(&header[..2]);
    // QR, the query's opcode and RD; RA; RCODE 3 (NXDOMAIN), or 4 (not implemented) for
    // an opcode other than a standard query.
    answer.push(0x80 | (opcode << 3) | (header[2] & 0x01));
    answer.push(0x80 | if opcode == 0 { 3 } else { 4 });
    answer.extend_from_slice(&[0, 1, 0, 0, 0, 0, 0, 0]);
    answer.extend_from_slice(question);
    Some(answer)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A query for `name` of `qtype`, id 0x1234, recursion desired.
    fn query(name: &str, qtype: u16) -> Vec<u8> {
        let mut q = vec![0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0];
        for label in name.split('.') {
            q.push(label.len() as u8);
            q.extend_from_slice(label.as_bytes());
        }
        q.push(0);
        q.extend_from_slice(&qtype.to_be_bytes());
        q.extend_from_slice(&1u16.to_be_bytes());
        q
    }

    #[test]
    fn every_question_is_answered_nxdomain_with_the_question_echoed() {
        for qtype in [1u16, 28, 65] {
            let q = query("registry.npmjs.org", qtype);
            let a = nxdomain(&q).expect("an answer");
            assert_eq!(&a[..2], &[0x12, 0x34], "the id");
            assert_eq!(a[2] & 0x80, 0x80, "a response");
            assert_eq!(a[2] & 0x01, 0x01, "recursion desired, echoed");
            assert_eq!(a[3] & 0x0f, 3, "NXDOMAIN");
            assert_eq!(&a[4..12], &[0, 1, 0, 0, 0, 0, 0, 0]);
            assert_eq!(&a[12..], &q[12..], "the question");
        }
    }

    #[test]
    fn what_is_not_one_question_gets_no_answer() {
        assert_eq!(nxdomain(&[0u8; 5]), None);
        let mut response = query("a.b", 1);
        response[2] |= 0x80;
        assert_eq!(nxdomain(&response), None);
        let mut cut = query("example.org", 1);
        cut.truncate(20);
        assert_eq!(nxdomain(&cut), None);
    }
}
