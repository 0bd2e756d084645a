//! The floors under the two one-shots: what the least a process could do for the same
//! call costs here, measured with public tools, alternating with corral's calls in the
//! same rounds.
//!
//! - `corral exec -- true`: corral's binary start and exit (`corral --version`), the
//!   store's open and two committed rows (`corral_trace::Store`, opened afresh each round
//!   and its log kept, as the command line does), and one spawn of `true` (std's
//!   `Command`, a `clone3` with `CLONE_VFORK` through the C library's `posix_spawn`).
//! - `corral exec --sandbox workspace-write -- git status --short`: `unshare -mnpif
//!   --mount-proc git status --short` (mount, network, PID and IPC namespaces, a fork, a
//!   `/proc` of its own; `unshare`'s own start standing for corral's), the box's own
//!   mounts (as many bind mounts as `/proc/self/mountinfo` shows the box adding to the
//!   host's, made in a mount namespace of their own by a Python child through `ctypes`,
//!   timed inside it), and the store's open and two rows. As root the box makes no user
//!   namespace; `unshare -U…` is measured beside it, for what an ordinary user's box
//!   starts from.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use corral_trace::{NewRun, Store};

use crate::one_shot::{Shot, git_repo, wall};
use crate::stats::{Summary, micros, rounds, spread, summarize};

const ROUNDS: usize = 100;

/// Bind-mount each directory named after `argv[2]` over itself, in this mount namespace;
/// print how long the mounts took, in nanoseconds.
const MOUNTS: &str = r#"
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
n, base = int(sys.argv[1]), sys.argv[2]
dirs = [os.path.join(base, str(i)).encode() for i in range(n)]
MS_BIND = 4096
t = time.perf_counter_ns()
for d in dirs:
    if libc.mount(d, d, None, MS_BIND, None) != 0:
        sys.exit("mount: " + os.strerror(ctypes.get_errno()))
print(time.perf_counter_ns() - t)
"#;

/// How many mounts the box adds to the host's: its `/proc/self/mountinfo` against ours.
fn box_mounts(corral: &Path, repo: &Path, store: &Path) -> usize {
    let out = Command::new(corral)
        .args(["exec", "--sandbox", "workspace-write", "--"])
        .args(["cat", "/proc/self/mountinfo"])
        .current_dir(repo)
        .env("CORRAL_STORE", store)
        .stderr(Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success());
    let inside = out
        .stdout
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .count();
    let host = std::fs::read_to_string("/proc/self/mountinfo")
        .unwrap()
        .lines()
        .count();
    inside.saturating_sub(host)
}

/// The store's open, a run's row and its end, each committed; closed as the command line
/// leaves it (its log kept).
fn store_and_two_rows(path: &Path, round: usize) -> Duration {
    let t = Instant::now();
    let store = Store::open(path).unwrap();
    store.keep_log_on_close().unwrap();
    let id = format!("floor{round}");
    store
        .begin_run(&NewRun {
            id: id.clone(),
            workspace: "/ws".into(),
            started_at_ms: 1,
            pid: std::process::id(),
            config_json: "{}".into(),
        })
        .unwrap();
    store.end_run(&id, 2, "closed").unwrap();
    drop(store);
    t.elapsed()
}

/// The Python child's time for `n` bind mounts, or `None` where it cannot make them.
fn mounts(n: usize, base: &Path) -> Option<Duration> {
    let out = Command::new("unshare")
        .args(["-m", "--propagation", "private", "python3", "-c", MOUNTS])
        .arg(n.to_string())
        .arg(base)
        .stderr(Stdio::null())
        .output()
        .ok()?;
    let ns = String::from_utf8(out.stdout).ok()?.trim().parse().ok()?;
    out.status.success().then_some(Duration::from_nanos(ns))
}

fn unshare(flags: &str, argv: &[&str], cwd: &Path) -> Command {
    let mut cmd = Command::new("unshare");
    cmd.arg(flags)
        .arg("--mount-proc")
        .args(argv)
        .current_dir(cwd);
    cmd
}

