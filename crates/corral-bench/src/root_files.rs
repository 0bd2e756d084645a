//! What hiding root's files by their mode costs a sandboxed call's start as root: the
//! box as a run's first call makes it (a mount namespace, the read denies, a private
//! `/dev`, Landlock, seccomp), without and with the walk's mounts (each file under
//! `/etc`, `/var/lib`, `/srv`, `/opt` others may not read, each directory they may not
//! enter), `/bin/true` spawned interleaved in the same run; and the walk itself, done
//! once at a run's open. The paths come from the same rule as corral's
//! `sandbox::reach::root_files` (the report's mount count is printed beside this walk's, so
//! a drift shows).

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use corral_sys::sandbox::{self as sys, Spec};

use crate::stats::{micros, summarize};

const ROUNDS: usize = 300;
const ROOTS: &[&str] = &["/etc", "/var/lib", "/srv", "/opt"];

/// The walk's rule, as corral's: a directory others may not enter whole, a file they
/// may not read.
fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let Ok(meta) = entry.metadata() else { continue };
        if meta.is_dir() {
            if meta.mode() & 0o001 == 0 {
                out.push(entry.path());
            } else {
                walk(&entry.path(), out);
            }
        } else if meta.is_file() && meta.mode() & 0o004 == 0 {
            out.push(entry.path());
        }
    }
}

pub fn run() {
    // The process's own directory belongs to its effective user.
    if !std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0) {
        println!("skipped: the walk runs only as root");
        return;
    }
    let host = sys::host_support();
    if !host.namespaces {
        println!("skipped: no mount namespaces here");
        return;
    }
    let mut walks = Vec::new();
    let mut paths = Vec::new();
    for _ in 0..20 {
        paths.clear();
        let t = Instant::now();
        for root in ROOTS {
            walk(Path::new(root), &mut paths);
        }
        walks.push(t.elapsed());
    }
    let walk_time = summarize(&mut walks);
    let reported = corral::sandbox::enforcement::host_report()
        .layers
        .iter()
        .find_map(|l| {
            let at = l.detail.find("root's files: hidden by mode, ")?;
            let rest = &l.detail[at + "root's files: hidden by mode, ".len()..];
            rest.split_whitespace().next()?.parse::<usize>().ok()
        });
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let base = Spec {
        writable: vec![ws.clone()],
        writable_files: vec![PathBuf::from("/dev/null")],
        deny_read: ["/etc/shadow", "/etc/gshadow"]
            .iter()
            .map(PathBuf::from)
            .collect(),
        private_dev: true,
        drop_caps: true,
        ..Spec::default()
    };
    let mut deny = base.deny_read.clone();
    deny.extend(paths.iter().cloned());
    deny.sort();
    deny.dedup();
    let with_walk = Spec {
        deny_read: deny,
        ..base.clone()
    };
    let built: Vec<_> = [
        ("before (shadow files only)", base),
        ("with root's files by mode", with_walk),
    ]
    .into_iter()
    .map(|(name, spec)| {
        let (c, e) = sys::build(&spec, &host).unwrap();
        (name, c, e)
    })
    .collect();
    let spawn = |c: &sys::Confinement| {
        let mut cmd = Command::new("/bin/true");
        cmd.current_dir(&ws)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        sys::confine_before_exec(&mut cmd, c, None);
        assert!(cmd.status().unwrap().success());
    };
    for (_, c, _) in &built {
        for _ in 0..10 {
            spawn(c);
        }
    }
    let mut samples: Vec<Vec<Duration>> = vec![Vec::new(); built.len()];
    for _ in 0..ROUNDS {
        for (i, (_, c, _)) in built.iter().enumerate() {
            let t = Instant::now();
            spawn(c);
            samples[i].push(t.elapsed());
        }
    }
    let summaries: Vec<_> = samples.iter_mut().map(|s| summarize(s)).collect();
    let base_median = micros(summaries[0].median);
    println!(
        "the walk of {}: {} paths to hide (corral's report: {}), median {:.1} ms once per run",
        ROOTS.join(", "),
        paths.len(),
        reported.map_or_else(|| "no count".to_string(), |n| format!("{n} mounts")),
        micros(walk_time.median) / 1000.0
    );
    println!("rounds: {ROUNDS} each, interleaved; /bin/true with a mount namespace of its own");
    for ((name, _, e), s) in built.iter().zip(&summaries) {
        let median = micros(s.median);
        println!(
            "{name:<28} {:>4} read-deny mounts  median {median:8.1} µs  p95 {:8.1} µs  ({:.2}× before, {:+.1} µs)",
            e.read_denied,
            micros(s.p95),
            median / base_median,
            median - base_median
        );
    }
}
