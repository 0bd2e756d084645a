//! The probes a one-shot makes at every start, each timed cold in a fresh process (this
//! bench's binary as a worker, see `one_shot`), with what a per-boot cache of its answer
//! would be keyed by. Nothing here caches: the table is what such a cache would save and
//! what it would have to check.
//!
//! Which probe a one-shot makes was read from `strace -f` of `corral exec -- true` and of
//! `corral exec --sandbox workspace-write -- git status --short` (BENCHMARKS.md); the
//! code of each is named in its row. The cgroup probe is corral's own and private
//! (`crates/corral/src/spawn/cgroup.rs`): its reads and its group are made here with
//! `corral_sys::cgroup`, the same calls in the same order.

use std::path::Path;
use std::time::{Duration, Instant};

use corral_sys::cgroup;

use crate::stats::{micros, rounds, spread, summarize};

const ROUNDS: usize = 100;

/// A probe: its name, where it lives, which one-shots make it, what its answer depends on.
struct Probe {
    name: &'static str,
    code: &'static str,
    made_by: &'static str,
    key: &'static str,
    take: fn(),
}

const PROBES: &[Probe] = &[
    Probe {
        name: "cgroup host (mounts, own group, parent made, controllers)",
        code: "corral/src/spawn/cgroup.rs probe",
        made_by: "both",
        key: "boot id, uid, the process's own cgroup (/proc/self/cgroup)",
        take: cgroup_probe,
    },
    Probe {
        name: "clone3 into a cgroup (CLONE_INTO_CGROUP)",
        code: "corral-sys spawn::into_cgroup_supported",
        made_by: "both",
        key: "kernel release, boot id (a seccomp filter above: not cacheable)",
        take: into_cgroup,
    },
    Probe {
        name: "capabilities to join mounts (CapEff)",
        code: "corral/src/spawn/pid_namespace.rs may_join_mounts",
        made_by: "both",
        key: "the process's own CapEff (set by its parent: not cacheable by uid)",
        take: cap_eff,
    },
    Probe {
        name: "Landlock ABI (landlock_create_ruleset VERSION)",
        code: "corral-sys sandbox::landlock_abi",
        made_by: "sandboxed",
        key: "kernel release, boot id (lsm= on the command line)",
        take: landlock,
    },
    Probe {
        name: "host support (+ net/mount unshare in a child, seccomp, close_range, mount_setattr)",
        code: "corral-sys sandbox::host_support",
        made_by: "sandboxed",
        key: "kernel release, boot id, uid, the binary (AppArmor profiles attach by path), \
              kernel.unprivileged_userns_clone, user.max_user_namespaces, \
              kernel.apparmor_restrict_unprivileged_userns",
        take: host_support,
    },
    Probe {
        name: "user namespaces (a child tries unshare(CLONE_NEWUSER))",
        code: "corral-sys userns::probe",
        made_by: "sandboxed, as an ordinary user only",
        key: "as host support's",
        take: userns,
    },
    Probe {
        name: "the cache key itself (boot id, release, uid, binary, 4 sysctls)",
        code: "(what a cache would read instead)",
        made_by: "neither (a cache would)",
        key: "kernel.yama.ptrace_scope too: the exec check's tracer will depend on it",
        take: cache_key,
    },
];

fn cgroup_probe() {
    let Some(mounts) = cgroup::Mounts::read() else {
        return;
    };
    let Some(mount) = mounts.v2() else { return };
    let Some(base) = cgroup::own_path_v2().and_then(|own| cgroup::dir_of(&mount, &own)) else {
        return;
    };
    let parent = base.join(format!("corral-bench-probe-{}", std::process::id()));
    if cgroup::create(&parent).is_err() {
        return;
    }
    let _ = parent.join("cgroup.kill").exists()
        && cgroup::open_procs(&base).is_ok()
        && cgroup::open_procs(&parent).is_ok();
    for controller in ["pids", "memory"] {
        let _ = cgroup::controllers(&parent, "cgroup.controllers")
            .iter()
            .any(|c| c == controller)
            && cgroup::controllers(&parent, "cgroup.subtree_control")
                .iter()
                .any(|c| c == controller);
    }
    let _ = cgroup::remove(&parent);
}

