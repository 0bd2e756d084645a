//! A sandboxed `corral mcp` call as an ordinary user against the same call as root,
//! alternating call by call in one run: the price of building the box inside a user
//! namespace (the PID namespace's init and each command born there through a helper, the
//! mounts made per stage, forks bounded by `RLIMIT_NPROC` rather than a cgroup).
//!
//! Run as root: the user side is the same `corral` binary started through `setpriv` as
//! uid 65534 (`nobody`), with a home, workspace and store of its own; both servers run
//! `exec ["true"]` on their defaults (`workspace-write`, network off, every confinement
//! layer enforced, nothing asked). Elsewhere the bench says it skipped.

use std::fs::Permissions;
use std::os::unix::fs::{PermissionsExt, chown};
use std::path::Path;
use std::process::Command;

use serde_json::json;

use crate::mcp_peer::Server;
use crate::stats::{micros, summarize};

const ROUNDS: usize = 200;
const USER: u32 = 65534;

pub fn run() {
    if !is_root() {
        println!("skipped: run as root; the user side becomes uid {USER} through setpriv");
        return;
    }
    let corral = crate::mcp_roundtrip::corral_binary();
    let dir = tempfile::tempdir().unwrap();
    let root_side = dir.path().join("root");
    let user_side = dir.path().join("user");
    for side in [&root_side, &user_side] {
        for sub in ["ws", "home", "state"] {
            std::fs::create_dir_all(side.join(sub)).unwrap();
        }
    }
    // The user passes through the scratch's root and owns its own side.
    chown_tree(&user_side, USER);
    std::fs::set_permissions(dir.path(), Permissions::from_mode(0o711)).unwrap();

    let server = |side: &Path, as_user: bool| {
        let mut cmd = if as_user {
            let id = USER.to_string();
            let mut cmd = Command::new("setpriv");
            cmd.args(["--reuid", &id, "--regid", &id, "--clear-groups", "--"])
                .arg(&corral);
            cmd
        } else {
            Command::new(&corral)
        };
        cmd.arg("mcp")
            .arg("--workspace")
            .arg(side.join("ws"))
            .current_dir(side.join("ws"))
            .env("HOME", side.join("home"))
            .env("XDG_STATE_HOME", side.join("state"))
            .env("CORRAL_STORE", side.join("state/trace.db"));
        Server::start(cmd)
    };
    let mut root = server(&root_side, false);
    let mut user = server(&user_side, true);
    let args = json!({"argv": ["true"]});
    for _ in 0..20 {
        root.call("exec", &args);
        user.call("exec", &args);
    }
    let mut samples = [Vec::new(), Vec::new()];
    let mut ratios = Vec::new();
    for _ in 0..ROUNDS {
        let r = root.call("exec", &args);
        let u = user.call("exec", &args);
        ratios.push(u.as_secs_f64() / r.as_secs_f64());
        samples[0].push(r);
        samples[1].push(u);
    }
    // What each side's box was, as its result says it.
    let containment = |server: &mut Server| -> String {
        let result = server.request(
            "tools/call",
            json!({"name": "exec", "arguments": {"argv": ["true"]}}),
        );
        let observation = result["structuredContent"]["observation"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        observation
            .lines()
            .find(|l| l.starts_with("sandbox"))
            .unwrap_or("no sandbox line")
            .to_string()
    };
    let (root_unit, user_unit) = (containment(&mut root), containment(&mut user));
    let [r, u] = samples.map(|mut v| summarize(&mut v));
    ratios.sort_by(f64::total_cmp);
    println!("rounds: {ROUNDS} each, alternating, sequential; exec [\"true\"], workspace-write");
    for (name, x, unit) in [("as root", r, root_unit), ("as uid 65534", u, user_unit)] {
        println!(
            "{name:<14} median {:8.1} µs   p95 {:8.1} µs",
            micros(x.median),
            micros(x.p95)
        );
        println!("  {unit}");
    }
    println!(
        "user / root: {:.2}x of the medians, {:.2}x the median pair (goal: <= 1.10x)",
        micros(u.median) / micros(r.median),
        ratios[ratios.len() / 2]
    );
}

fn chown_tree(path: &Path, uid: u32) {
    chown(path, Some(uid), Some(uid)).unwrap();
    if path.is_dir() {
        for entry in std::fs::read_dir(path).unwrap() {
            chown_tree(&entry.unwrap().path(), uid);
        }
    }
}

/// Whether this process runs as root (its real uid, from `/proc/self/status`).
fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status").is_ok_and(|s| {
        s.lines()
            .find_map(|l| l.strip_prefix("Uid:"))
            .and_then(|ids| ids.split_whitespace().next().map(|id| id == "0"))
            .unwrap_or(false)
    })
}
