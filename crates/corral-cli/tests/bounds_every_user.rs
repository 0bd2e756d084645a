//! An ordinary user's unsandboxed call is bounded too (from root, the test becomes
//! `nobody`): a fork bomb stops at the bound and what it started ends with the call; an
//! allocation past the memory bound is ended, while runtimes that reserve far more address
//! space than they touch (V8, the JVM, Go) start and run under it; the report names the
//! bound that applies.

use crate::common;

use std::process::{Command, Output};
use std::time::Duration;

use common::{UserScratch, text, wait_bounded};

/// A hang, not a speed.
const HANG: Duration = Duration::from_secs(60);

fn output(mut cmd: Command, what: &str) -> Output {
    let out = tempfile::tempfile().unwrap();
    let err = tempfile::tempfile().unwrap();
    let mut child = cmd
        .stdout(out.try_clone().unwrap())
        .stderr(err.try_clone().unwrap())
        .spawn()
        .unwrap();
    let status = wait_bounded(&mut child, HANG, what);
    let read = |mut f: std::fs::File| {
        use std::io::{Read, Seek};
        let mut s = Vec::new();
        f.rewind().unwrap();
        f.read_to_end(&mut s).unwrap();
        s
    };
    Output {
        status,
        stdout: read(out),
        stderr: read(err),
    }
}

/// The processes whose command line holds `marker`.
fn with_marker(marker: &str) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        if String::from_utf8_lossy(&cmdline).contains(marker) {
            found.push(pid);
        }
    }
    found
}

/// An ordinary user's scratch, where the test runs as root (as anyone else, corral runs
/// as that user anyway, and it is the same check).
fn user() -> Option<UserScratch> {
    UserScratch::new()
}

#[test]
fn an_unsandboxed_fork_bomb_stops_at_the_bound_and_ends_with_the_call() {
    let Some(u) = user() else { return };
    // A sleep no other test starts, to find what outlived the call.
    let marker = "3011.5";
    let script = format!(
        "i=0; while [ $i -lt 3000 ]; do sleep {marker} & i=$((i+1)); done; echo all-started"
    );
    let out = output(
        u.corral(&["exec", "--sandbox", "full", "--", "sh", "-c", &script]),
        "a fork bomb",
    );
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(!stdout.contains("all-started"), "{stdout}{stderr}");
    let lower = stderr.to_lowercase();
    assert!(
        lower.contains("fork") || lower.contains("resource temporarily unavailable"),
        "{stdout}{stderr}"
    );
    let left = with_marker(marker);
    assert!(left.is_empty(), "{left:?} outlived the call: {stderr}");
}

#[test]
fn an_allocation_past_the_memory_bound_ends_while_runtimes_start_under_it() {
    let Some(u) = user() else { return };
    let run = |args: &[&str], what: &str| {
        let mut all = vec!["exec", "--sandbox", "full", "--memory", "1G", "--"];
        all.extend_from_slice(args);
        output(u.corral(&all), what)
    };
    // 3 GiB, touched: ended at the bound.
    let big = run(
        &[
            "node",
            "-e",
            "const b = Buffer.alloc(3 * 2 ** 30, 1); console.log('allocated', b.length)",
        ],
        "a 3 GiB allocation",
    );
    assert!(!big.status.success(), "{}", text(&big.stdout));
    assert!(
        !text(&big.stdout).contains("allocated"),
        "{}",
        text(&big.stdout)
    );
    // V8 reserves far more address space than the bound: it starts, and allocates
    // what fits.
    let node = run(
        &[
            "node",
            "-e",
            "const b = Buffer.alloc(64 * 2 ** 20, 1); console.log('node ran', b.length)",
        ],
        "node",
    );
    assert!(
        text(&node.stdout).contains("node ran"),
        "{}{}",
        text(&node.stdout),
        text(&node.stderr)
    );
    if Command::new("java").arg("-version").output().is_ok() {
        let java = run(&["java", "-XshowSettings:vm", "-version"], "a JVM");
        assert!(java.status.success(), "{}", text(&java.stderr));
        assert!(
            text(&java.stderr).contains("version"),
            "{}",
            text(&java.stderr)
        );
    } else {
        eprintln!("skipped the JVM: no java here");
    }
    if Command::new("go").arg("version").output().is_ok() {
        let go = run(&["go", "version"], "a Go program");
        assert!(go.status.success(), "{}", text(&go.stderr));
    } else {
        eprintln!("skipped the Go program: no go here");
    }
    // The report names the bound that applies.
    let report = output(u.corral(&["sandbox", "report"]), "the report");
    let report = text(&report.stdout);
    let memory = report
        .lines()
        .find(|l| l.trim_start().starts_with("memory"))
        .unwrap_or_default();
    assert!(
        memory.contains("memory.max")
            || memory.contains(
                "per process (RLIMIT_DATA), 1.0 GiB each; shared memory and files in /tmp \
                 not counted"
            )
            || memory.contains("per process (RLIMIT_DATA)"),
        "{report}"
    );
}
