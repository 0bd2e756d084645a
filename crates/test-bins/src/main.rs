//! `corral-testbin MODE [ARGS...]`: one small program with many behaviours, so that
//! corral's process tests depend on nothing installed on the host.
//!
//! Modes:
//! - `argv ARGS...`: print the arguments after the mode, Rust-debug-quoted, one list per line.
//! - `hex-argv ARGS...`: print each argument after the mode as hex bytes, one per line, so
//!   bytes that are not UTF-8 can be compared exactly.
//! - `hex-env NAME...`: print each named variable's value as hex bytes (`-` when unset), and
//!   then the names of every variable that is not UTF-8, as hex, after a `names:` line.
//! - `hex-pwd`: print the working directory as hex bytes.
//! - `spew OUT ERR [CHUNK]`: write OUT bytes to stdout and ERR bytes to stderr, alternating
//!   in CHUNK-sized writes (default 64 KiB), so a reader that drains one stream at a time
//!   deadlocks. Bytes are lines of `x` ending in `\n` every 64 bytes.
//! - `lines N [PREFIX]`: print N numbered lines, `PREFIX N`.
//! - `tick N MS [MARKER]`: print `tick I` every MS milliseconds, N times.
//! - `tree N MARKER`: N processes in all, every other leaf in a session of its own.
//! - `tick-time N MS`: print the wall clock in nanoseconds every MS milliseconds, N times.
//! - `stdin-len`: read stdin to its end and print how many bytes it held.
//! - `env`: print the environment, sorted, `NAME=VALUE` per line.
//! - `pwd`: print the working directory.
//! - `exit CODE`: exit with CODE.
//! - `signal SIG`: kill itself with signal number SIG.
//! - `sleep MS [--ignore-term] [MARKER]`: sleep; with `--ignore-term`, SIGTERM is ignored.
//!   MARKER only makes the process findable in `/proc/*/cmdline`.
//! - `pid-then-sleep MS`: print its pid, then sleep.
//! - `daemon MS MARKER`: start a grandchild in a new session that sleeps MS, then exit at once
//!   (a double fork: the grandchild is re-parented and outside the caller's process group).
//! - `pair MS MARKER [--ignore-term]`: start a child that sleeps MS in the same process group,
//!   then sleep MS itself (a two-process tree that stays in the caller's group).
//! - `bg-child MS MARKER`: start a child that sleeps MS with the same stdout, then exit at once.
//! - `stubborn-tree MS MARKER`: ignore SIGTERM, start a child that calls `setsid` and itself
//!   starts a grandchild; all three ignore SIGTERM and sleep MS.
//! - `fork-bomb MAX MARKER`: start children (each `sleep 60000 MARKER`) until starting one
//!   fails or MAX are running, print `started N`, then sleep 60 s.
//! - `respawn MS MARKER`: start two processes in a new session that restart each other when
//!   one dies (each runs at most MS in all), then exit at once.

#![forbid(unsafe_code)]
// Leaving children unreaped is the point of several modes: they model what corral must clean up.
#![allow(clippy::zombie_processes)]

use std::io::{self, Read, Write};
use std::process::{Command, ExitCode, Stdio};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