pub fn run() {
    let rounds = rounds(ROUNDS);
    let corral = crate::mcp_roundtrip::corral_binary();
    let dir = tempfile::tempdir().unwrap();
    let repo = git_repo(dir.path());
    let ws = dir.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    let cli_store = dir.path().join("cli.db");
    let floor_store = dir.path().join("floor.db");
    let n = box_mounts(&corral, &repo, &cli_store);
    let targets = dir.path().join("mounts");
    for i in 0..n {
        std::fs::create_dir_all(targets.join(i.to_string())).unwrap();
    }
    let git = Shot::Sandboxed.argv();
    let with_userns = unshare("-Urmnpif", &["true"], &ws)
        .status()
        .is_ok_and(|s| s.success());
    let namespaces = unshare("-mnpif", &["true"], &ws)
        .status()
        .is_ok_and(|s| s.success());
    if !namespaces || mounts(n, &targets).is_none() {
        println!("skipped: needs root, unshare(1) and python3 (namespaces and mounts)");
        return;
    }
    let names = [
        "corral --version",
        "store open + two committed rows",
        "spawn and reap /bin/true (std Command)",
        "unshare -mnpif --mount-proc true",
        "unshare -Urmnpif --mount-proc true",
        "unshare -mnpif --mount-proc git status --short",
        "git status --short alone (std Command)",
        "the box's bind mounts, in a mount namespace",
        "corral exec -- true",
        "corral exec --sandbox workspace-write -- git status --short",
    ];
    let mut samples: Vec<Vec<Duration>> = names.iter().map(|_| Vec::new()).collect();
    for round in 0..rounds + 5 {
        let mut took = vec![
            wall(Command::new(&corral).arg("--version")),
            store_and_two_rows(&floor_store, round),
            wall(&mut Command::new("/bin/true")),
            wall(&mut unshare("-mnpif", &["true"], &ws)),
        ];
        took.push(if with_userns {
            wall(&mut unshare("-Urmnpif", &["true"], &ws))
        } else {
            Duration::ZERO
        });
        took.push(wall(&mut unshare("-mnpif", git, &repo)));
        took.push(wall(
            Command::new(git[0]).args(&git[1..]).current_dir(&repo),
        ));
        took.push(mounts(n, &targets).unwrap());
        took.push(wall(
            Command::new(&corral)
                .args(Shot::Bare.cli_args())
                .current_dir(&ws)
                .env("CORRAL_STORE", &cli_store),
        ));
        took.push(wall(
            Command::new(&corral)
                .args(Shot::Sandboxed.cli_args())
                .current_dir(&repo)
                .env("CORRAL_STORE", &cli_store),
        ));
        if round >= 5 {
            for (samples, t) in samples.iter_mut().zip(took) {
                samples.push(t);
            }
        }
    }
    let s: Vec<Summary> = samples.iter_mut().map(|s| summarize(s)).collect();
    println!("rounds: {rounds}, alternating, each process fresh; the box adds {n} mounts");
    for (name, s) in names.iter().zip(&s) {
        if *name == names[4] && !with_userns {
            println!("  {name:<60} (user namespaces refused here)");
            continue;
        }
        println!("  {name:<60} {}", spread(*s));
    }
    let m = |i: usize| micros(s[i].median);
    let floor_true = m(0) + m(1) + m(2);
    let floor_box = m(5) + m(7) + m(1);
    println!("floors (medians added):");
    println!(
        "  corral exec -- true: --version + store + spawn          {floor_true:8.1} µs; corral {:8.1} µs ({:.2}x the floor)",
        m(8),
        m(8) / floor_true
    );
    println!(
        "  sandboxed git status: unshare … git + {n} mounts + store  {floor_box:8.1} µs; corral {:8.1} µs ({:.2}x the floor)",
        m(9),
        m(9) / floor_box
    );
    println!(
        "  the namespaces alone: unshare -mnpif true - spawn of true {:8.1} µs; with -U, {:8.1} µs",
        m(3) - m(2),
        m(4) - m(2)
    );
}
