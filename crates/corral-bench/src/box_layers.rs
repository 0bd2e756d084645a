//! What the box's newer layers cost one sandboxed spawn that makes its own mounts (a
//! run's first sandboxed call, and any call whose mounts are not shared): the base box
//! (a mount namespace, the read denies, a private `/dev`, Landlock, seccomp), then with
//! the host read-only and a `/tmp` and runtime directory of the run's own, then joining
//! the run's IPC namespace instead of none, then with 20 socket files hidden. `/bin/true`
//! spawned through `std::process::Command` with the confinement's hook, interleaved, as
//! root (or in the boxes' user namespace). Later calls copy these mounts from the run's
//! sandbox mounts and pay for them once per run: `sandbox-overhead` measures those.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Instant;

use corral_sys::sandbox::{self as sys, IpcNamespace, Spec};

use crate::stats::{micros, summarize};

const ROUNDS: usize = 300;
const SOCKETS: usize = 20;

pub fn run() {
    let host = sys::host_support();
    if !host.namespaces || !host.mount_setattr {
        println!("skipped: no mount namespaces or no mount_setattr here");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    let own_tmp = dir.path().join("run/tmp");
    let own_runtime = dir.path().join("run/runtime");
    let runtime = dir.path().join("runtime");
    for d in [&ws, &own_tmp, &own_runtime, &runtime] {
        std::fs::create_dir_all(d).unwrap();
    }
    // Socket files outside the box's own directories, as a host's `/run` holds them.
    let sockets_dir = tempfile::tempdir_in("/var/tmp").unwrap();
    let listeners: Vec<_> = (0..SOCKETS)
        .map(|i| {
            std::os::unix::net::UnixListener::bind(sockets_dir.path().join(format!("{i}.sock")))
                .unwrap()
        })
        .collect();
    let sockets: Vec<PathBuf> = (0..SOCKETS)
        .map(|i| sockets_dir.path().join(format!("{i}.sock")))
        .collect();
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let deny: Vec<PathBuf> = [".ssh", ".aws", ".kube"]
        .iter()
        .filter_map(|d| home.as_ref().map(|h| h.join(d)))
        .filter(|p| p.exists())
        .collect();
    let base = Spec {
        writable: vec![ws.clone()],
        writable_files: vec![PathBuf::from("/dev/null")],
        deny_read: deny,
        private_dev: true,
        drop_caps: true,
        unix_sockets: true,
        ..Spec::default()
    };
    let read_only = Spec {
        writable: vec![ws.clone(), own_tmp.clone(), own_runtime.clone()],
        writable_mounts: vec![ws.clone()],
        visible: vec![ws.clone()],
        own_tmp: Some(own_tmp.clone()),
        own_runtime: Some((own_runtime.clone(), runtime.clone())),
        ..base.clone()
    };
    let ipc = IpcNamespace::create().unwrap();
    let with_ipc = Spec {
        join_ipc: Some(ipc),
        ..read_only.clone()
    };
    let with_sockets = Spec {
        hide_sockets: sockets,
        ..with_ipc.clone()
    };
    let variants = [
        ("base box", base),
        ("+ read-only host, own /tmp", read_only),
        ("+ the run's IPC namespace", with_ipc),
        ("+ 20 socket files hidden", with_sockets),
    ];
    let built: Vec<_> = variants
        .iter()
        .map(|(name, spec)| {
            let (confinement, enforced) = sys::build(spec, &host).unwrap();
            (*name, confinement, enforced)
        })
        .collect();
    let spawn = |c: &sys::Confinement| {
        let mut cmd = Command::new("/bin/true");
        cmd.current_dir(&ws)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        sys::confine_before_exec(&mut cmd, c, None);
        let status = cmd.status().unwrap();
        assert!(status.success());
    };
    for (_, c, _) in &built {
        for _ in 0..10 {
            spawn(c);
        }
    }
    let mut samples: Vec<Vec<std::time::Duration>> = vec![Vec::new(); built.len()];
    for _ in 0..ROUNDS {
        for (i, (_, c, _)) in built.iter().enumerate() {
            let t = Instant::now();
            spawn(c);
            samples[i].push(t.elapsed());
        }
    }
    let summaries: Vec<_> = samples.iter_mut().map(|s| summarize(s)).collect();
    let base_median = micros(summaries[0].median);
    println!("rounds: {ROUNDS} each, interleaved; /bin/true with a mount namespace of its own");
    let mut before = base_median;
    for ((name, _, enforced), s) in built.iter().zip(&summaries) {
        let median = micros(s.median);
        println!(
            "{name:<30} median {median:8.1} µs  p95 {:8.1} µs  ({:.2}× base, {:+.1} µs on the row above){}",
            micros(s.p95),
            median / base_median,
            median - before,
            if enforced.sockets_hidden > 0 {
                format!("; {} sockets hidden", enforced.sockets_hidden)
            } else {
                String::new()
            }
        );
        before = median;
    }
    drop(listeners);
}
