//! The Dockerfile, built and run with podman where this machine can: the image's
//! `corral sandbox report` names every layer with what the container lets it enforce, the
//! two capabilities deploy/ grants bring the namespaces back to the host's level, the
//! entrypoint refuses to listen without a token, and with one it serves MCP at /mcp behind
//! it. Where podman, or the base image, is missing the test says so and skips.
//!
//! No registry is pulled from (`--pull=never`): the Debian base must already be in
//! podman's store, and the binary comes from this build, imported as the image the
//! Dockerfile's `BUILDER` argument names instead of its Rust build stage.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

const BASE: &str = "docker.io/library/debian:bookworm-slim";

fn podman(args: &[&str]) -> Output {
    Command::new("podman")
        .args(args)
        .output()
        .expect("podman runs")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn ok(out: &Output, what: &str) -> String {
    assert!(
        out.status.success(),
        "{what} failed:\n{}\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    text(&out.stdout)
}

/// Why this machine cannot run the test, if it cannot.
fn cannot_run() -> Option<String> {
    match Command::new("podman").arg("--version").output() {
        Err(_) => return Some("podman is not installed (apt-get install podman)".into()),
        Ok(o) if !o.status.success() => return Some("podman does not run".into()),
        Ok(_) => {}
    }
    if !podman(&["image", "exists", BASE]).status.success() {
        return Some(format!(
            "{BASE} is not in podman's store and the test pulls from no registry: \
             `podman pull {BASE}`, or import a debootstrap'd bookworm under that name"
        ));
    }
    // Some hosts cannot start a container at all (crun on a hybrid cgroup layout, rlimits
    // the runtime may not set): say podman's own words.
    let probe = podman(&["run", "--rm", "--pull=never", BASE, "true"]);
    if !probe.status.success() {
        return Some(format!(
            "podman cannot start a container here: {}",
            text(&probe.stderr).trim()
        ));
    }
    None
}

/// A layer's level in a `corral sandbox report`.
fn level<'a>(report: &'a str, layer: &str) -> &'a str {
    let line = report
        .lines()
        .find(|l| l.trim_start().starts_with(layer))
        .unwrap_or_else(|| panic!("no {layer} line in:\n{report}"));
    line.trim_start()[layer.len()..]
        .split_whitespace()
        .next()
        .unwrap_or("")
}

/// Removes what the test made, however it ends.
struct Cleanup(Vec<Vec<String>>);

impl Drop for Cleanup {
    fn drop(&mut self) {
        for args in self.0.iter().rev() {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let _ = podman(&args);
        }
    }
}

fn http(port: u16, request: &str) -> std::io::Result<String> {
    let mut s = TcpStream::connect(("127.0.0.1", port))?;
    s.set_read_timeout(Some(Duration::from_secs(10)))?;
    s.write_all(request.as_bytes())?;
    let mut reply = Vec::new();
    let mut buf = [0u8; 4096];
    // Read until the headers and a first chunk of body are in (the server keeps the
    // connection open for SSE); a closed connection ends it too.
    loop {
        let n = s.read(&mut buf)?;
        if n == 0 {
            break;
        }
        reply.extend_from_slice(&buf[..n]);
        let r = text(&reply);
        if let Some(i) = r.find("\r\n\r\n")
            && (r.starts_with("HTTP/1.1 4") || r[i..].contains("serverInfo"))
        {
            break;
        }
    }
    Ok(text(&reply))
}

fn post(port: u16, token: Option<&str>, body: &str) -> std::io::Result<String> {
    let auth = token
        .map(|t| format!("Authorization: Bearer {t}\r\n"))
        .unwrap_or_default();
    http(
        port,
        &format!(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\n{auth}Content-Length: {}\r\n\r\n{body}",
            body.len()
        ),
    )
}

