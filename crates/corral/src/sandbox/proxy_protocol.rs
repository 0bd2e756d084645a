//! The proxy's two protocols: an HTTP request head (`CONNECT host:port`, or an
//! absolute-form request forwarded upstream) and SOCKS5 (`CONNECT` only, names resolved
//! at the proxy). See [`super::proxy`].

use std::io::{Read, Write};
use std::net::TcpStream;

use super::relay::{MAX_HEAD_BYTES, Upstream, off_line, pipe, refusal_text};

/// Read the request head (through the blank line); returns it and whatever came after.
fn read_head(client: &mut TcpStream) -> Option<(String, Vec<u8>)> {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 4096];
    loop {
        let n = client.read(&mut chunk).ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let rest = buf.split_off(end + 4);
            return Some((String::from_utf8_lossy(&buf).into_owned(), rest));
        }
        if buf.len() > MAX_HEAD_BYTES {
            return None;
        }
    }
}

/// `host:port` (or `[v6]:port`), with `default` when no port is given.
fn split_authority(authority: &str, default: u16) -> Option<(String, u16)> {
    let authority = authority.rsplit('@').next()?;
    if let Some(rest) = authority.strip_prefix('[') {
        let (host, after) = rest.split_once(']')?;
        let port = match after.strip_prefix(':') {
            Some(p) => p.parse().ok()?,
            None if after.is_empty() => default,
            None => return None,
        };
        return Some((format!("[{host}]"), port));
    }
    match authority.rsplit_once(':') {
        Some((host, port)) => Some((host.to_string(), port.parse().ok()?)),
        None => Some((authority.to_string(), default)),
    }
    .filter(|(h, _)| !h.is_empty())
}

fn respond(client: &mut TcpStream, status: &str, reason: &str, body: &str) {
    let head = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: text/plain; charset=utf-8\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len() + 1
    );
    let _ = client.write_all(head.as_bytes());
    let _ = client.write_all(body.as_bytes());
    let _ = client.write_all(b"\n");
}

fn refuse(client: &mut TcpStream, host: &str, up: &dyn Upstream) {
    if up.off() {
        // The reason phrase says it all, for a client that shows only the status line.
        let line = off_line(host);
        let reason = line.replace(['\r', '\n'], " ");
        respond(
            client,
            "403",
            &reason,
            &format!("{line}\n\n{}", refusal_text(host)),
        );
        return;
    }
    let reason = format!(
        "Forbidden by corral's sandbox: ask to allow {}",
        super::domains::normalize_host(host)
    );
    respond(client, "403", &reason, &refusal_text(host));
}

/// Serve one HTTP request: a `CONNECT` tunnel or one forwarded request.
pub(crate) fn http(mut client: TcpStream, up: &dyn Upstream) {
    let Some((head, rest)) = read_head(&mut client) else {
        return;
    };
    let mut lines = head.split("\r\n");
    let request = lines.next().unwrap_or("");
    let mut parts = request.split(' ');
    let (Some(method), Some(target), Some(version)) = (parts.next(), parts.next(), parts.next())
    else {
        respond(
            &mut client,
            "400",
            "Bad Request",
            "corral's sandbox proxy: not an HTTP request",
        );
        return;
    };
    if method.eq_ignore_ascii_case("CONNECT") {
        let Some((host, port)) = split_authority(target, 443) else {
            respond(&mut client, "400", "Bad Request", "CONNECT needs host:port");
            return;
        };
        if !up.decide(&host, port, "connect") {
            refuse(&mut client, &host, up);
            return;
        }
        match up.connect(&host, port) {
            Ok(upstream) => {
                if client
                    .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
                    .is_err()
                {
                    return;
                }
                let bytes = pipe(client, upstream, &rest);
                up.finished(&host, port, bytes, "connect".into());
            }
            Err(e) => {
                respond(
                    &mut client,
                    "502",
                    "Bad Gateway",
                    &format!("corral's sandbox proxy could not reach {host}:{port}: {e}"),
                );
                up.finished(&host, port, 0, format!("connect: upstream failed: {e}"));
            }
        }
        return;
    }
    let Some(after) = target
        .get(..7)
        .filter(|s| s.eq_ignore_ascii_case("http://"))
        .map(|_| &target[7..])
    else {
        respond(
            &mut client,
            "400",
            "Bad Request",
            "corral's sandbox proxy forwards absolute http:// requests and CONNECT tunnels; \
             use it as HTTP_PROXY/HTTPS_PROXY",
        );
        return;
    };
    let end = after.find(['/', '?', '#']).unwrap_or(after.len());
    let (authority, path) = after.split_at(end);
    let path = if path.is_empty() || path.starts_with('#') {
        "/".to_string()
    } else if path.starts_with('?') {
        format!("/{path}")
    } else {
        path.to_string()
    };
    let Some((host, port)) = split_authority(authority, 80) else {
        respond(&mut client, "400", "Bad Request", "no host in the request");
        return;
    };
    if !up.decide(&host, port, "http") {
        refuse(&mut client, &host, up);
        return;
    }
    let mut out = format!("{method} {path} {version}\r\n");
    let mut has_host = false;
    for line in lines.filter(|l| !l.is_empty()) {
        let name = line
            .split(':')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase();
        match name.as_str() {
            "proxy-connection" | "proxy-authorization" | "connection" | "keep-alive" => continue,
            "host" => has_host = true,
            _ => {}
        }
        out.push_str(line);
        out.push_str("\r\n");
    }
    if !has_host {
        out.push_str(&format!("Host: {authority}\r\n"));
    }
    out.push_str("Connection: close\r\n\r\n");
    match up.connect(&host, port) {
        Ok(upstream) => {
            let mut early = out.into_bytes();
            early.extend_from_slice(&rest);
            let bytes = pipe(client, upstream, &early);
            up.finished(&host, port, bytes, "http".into());
        }
        Err(e) => {
            respond(
                &mut client,
                "502",
                "Bad Gateway",
                &format!("corral's sandbox proxy could not reach {host}:{port}: {e}"),
            );
            up.finished(&host, port, 0, format!("http: upstream failed: {e}"));
        }
    }
}

