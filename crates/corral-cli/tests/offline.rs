//! With the network off, a package manager fails at once and the result says how to open
//! it: real npm, pip and cargo, sandboxed in `workspace-write`, as root and as an
//! ordinary user. The bound on each is a hang check (a retried `EAI_AGAIN` took npm
//! minutes); the real time is printed, and goes to BENCHMARKS.md.

use crate::common;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use common::{Scratch, UserScratch, chown_tree, is_root, text, wait_bounded};

/// A hang, not a speed: each manager takes well under a second here.
const HANG: Duration = Duration::from_secs(30);

/// Whether `program` runs here.
fn have(program: &str, arg: &str) -> bool {
    Command::new(program)
        .arg(arg)
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Run `cmd`, bounded by [`HANG`]; its status, stdout and stderr, and how long it took.
fn timed(mut cmd: Command, what: &str) -> (std::process::ExitStatus, String, String, Duration) {
    let started = Instant::now();
    let out_file = tempfile::tempfile().unwrap();
    let err_file = tempfile::tempfile().unwrap();
    let mut child = cmd
        .stdout(out_file.try_clone().unwrap())
        .stderr(err_file.try_clone().unwrap())
        .spawn()
        .unwrap();
    let status = wait_bounded(&mut child, HANG, what);
    let took = started.elapsed();
    let read = |mut f: std::fs::File| {
        use std::io::{Read, Seek};
        let mut s = Vec::new();
        f.rewind().unwrap();
        f.read_to_end(&mut s).unwrap();
        text(&s)
    };
    (status, read(out_file), read(err_file), took)
}

/// Where a test runs corral: as the test's user, and (as root) as an ordinary one too.
enum Who {
    Me(Scratch),
    User(UserScratch),
}

impl Who {
    fn all() -> Vec<Who> {
        let mut all = vec![Who::Me(Scratch::new())];
        if is_root()
            && let Some(u) = UserScratch::new()
        {
            all.push(Who::User(u));
        }
        all
    }

    fn name(&self) -> &'static str {
        match self {
            Who::Me(_) if is_root() => "root",
            Who::Me(_) => "this user",
            Who::User(_) => "an ordinary user",
        }
    }

    fn workspace(&self) -> std::path::PathBuf {
        match self {
            Who::Me(s) => s.workspace(),
            Who::User(u) => u.workspace(),
        }
    }

    /// Files written for the test handed to the ordinary user.
    fn hand_over(&self) {
        if let Who::User(u) = self {
            chown_tree(u.s.dir.path(), common::UNPRIVILEGED);
        }
    }

    fn corral(&self, args: &[&str]) -> Command {
        match self {
            Who::Me(s) => s.corral(args),
            Who::User(u) => u.corral(args),
        }
    }
}

/// Run `argv` sandboxed with the network off in each [`Who`]'s workspace (set up by
/// `setup`), and check it fails within [`HANG`] naming `allow=WORD`.
fn fails_fast_naming(manager: &str, word: &str, setup: impl Fn(&Path), argv: &[&str]) {
    for who in Who::all() {
        let program = argv.iter().find(|a| !a.contains('=') && **a != "env");
        if let (Who::User(u), Some(program)) = (&who, program)
            && !u
                .corral(&["exec", "--", program, "--version"])
                .output()
                .is_ok_and(|o| o.status.success())
        {
            eprintln!("skipped as an ordinary user: {program} is out of its reach here");
            continue;
        }
        setup(&who.workspace());
        who.hand_over();
        let mut args = vec!["exec", "--yes", "--sandbox", "workspace-write", "--"];
        args.extend_from_slice(argv);
        let (status, out, err, took) = timed(who.corral(&args), manager);
        eprintln!(
            "{manager} as {}, network off: failed in {:.2} s",
            who.name(),
            took.as_secs_f64()
        );
        assert!(!status.success(), "{manager} as {}: {out}{err}", who.name());
        assert!(
            err.contains(&format!("--network allow={word}")),
            "{manager} as {} should name allow={word}: {out}{err}",
            who.name()
        );
    }
}