#[test]
fn the_image_reports_its_sandbox_and_serves_mcp_behind_a_token() {
    if let Some(why) = cannot_run() {
        // Straight to stderr, past the harness's capture, so the skip is seen.
        let _ = writeln!(
            std::io::stderr(),
            "container_image: SKIPPED: the container image was not built: {why}"
        );
        return;
    }
    let tag = format!("i{}", std::process::id());
    let binary_image = format!("localhost/corral-test-binary:{tag}");
    let image = format!("localhost/corral-test:{tag}");
    let name = format!("corral-test-{tag}");
    let mut cleanup = Cleanup(Vec::new());

    // The binary this build made, as an image holding /usr/local/bin/corral.
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("usr/local/bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::copy(env!("CARGO_BIN_EXE_corral"), bin.join("corral")).unwrap();
    let tar = dir.path().join("binary.tar");
    let status = Command::new("tar")
        .arg("-C")
        .arg(dir.path())
        .arg("-cf")
        .arg(&tar)
        .arg("usr")
        .status()
        .unwrap();
    assert!(status.success());
    ok(
        &podman(&["import", tar.to_str().unwrap(), &binary_image]),
        "podman import",
    );
    cleanup
        .0
        .push(vec!["rmi".into(), "-f".into(), binary_image.clone()]);

    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let root = root.canonicalize().unwrap();
    let build = podman(&[
        "build",
        "--pull=never",
        "--build-arg",
        &format!("BUILDER={binary_image}"),
        "--build-arg",
        "EXTRA_PACKAGES=",
        "-t",
        &image,
        "-f",
        root.join("Dockerfile").to_str().unwrap(),
        root.to_str().unwrap(),
    ]);
    ok(&build, "podman build");
    cleanup
        .0
        .push(vec!["rmi".into(), "-f".into(), image.clone()]);

    // An unprivileged container: the report names every layer and what it got.
    let report = podman(&[
        "run",
        "--rm",
        "--entrypoint",
        "/usr/local/bin/corral",
        &image,
        "sandbox",
        "report",
    ]);
    let report = ok(&report, "corral sandbox report in the container");
    println!("corral sandbox report in an unprivileged container:\n{report}");
    assert!(report.starts_with("what this host enforces"), "{report}");
    for layer in [
        "landlock",
        "network",
        "seccomp",
        "launch hygiene",
        "pid namespace",
    ] {
        let level = level(&report, layer);
        assert!(
            matches!(level, "full" | "partial" | "none"),
            "{layer}: {level}"
        );
    }

    // With the two capabilities deploy/ gives (and nothing else), the namespaces come
    // back: each as strong as corral gets outside any container on this host.
    let granted = podman(&[
        "run",
        "--rm",
        "--cap-drop",
        "ALL",
        "--cap-add",
        "SYS_ADMIN,SYS_CHROOT",
        "--entrypoint",
        "/usr/local/bin/corral",
        &image,
        "sandbox",
        "report",
    ]);
    let granted = ok(
        &granted,
        "corral sandbox report with SYS_ADMIN and SYS_CHROOT",
    );
    let host = Command::new(env!("CARGO_BIN_EXE_corral"))
        .args(["sandbox", "report"])
        .output()
        .unwrap();
    let host = ok(&host, "corral sandbox report on the host");
    for layer in ["network", "pid namespace"] {
        assert_eq!(
            level(&granted, layer),
            level(&host, layer),
            "{layer}: in the container\n{granted}\non the host\n{host}"
        );
    }

    // Off loopback without a token the entrypoint refuses to start, and says what to give.
    let refused = podman(&["run", "--rm", &image]);
    assert!(!refused.status.success());
    assert!(
        text(&refused.stderr).contains("CORRAL_MCP_TOKEN"),
        "{}",
        text(&refused.stderr)
    );

    // With a token it serves MCP on the published port.
    // 32 characters at least, as every token.
    let token = format!("t{tag}secret-0123456789abcdef-0123456789");
    let run = podman(&[
        "run",
        "-d",
        "--name",
        &name,
        "-p",
        "127.0.0.1::8080",
        "-e",
        &format!("CORRAL_MCP_TOKEN={token}"),
        &image,
    ]);
    ok(&run, "podman run -d");
    cleanup.0.push(vec!["rm".into(), "-f".into(), name.clone()]);
    let port = ok(&podman(&["port", &name, "8080"]), "podman port");
    let port: u16 = port
        .trim()
        .rsplit(':')
        .next()
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no published port in {port:?}"));

    // Follow the container's log until corral says it listens.
    let mut follow = Command::new("podman")
        .args(["logs", "-f", &name])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut log = String::new();
    for line in BufReader::new(follow.stderr.take().unwrap()).lines() {
        let line = line.unwrap();
        log.push_str(&line);
        log.push('\n');
        if line.contains("one run per session") {
            break;
        }
    }
    let _ = follow.kill();
    let _ = follow.wait();
    assert!(
        log.contains("listening on http://0.0.0.0:8080/mcp"),
        "{log}"
    );
    assert!(log.contains("a bearer token is required"), "{log}");

    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"image-test","version":"1"}}}"#;
    let unauthorized = post(port, None, init).unwrap();
    assert!(unauthorized.starts_with("HTTP/1.1 401"), "{unauthorized}");
    assert!(
        unauthorized
            .to_ascii_lowercase()
            .contains("www-authenticate: bearer"),
        "{unauthorized}"
    );
    let served = post(port, Some(&token), init).unwrap();
    assert!(served.starts_with("HTTP/1.1 200"), "{served}");
    assert!(
        served.to_ascii_lowercase().contains("mcp-session-id:"),
        "{served}"
    );
    assert!(served.contains("\"serverInfo\""), "{served}");
}
