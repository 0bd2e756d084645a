//! The TCP ports corral itself listens on (the MCP endpoint over HTTP): no box of this
//! process may connect to them, whatever its network. A box with a network of its own
//! cannot reach the host's loopback at all; one with the host's network has them closed
//! by Landlock where the kernel has TCP rules (ABI 4+), and the token is the only guard
//! below that; the network proxy refuses them on a host-local address.

use std::sync::Mutex;

static PORTS: Mutex<Vec<u16>> = Mutex::new(Vec::new());

/// Keep `port`, which this process now listens on, out of every box it builds from now.
pub fn keep_out(port: u16) {
    let mut ports = PORTS.lock().unwrap_or_else(|e| e.into_inner());
    if !ports.contains(&port) {
        ports.push(port);
        ports.sort_unstable();
    }
}

/// The ports kept out, in order.
pub fn ports() -> Vec<u16> {
    PORTS.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

/// Whether `port` is one of them.
pub(crate) fn kept_out(port: u16) -> bool {
    PORTS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .contains(&port)
}