/// SOCKS5 replies.
const SOCKS_OK: u8 = 0;
const SOCKS_NOT_ALLOWED: u8 = 2;
const SOCKS_HOST_UNREACHABLE: u8 = 4;
const SOCKS_COMMAND_UNSUPPORTED: u8 = 7;
const SOCKS_ADDRESS_UNSUPPORTED: u8 = 8;

fn socks_reply(client: &mut TcpStream, code: u8) {
    let _ = client.write_all(&[5, code, 0, 1, 0, 0, 0, 0, 0, 0]);
}

/// Serve one SOCKS5 connection (no authentication, `CONNECT` only).
pub(crate) fn socks5(mut client: TcpStream, up: &dyn Upstream) {
    let mut hello = [0u8; 2];
    if client.read_exact(&mut hello).is_err() {
        return;
    }
    let mut methods = vec![0u8; hello[1] as usize];
    if client.read_exact(&mut methods).is_err() {
        return;
    }
    if !methods.contains(&0) {
        let _ = client.write_all(&[5, 0xff]);
        return;
    }
    if client.write_all(&[5, 0]).is_err() {
        return;
    }
    let mut req = [0u8; 4];
    if client.read_exact(&mut req).is_err() {
        return;
    }
    let host = match req[3] {
        1 => {
            let mut a = [0u8; 4];
            if client.read_exact(&mut a).is_err() {
                return;
            }
            std::net::Ipv4Addr::from(a).to_string()
        }
        3 => {
            let mut len = [0u8; 1];
            if client.read_exact(&mut len).is_err() {
                return;
            }
            let mut name = vec![0u8; len[0] as usize];
            if client.read_exact(&mut name).is_err() {
                return;
            }
            String::from_utf8_lossy(&name).into_owned()
        }
        4 => {
            let mut a = [0u8; 16];
            if client.read_exact(&mut a).is_err() {
                return;
            }
            format!("[{}]", std::net::Ipv6Addr::from(a))
        }
        _ => {
            socks_reply(&mut client, SOCKS_ADDRESS_UNSUPPORTED);
            return;
        }
    };
    let mut port = [0u8; 2];
    if client.read_exact(&mut port).is_err() {
        return;
    }
    let port = u16::from_be_bytes(port);
    if req[1] != 1 {
        socks_reply(&mut client, SOCKS_COMMAND_UNSUPPORTED);
        return;
    }
    if !up.decide(&host, port, "socks5") {
        socks_reply(&mut client, SOCKS_NOT_ALLOWED);
        return;
    }
    match up.connect(&host, port) {
        Ok(upstream) => {
            socks_reply(&mut client, SOCKS_OK);
            let bytes = pipe(client, upstream, &[]);
            up.finished(&host, port, bytes, "socks5".into());
        }
        Err(e) => {
            socks_reply(&mut client, SOCKS_HOST_UNREACHABLE);
            up.finished(&host, port, 0, format!("socks5: upstream failed: {e}"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn authorities_split() {
        assert_eq!(
            split_authority("a.org:8080", 80),
            Some(("a.org".into(), 8080))
        );
        assert_eq!(split_authority("a.org", 80), Some(("a.org".into(), 80)));
        assert_eq!(split_authority("u:p@a.org", 80), Some(("a.org".into(), 80)));
        assert_eq!(
            split_authority("[::1]:443", 80),
            Some(("[::1]".into(), 443))
        );
        assert_eq!(split_authority("a.org:x", 80), None);
        assert_eq!(split_authority(":80", 80), None);
    }
}
