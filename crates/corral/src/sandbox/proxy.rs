//! The run's network proxy: the only way out of the run's network namespace when the
//! sandbox allows the network by domain ([`super::SandboxConfig::network_allow`]).
//!
//! **Where it listens.** The listening socket is made inside the run's network namespace
//! ([`corral_sys::sandbox::NetNamespace::listen_loopback`]): a command reaches it at
//! `127.0.0.1:PORT`, its loopback, and has no other route out (the namespace holds only a
//! loopback, so no resolver either). The proxy's own threads stay in corral's namespace,
//! so the connections it makes upstream are corral's, on the host's network.
//!
//! **What it speaks.** On one port, told apart by the first byte: HTTP `CONNECT` (the
//! tunnel `HTTPS_PROXY` clients use), plain HTTP in absolute form (`GET http://host/…`,
//! forwarded with `Connection: close`), and SOCKS5 with names resolved at the proxy
//! (`ALL_PROXY=socks5h://…`). Commands get all of these variables (see
//! [`super::Active::apply_env`]).
//!
//! **What it allows.** The host the request names, matched against the allow-list
//! ([`super::domains`]); an IP address only when listed as one. A refusal answers
//! `403` with a body (and, for `CONNECT`, a reason phrase) naming the domain to ask for;
//! SOCKS5 answers "not allowed by ruleset". Every decision is kept as a [`NetEvent`]
//! (host, port, allowed, bytes both ways) for the trace, and the refusals are kept so the
//! result of a failed call can say which domain was refused. A call's end waits (up to
//! 2 s) for the connections accepted during it to end, so their bytes are recorded with
//! it; connections that outlive that are recorded with the next call.
//!
//! **With the network off.** A run whose network is off and has no allow-list starts it
//! too ([`Proxy::start_off`]), with nothing allowed: an HTTP(S) client honouring the proxy
//! variables gets an immediate `403 corral: the network is off for this run; ask for
//! --network allow=npm (or the domain)` instead of a failed lookup it would retry, and
//! the refusal log names the hosts a call tried. Nothing goes upstream until a person
//! allows a domain for the run.
//!
//! **What it reaches.** Only an allowed name is ever looked up, so a refused one does not
//! leak through the host's resolver either. A listed name that resolves only to loopback, unspecified or
//! link-local addresses (corral's own host, a cloud's metadata service) is not followed;
//! an address listed as such is. At most 512 connections are served at once.

use std::collections::BTreeMap;
use std::io;
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use corral_sys::sandbox::NetNamespace;

use super::domains::{AllowList, normalize_host};
use super::relay::Upstream;

/// How long a client has to send its request head, and the proxy to connect upstream.
const HEAD_TIMEOUT: Duration = Duration::from_secs(30);
const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);
/// How many refusals are kept for results.
const KEPT_REFUSALS: usize = 256;
/// How many connections are served at once; more are closed at once.
const MAX_CONNECTIONS: usize = 512;

/// One decision of the proxy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NetEvent {
    pub seq: u64,
    pub at_ms: i64,
    pub host: String,
    pub port: u16,
    pub allowed: bool,
    pub bytes: u64,
    /// `http`, `connect` or `socks5`, and what went wrong, if anything.
    pub detail: String,
}

#[derive(Debug)]
struct Shared {
    allow: RwLock<AllowList>,
    resolve: BTreeMap<String, SocketAddr>,
    events: Mutex<Vec<NetEvent>>,
    /// Started with the network off: nothing allowed, and refusals say the network is
    /// off, until a person allows a domain for the run.
    off: bool,
    refusals: Mutex<Vec<(u64, String)>>,
    seq: AtomicU64,
    stop: AtomicBool,
    /// The connections being served, by number (numbered in accept order).
    active: Mutex<std::collections::BTreeSet<u64>>,
    /// Notified whenever one ends.
    ended: std::sync::Condvar,
    accepted: AtomicU64,
}

/// Where the proxy stood when a call began: its later refusals and connections are the
/// call's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Mark {
    seq: u64,
    conn: u64,
}

/// A running proxy; stopped when dropped (connections in flight finish).
#[derive(Debug)]
pub(crate) struct Proxy {
    port: u16,
    listener: TcpListener,
    shared: Arc<Shared>,
}

impl Proxy {
    /// Listen inside `ns` and serve `allow`; `resolve` maps names to addresses instead
    /// of resolving them (tests).
    pub fn start(
        ns: &NetNamespace,
        allow: AllowList,
        resolve: BTreeMap<String, SocketAddr>,
    ) -> io::Result<Proxy> {
        Self::serve(ns, allow, resolve, false)
    }