fn main() -> ExitCode {
    let os_args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    if let Some(done) = bytes_mode(&os_args) {
        return done;
    }
    let args: Vec<String> = os_args
        .into_iter()
        .map(|a| a.into_string().expect("arguments of this mode are UTF-8"))
        .collect();
    let Some((mode, rest)) = args.split_first() else {
        eprintln!("usage: corral-testbin MODE [ARGS...]");
        return ExitCode::from(2);
    };
    match mode.as_str() {
        "argv" => println!("{rest:?}"),
        "spew" => spew(
            num(rest, 0),
            num(rest, 1),
            rest.get(2).map_or(65536, |s| parse(s)),
        ),
        "lines" => {
            let prefix = rest.get(1).map_or("line", String::as_str);
            let mut out = io::BufWriter::new(io::stdout().lock());
            for i in 1..=num(rest, 0) {
                writeln!(out, "{prefix} {i}").unwrap();
            }
        }
        "tick" => {
            // `tick N MS [MARKER]`: print `tick I` every MS milliseconds, N times.
            for i in 1..=num(rest, 0) {
                println!("tick {i}");
                io::stdout().flush().unwrap();
                std::thread::sleep(Duration::from_millis(num(rest, 1)));
            }
        }
        "tree" => {
            // `tree N MARKER`: N processes in all; every other leaf in a session of its own.
            for i in 1..num(rest, 0) {
                Command::new(std::env::current_exe().unwrap())
                    .args(["tree-leaf", &i.to_string(), &rest[1]])
                    .stdin(Stdio::null())
                    .spawn()
                    .unwrap();
            }
            std::thread::sleep(Duration::from_secs(600));
        }
        "tree-leaf" => {
            if num(rest, 0) % 2 == 1 {
                let _ = rustix::process::setsid();
            }
            std::thread::sleep(Duration::from_secs(600));
        }
        "tick-time" => {
            // `tick-time N MS`: print the wall clock in nanoseconds every MS milliseconds.
            for _ in 0..num(rest, 0) {
                let now = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .unwrap();
                println!("{}", now.as_nanos());
                io::stdout().flush().unwrap();
                std::thread::sleep(Duration::from_millis(num(rest, 1)));
            }
        }
        "stdin-len" => {
            let mut buf = Vec::new();
            io::stdin().read_to_end(&mut buf).unwrap();
            println!("{}", buf.len());
        }
        "env" => {
            let mut vars: Vec<_> = std::env::vars_os().collect();
            vars.sort();
            for (k, v) in vars {
                println!("{}={}", k.to_string_lossy(), v.to_string_lossy());
            }
        }
        "pwd" => println!("{}", std::env::current_dir().unwrap().display()),
        "exit" => return ExitCode::from(num(rest, 0) as u8),
        "signal" => {
            let sig = rustix::process::Signal::from_named_raw(num(rest, 0) as i32)
                .expect("a known signal number");
            rustix::process::kill_process(rustix::process::getpid(), sig).unwrap();
            std::thread::sleep(Duration::from_secs(5));
        }
        "sleep" => {
            if rest.iter().any(|a| a == "--ignore-term") {
                ignore_term();
            }
            std::thread::sleep(Duration::from_millis(num(rest, 0)));
        }
        "pid-then-sleep" => {
            println!("{}", std::process::id());
            io::stdout().flush().unwrap();
            std::thread::sleep(Duration::from_millis(num(rest, 0)));
        }
        "daemon" => {
            // First fork: a child that starts its own session, then forks again and exits.
            Command::new(std::env::current_exe().unwrap())
                .args(["daemon-child", &rest[0], &rest[1]])
                .stdin(Stdio::null())
                .spawn()
                .unwrap()
                .wait()
                .unwrap();
        }
        "daemon-child" => {
            let _ = rustix::process::setsid();
            Command::new(std::env::current_exe().unwrap())
                .args(["sleep", &rest[0], &rest[1]])
                .stdin(Stdio::null())
                .spawn()
                .unwrap();
        }
        "pair" => {
            let ignore = rest.iter().any(|a| a == "--ignore-term");
            if ignore {
                ignore_term();
            }
            let mut child = Command::new(std::env::current_exe().unwrap());
            child
                .args(["sleep", &rest[0], &rest[1]])
                .stdin(Stdio::null());
            if ignore {
                child.arg("--ignore-term");
            }
            child.spawn().unwrap();
            std::thread::sleep(Duration::from_millis(num(rest, 0)));
        }
        "bg-child" => {
            Command::new(std::env::current_exe().unwrap())
                .args(["sleep", &rest[0], &rest[1]])
                .stdin(Stdio::null())
                .spawn()
                .unwrap();
        }
        "stubborn-tree" => {
            ignore_term();
            Command::new(std::env::current_exe().unwrap())
                .args(["setsid-sleep", &rest[0], &rest[1]])
                .stdin(Stdio::null())
                .spawn()
                .unwrap();
            std::thread::sleep(Duration::from_millis(num(rest, 0)));
        }
        "setsid-sleep" => {
            let _ = rustix::process::setsid();
            ignore_term();
            Command::new(std::env::current_exe().unwrap())
                .args(["sleep", &rest[0], &rest[1], "--ignore-term"])
                .stdin(Stdio::null())
                .spawn()
                .unwrap();
            std::thread::sleep(Duration::from_millis(num(rest, 0)));
        }
        "fork-bomb" => {
            let max = num(rest, 0);
            let mut started = 0u64;
            while started < max {
                let spawned = Command::new(std::env::current_exe().unwrap())
                    .args(["sleep", "60000", &rest[1]])
                    .stdin(Stdio::null())
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .spawn();
                match spawned {
                    Ok(_) => started += 1,
                    Err(_) => break,
                }
            }
            println!("started {started}");
            io::stdout().flush().unwrap();
            std::thread::sleep(Duration::from_secs(60));
        }
        "respawn" => {
            Command::new(std::env::current_exe().unwrap())
                .args(["respawn-peer", &rest[0], &rest[1], "first"])
                .stdin(Stdio::null())
                .spawn()
                .unwrap();
        }
        "respawn-peer" => respawn_peer(num(rest, 0), &rest[1], &rest[2]),
        other => {
            eprintln!("corral-testbin: unknown mode {other:?}");
            return ExitCode::from(2);
        }
    }
    ExitCode::SUCCESS
}