#[test]
fn npm_install_fails_at_once_naming_allow_npm() {
    if !have("npm", "--version") {
        return common::skip("no npm here");
    }
    fails_fast_naming(
        "npm install",
        "npm",
        |ws| {
            std::fs::write(
                ws.join("package.json"),
                r#"{"name":"offline","version":"1.0.0","dependencies":{"left-pad":"1.3.0"}}"#,
            )
            .unwrap();
        },
        &["npm", "install", "--no-audit", "--no-fund"],
    );
}

#[test]
fn pip_install_fails_at_once_naming_allow_pypi() {
    if !have("python3", "--version") {
        return common::skip("no python3 here");
    }
    // A name no local wheel directory has; nothing is cached.
    fails_fast_naming(
        "pip download",
        "pypi",
        |_| {},
        &[
            "python3",
            "-m",
            "pip",
            "download",
            "--no-cache-dir",
            "-d",
            "dl",
            "corral-offline-check-nonexistent",
        ],
    );
}

#[test]
fn cargo_fetch_fails_at_once_naming_allow_crates() {
    if !have("cargo", "--version") {
        return common::skip("no cargo here");
    }
    fails_fast_naming(
        "cargo fetch",
        "crates",
        |ws| {
            std::fs::create_dir_all(ws.join("src")).unwrap();
            std::fs::write(
                ws.join("Cargo.toml"),
                "[package]\nname = \"offline\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n\
                 [dependencies]\nitoa = \"1\"\n",
            )
            .unwrap();
            std::fs::write(ws.join("src/main.rs"), "fn main() {}\n").unwrap();
            // An empty CARGO_HOME in the workspace: nothing is cached.
            std::fs::create_dir_all(ws.join("cargo-home")).unwrap();
        },
        &["env", "CARGO_HOME=cargo-home", "cargo", "fetch"],
    );
}

/// A lookup fails as "no such name" (`EAI_NONAME`, which clients do not retry), never as
/// a temporary failure (`EAI_AGAIN`): for an address, an IPv6-only and a search-domain
/// (one-label) name alike. A direct connection to an address fails at once too.
#[test]
fn lookups_are_nxdomain_and_connections_fail_at_once() {
    if !have("python3", "--version") {
        return common::skip("no python3 here");
    }
    let script = r#"
import socket
for name, family in [("registry.npmjs.org", 0), ("example.com", socket.AF_INET6), ("intranet", 0)]:
    try:
        socket.getaddrinfo(name, 443, family)
        print(name, "resolved")
    except socket.gaierror as e:
        print(name, "noname" if e.errno == socket.EAI_NONAME else "again" if e.errno == socket.EAI_AGAIN else e.errno)
s = socket.socket()
s.settimeout(20)
try:
    s.connect(("93.184.216.34", 443))
    print("connected")
except OSError as e:
    print("connect failed", e.errno)
"#;
    for who in Who::all() {
        let (status, out, err, took) = timed(
            who.corral(&[
                "exec",
                "--yes",
                "--sandbox",
                "workspace-write",
                "--",
                "python3",
                "-c",
                script,
            ]),
            "lookups",
        );
        eprintln!("lookups as {}: {:.2} s", who.name(), took.as_secs_f64());
        assert!(status.success(), "{out}{err}");
        let line = |name: &str| {
            out.lines()
                .find(|l| l.starts_with(name))
                .unwrap_or_default()
                .to_string()
        };
        // Where the run has a resolver (a run network namespace and its own /tmp), every
        // name is NXDOMAIN; never resolved either way.
        for name in ["registry.npmjs.org ", "example.com ", "intranet "] {
            let l = line(name);
            assert!(!l.contains("resolved"), "{}: {out}", who.name());
            if who_has_resolver(&who) {
                assert!(l.ends_with("noname"), "{}: {l}: {out}{err}", who.name());
            }
        }
        assert!(!line("connect failed").is_empty(), "{}: {out}", who.name());
    }
}

/// Whether the run's boxes here get corral's resolver: its file is their resolv.conf.
fn who_has_resolver(who: &Who) -> bool {
    let out = who
        .corral(&[
            "exec",
            "--yes",
            "--sandbox",
            "workspace-write",
            "--",
            "cat",
            "/etc/resolv.conf",
        ])
        .output()
        .unwrap();
    text(&out.stdout).contains("corral: the network is off")
}