    /// Listen inside `ns` with the network off: every request is answered at once with
    /// `403` naming what to ask for, and nothing goes upstream, until a person allows a
    /// domain for the run ([`Proxy::allow`]).
    pub fn start_off(ns: &NetNamespace) -> io::Result<Proxy> {
        Self::serve(ns, AllowList::default(), BTreeMap::new(), true)
    }

    fn serve(
        ns: &NetNamespace,
        allow: AllowList,
        resolve: BTreeMap<String, SocketAddr>,
        off: bool,
    ) -> io::Result<Proxy> {
        let listener = ns.listen_loopback()?;
        let port = listener.local_addr()?.port();
        let shared = Arc::new(Shared {
            allow: RwLock::new(allow),
            resolve: resolve
                .into_iter()
                .map(|(k, v)| (normalize_host(&k), v))
                .collect(),
            events: Mutex::new(Vec::new()),
            off,
            refusals: Mutex::new(Vec::new()),
            seq: AtomicU64::new(0),
            stop: AtomicBool::new(false),
            active: Mutex::new(std::collections::BTreeSet::new()),
            ended: std::sync::Condvar::new(),
            accepted: AtomicU64::new(0),
        });
        let accepting = listener.try_clone()?;
        let s = Arc::clone(&shared);
        std::thread::Builder::new()
            .name("corral-proxy".into())
            .spawn(move || accept_loop(accepting, s))?;
        Ok(Proxy {
            port,
            listener,
            shared,
        })
    }

    /// The port on the run namespace's loopback.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Allow `entry` too, from now on.
    pub fn allow(&self, entry: &str) -> Result<(), String> {
        self.shared
            .allow
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .add_entry(entry)
    }

    /// Whether it was started with the network off and nothing has been allowed since.
    pub fn is_off(&self) -> bool {
        Upstream::off(&*self.shared)
    }

    /// The names allowed now.
    pub fn names(&self) -> Vec<String> {
        self.shared
            .allow
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .names()
            .to_vec()
    }

    /// A mark: the refusals and connections after it are [`Proxy::refused_since`] and
    /// [`Proxy::settle`] it.
    pub fn mark(&self) -> Mark {
        Mark {
            seq: self.shared.seq.load(Ordering::SeqCst),
            conn: self.shared.accepted.load(Ordering::SeqCst),
        }
    }

    /// The hosts refused after `mark`, each once, in order.
    pub fn refused_since(&self, mark: Mark) -> Vec<String> {
        let refusals = self
            .shared
            .refusals
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let mut out: Vec<String> = Vec::new();
        for (_, host) in refusals.iter().filter(|(seq, _)| *seq > mark.seq) {
            if !out.contains(host) {
                out.push(host.clone());
            }
        }
        out
    }

    /// Wait (at most `limit`) until every connection whose client has hung up has its
    /// decision kept: after a call, its processes are gone, and this makes its
    /// connections' byte counts part of its record.
    pub fn settle(&self, mark: Mark, limit: Duration) {
        let active = self.shared.lock_active();
        let _ = self
            .shared
            .ended
            .wait_timeout_while(active, limit, |a| a.range(mark.conn + 1..).next().is_some());
    }

    /// The decisions not yet taken, in order.
    pub fn take_events(&self) -> Vec<NetEvent> {
        std::mem::take(&mut *self.shared.events.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        // Wakes the accept loop (a listening socket shut down fails its accept).
        let _ = rustix::net::shutdown(&self.listener, rustix::net::Shutdown::Both);
    }
}

fn accept_loop(listener: TcpListener, shared: Arc<Shared>) {
    for stream in listener.incoming() {
        if shared.stop.load(Ordering::SeqCst) {
            return;
        }
        let Ok(stream) = stream else {
            continue;
        };
        let id = shared.accepted.fetch_add(1, Ordering::SeqCst) + 1;
        {
            let mut active = shared.lock_active();
            if active.len() >= MAX_CONNECTIONS {
                continue;
            }
            active.insert(id);
        }
        let s = Arc::clone(&shared);
        let spawned = std::thread::Builder::new()
            .name("corral-proxy-conn".into())
            .spawn(move || {
                serve(stream, &s);
                s.end(id);
            });
        if spawned.is_err() {
            shared.end(id);
        }
    }
}

impl Shared {
    fn decide(&self, host: &str, port: u16, how: &str) -> bool {
        let allowed = self
            .allow
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .allows(host);
        if !allowed {
            let seq = self.seq.fetch_add(1, Ordering::SeqCst) + 1;
            let host = normalize_host(host);
            let mut refusals = self.refusals.lock().unwrap_or_else(|e| e.into_inner());
            refusals.push((seq, host.clone()));
            if refusals.len() > KEPT_REFUSALS {
                refusals.remove(0);
            }
            drop(refusals);
            self.record(
                seq,
                host,
                port,
                false,
                0,
                format!("{how}: not in the allow-list"),
            );
        }
        allowed
    }