fn spew(mut out_left: u64, mut err_left: u64, chunk: u64) {
    let line: Vec<u8> = {
        let mut l = vec![b'x'; 63];
        l.push(b'\n');
        l
    };
    let block: Vec<u8> = line.iter().copied().cycle().take(chunk as usize).collect();
    let mut out = io::stdout().lock();
    let mut err = io::stderr().lock();
    while out_left > 0 || err_left > 0 {
        for (left, w) in [
            (&mut out_left, &mut out as &mut dyn Write),
            (&mut err_left, &mut err as &mut dyn Write),
        ] {
            let n = (*left).min(chunk);
            if n > 0 {
                w.write_all(&block[..n as usize]).unwrap();
                *left -= n;
            }
        }
    }
}

/// One of two processes that restart each other: the `first` starts a `second` and
/// restarts it whenever it exits; a `second` watches its parent, and when the parent is
/// gone starts a `second` of its own and watches that instead.
fn respawn_peer(ms: u64, marker: &str, role: &str) {
    let _ = rustix::process::setsid();
    let deadline = std::time::Instant::now() + Duration::from_millis(ms);
    let spawn = || {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        Command::new(std::env::current_exe().unwrap())
            .args([
                "respawn-peer",
                &left.as_millis().to_string(),
                marker,
                "second",
            ])
            .stdin(Stdio::null())
            .spawn()
            .ok()
    };
    let mut parent = (role == "second").then(rustix::process::getppid).flatten();
    let mut child = if role == "first" { spawn() } else { None };
    while std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
        if parent.is_some() && rustix::process::getppid() != parent {
            parent = None;
            child = spawn();
        }
        if let Some(c) = child.as_mut()
            && !matches!(c.try_wait(), Ok(None))
        {
            child = spawn();
        }
    }
}

fn ignore_term() {
    // Registering a flag replaces the default action (terminate) with "set a flag".
    signal_hook::flag::register(
        signal_hook::consts::SIGTERM,
        Arc::new(AtomicBool::new(false)),
    )
    .unwrap();
}

fn num(args: &[String], i: usize) -> u64 {
    args.get(i)
        .map_or_else(|| panic!("argument {i} is missing"), |s| parse(s))
}

fn parse(s: &str) -> u64 {
    s.parse()
        .unwrap_or_else(|_| panic!("{s:?} is not a number"))
}

/// The modes that read arguments and the environment as bytes; `None` for the others.
fn bytes_mode(args: &[std::ffi::OsString]) -> Option<ExitCode> {
    use std::os::unix::ffi::OsStrExt;
    let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
    let (mode, rest) = args.split_first()?;
    match mode.as_bytes() {
        b"hex-argv" => {
            for a in rest {
                println!("{}", hex(a.as_bytes()));
            }
        }
        b"hex-env" => {
            for name in rest {
                match std::env::var_os(name) {
                    Some(v) => println!("{}", hex(v.as_bytes())),
                    None => println!("-"),
                }
            }
            println!("names:");
            for (k, _) in std::env::vars_os() {
                if k.to_str().is_none() {
                    println!("{}", hex(k.as_bytes()));
                }
            }
        }
        b"hex-pwd" => println!(
            "{}",
            hex(std::env::current_dir().unwrap().as_os_str().as_bytes())
        ),
        _ => return None,
    }
    Some(ExitCode::SUCCESS)
}