fn into_cgroup() {
    corral_sys::spawn::into_cgroup_supported();
}

fn cap_eff() {
    let _ = std::fs::read_to_string("/proc/self/status");
}

fn landlock() {
    corral_sys::sandbox::landlock_abi();
}

fn host_support() {
    corral_sys::sandbox::host_support();
}

fn userns() {
    corral_sys::userns::probe();
}

/// What a per-boot cache would read to know its answers still hold.
fn cache_key() {
    use std::os::unix::fs::MetadataExt;
    let read = |p: &str| std::fs::read_to_string(p).ok();
    let _ = read("/proc/sys/kernel/random/boot_id");
    let _ = read("/proc/sys/kernel/osrelease");
    let _ = std::fs::metadata("/proc/self").map(|m| m.uid());
    let _ = std::fs::metadata("/proc/self/exe").map(|m| (m.dev(), m.ino(), m.mtime(), m.size()));
    for sysctl in [
        "kernel/unprivileged_userns_clone",
        "user/max_user_namespaces",
        "kernel/apparmor_restrict_unprivileged_userns",
        "kernel/yama/ptrace_scope",
    ] {
        let _ = read(&format!("/proc/sys/{sysctl}"));
    }
}

/// The worker's side: each probe once, cold, in the table's order; nanoseconds, one line.
pub(crate) fn worker() {
    let line: Vec<String> = PROBES
        .iter()
        .map(|probe| {
            let t = Instant::now();
            (probe.take)();
            t.elapsed().as_nanos().to_string()
        })
        .collect();
    println!("{}", line.join(" "));
}

/// What this host's key would be made of, as read now.
fn key_now() -> String {
    let read = |p: &str| {
        std::fs::read_to_string(Path::new("/proc/sys").join(p))
            .map_or_else(|_| "absent".to_string(), |s| s.trim().to_string())
    };
    format!(
        "release {}, boot id {}, unprivileged_userns_clone {}, max_user_namespaces {}, \
         apparmor_restrict_unprivileged_userns {}, ptrace_scope {}",
        read("kernel/osrelease"),
        read("kernel/random/boot_id"),
        read("kernel/unprivileged_userns_clone"),
        read("user/max_user_namespaces"),
        read("kernel/apparmor_restrict_unprivileged_userns"),
        read("kernel/yama/ptrace_scope"),
    )
}

pub fn run() {
    let rounds = rounds(ROUNDS);
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("unused.db");
    let mut samples: Vec<Vec<Duration>> = PROBES.iter().map(|_| Vec::new()).collect();
    for _ in 0..rounds {
        let (_, line) = crate::one_shot::run_worker("probes", dir.path(), &store);
        for (samples, ns) in samples.iter_mut().zip(line.split_whitespace()) {
            samples.push(Duration::from_nanos(ns.parse().unwrap()));
        }
    }
    println!("probes at a process's start, each cold in a fresh process, {rounds} processes");
    println!("this host: {}", key_now());
    for (probe, samples) in PROBES.iter().zip(&mut samples) {
        let s = summarize(samples);
        println!("  {}", probe.name);
        println!(
            "      {}   (made by: {}; {})",
            spread(s),
            probe.made_by,
            probe.code
        );
        println!("      per-boot cache key: {}", probe.key);
    }
    let sandboxed: f64 = PROBES
        .iter()
        .zip(&mut samples)
        .filter(|(p, _)| p.made_by == "both" || p.made_by == "sandboxed")
        .map(|(_, s)| micros(summarize(s).median))
        .sum();
    println!(
        "  a sandboxed one-shot's probes as root, medians added: {sandboxed:.1} µs (Landlock's counted twice: host support asks again)"
    );
}