    fn record(&self, seq: u64, host: String, port: u16, allowed: bool, bytes: u64, detail: String) {
        self.events
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(NetEvent {
                seq,
                at_ms: crate::clock::now_ms(),
                host,
                port,
                allowed,
                bytes,
                detail,
            });
    }

    fn finished(&self, host: &str, port: u16, bytes: u64, detail: String) {
        let seq = self.seq.fetch_add(1, Ordering::SeqCst) + 1;
        self.record(seq, normalize_host(host), port, true, bytes, detail);
    }

    fn lock_active(&self) -> std::sync::MutexGuard<'_, std::collections::BTreeSet<u64>> {
        self.active.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Connection `id` is over.
    fn end(&self, id: u64) {
        self.lock_active().remove(&id);
        self.ended.notify_all();
    }

    /// Connect upstream, from corral's own network namespace.
    fn connect(&self, host: &str, port: u16) -> io::Result<TcpStream> {
        let name = normalize_host(host);
        let addrs: Vec<SocketAddr> = match self.resolve.get(&name) {
            Some(addr) => vec![*addr],
            None => {
                let listed_address = name.parse::<std::net::IpAddr>().is_ok();
                let all: Vec<SocketAddr> = (name.as_str(), port).to_socket_addrs()?.collect();
                // A listed name must not become a way into corral's host: a name that
                // resolves to loopback or link-local (cloud metadata) is not followed.
                let outside: Vec<SocketAddr> = all
                    .iter()
                    .copied()
                    .filter(|a| listed_address || !host_local(a.ip()))
                    .collect();
                if outside.is_empty() && !all.is_empty() {
                    return Err(io::Error::new(
                        io::ErrorKind::PermissionDenied,
                        format!(
                            "{host} resolves only to loopback or link-local addresses, which \
                             the proxy does not reach for a name"
                        ),
                    ));
                }
                outside
            }
        };
        if addrs
            .iter()
            .any(|a| host_local(a.ip()) && super::listeners::kept_out(a.port()))
        {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!("{host}:{port} is corral's own endpoint, which no box reaches"),
            ));
        }
        let mut last = io::Error::new(io::ErrorKind::NotFound, format!("{host} has no address"));
        for addr in addrs {
            match TcpStream::connect_timeout(&addr, CONNECT_TIMEOUT) {
                Ok(s) => {
                    let _ = s.set_nodelay(true);
                    return Ok(s);
                }
                Err(e) => last = e,
            }
        }
        Err(last)
    }
}

/// Loopback, unspecified and link-local addresses: corral's own host, not the network.
fn host_local(ip: std::net::IpAddr) -> bool {
    match ip {
        std::net::IpAddr::V4(v4) => v4.is_loopback() || v4.is_unspecified() || v4.is_link_local(),
        std::net::IpAddr::V6(v6) => {
            v6.is_loopback()
                || v6.is_unspecified()
                || (v6.segments()[0] & 0xffc0) == 0xfe80
                || v6.to_ipv4_mapped().is_some_and(|v4| host_local(v4.into()))
        }
    }
}

fn serve(client: TcpStream, shared: &Shared) {
    let _ = client.set_read_timeout(Some(HEAD_TIMEOUT));
    let _ = client.set_nodelay(true);
    let mut first = [0u8; 1];
    match client.peek(&mut first) {
        Ok(1) if first[0] == 5 => super::proxy_protocol::socks5(client, shared),
        Ok(1) => super::proxy_protocol::http(client, shared),
        _ => {}
    }
}

impl Upstream for Shared {
    fn decide(&self, host: &str, port: u16, how: &str) -> bool {
        Shared::decide(self, host, port, how)
    }
    fn connect(&self, host: &str, port: u16) -> io::Result<TcpStream> {
        Shared::connect(self, host, port)
    }
    fn finished(&self, host: &str, port: u16, bytes: u64, detail: String) {
        Shared::finished(self, host, port, bytes, detail)
    }
    fn off(&self) -> bool {
        self.off
            && self
                .allow
                .read()
                .unwrap_or_else(|e| e.into_inner())
                .names()
                .is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_local_addresses_are_told_apart() {
        for local in [
            "127.0.0.1",
            "0.0.0.0",
            "169.254.169.254",
            "::1",
            "fe80::1",
            "::ffff:127.0.0.1",
        ] {
            assert!(host_local(local.parse().unwrap()), "{local}");
        }
        for outside in ["10.0.0.1", "93.184.216.34", "2606:2800:220:1::1"] {
            assert!(!host_local(outside.parse().unwrap()), "{outside}");
        }
    }
}
