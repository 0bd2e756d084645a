//! What covering denied programs with stubs costs a sandboxed spawn that makes its own
//! mounts (a run's first sandboxed call, and any call whose mounts are not shared): the
//! same box (read-only host, own `/tmp`) with 0, 1 and 20 programs of `/usr/bin` covered
//! by a stub each. `/bin/true` spawned through `std::process::Command` with the
//! confinement's hook, interleaved; ratios against the box with none.
//!
//! Then the same where the box has no mount namespace (a host without user namespaces):
//! the programs held by a Landlock layer of their own instead, with what building that
//! layer costs once per set of programs, and what it adds to each spawn.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Instant;

use corral_sys::program_stubs::{StubSet, stub_image};
use corral_sys::sandbox::{self as sys, Spec};

use crate::stats::{micros, summarize};

const ROUNDS: usize = 300;

pub fn run() {
    stubs();
    landlock();
}

/// Twenty programs of `/usr/bin` that are not what the spawn runs.
fn twenty_programs() -> Vec<PathBuf> {
    let mut programs: Vec<PathBuf> = std::fs::read_dir("/usr/bin")
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| std::fs::symlink_metadata(p).is_ok_and(|m| m.is_file()))
        .filter(|p| !p.ends_with("true"))
        .collect();
    programs.sort();
    programs.truncate(20);
    programs
}

fn spawn_true(c: &sys::Confinement, cwd: &std::path::Path) {
    let mut cmd = Command::new("/bin/true");
    cmd.current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    sys::confine_before_exec(&mut cmd, c, None);
    assert!(cmd.status().unwrap().success());
}

/// `samples[i]` for each of `built`, interleaved, after a warm-up.
fn interleaved(built: &[sys::Confinement], cwd: &std::path::Path) -> Vec<crate::stats::Summary> {
    for c in built {
        for _ in 0..10 {
            spawn_true(c, cwd);
        }
    }
    let mut samples: Vec<Vec<std::time::Duration>> = vec![Vec::new(); built.len()];
    for _ in 0..ROUNDS {
        for (i, c) in built.iter().enumerate() {
            let t = Instant::now();
            spawn_true(c, cwd);
            samples[i].push(t.elapsed());
        }
    }
    samples.iter_mut().map(|s| summarize(s)).collect()
}

fn landlock() {
    let host = sys::HostSupport {
        namespaces: false,
        user_namespace: false,
        ..sys::host_support()
    };
    if host.landlock_abi == 0 {
        println!("skipped: no Landlock here");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().to_path_buf();
    let programs = twenty_programs();
    let set = |n: usize| first_stubs(&ws, &programs, n);
    let base = Spec {
        writable: vec![ws.clone()],
        writable_files: vec![PathBuf::from("/dev/null")],
        ..Spec::default()
    };
    println!();
    println!("no mount namespace: the denied programs held by a Landlock layer");
    let mut built = Vec::new();
    for (name, stubs) in [
        ("0 denied programs", None),
        ("1 denied program", Some(set(1))),
        ("20 denied programs", Some(set(20))),
    ] {
        let spec = Spec {
            program_stubs: stubs,
            ..base.clone()
        };
        let t = Instant::now();
        let (confinement, enforced) = sys::build(&spec, &host).unwrap();
        let first = t.elapsed();
        let t = Instant::now();
        let _ = sys::build(&spec, &host).unwrap();
        let again = t.elapsed();
        println!(
            "{name:<20} build: first {:8.1} µs, again {:8.1} µs ({} files held)",
            micros(first),
            micros(again),
            enforced.programs_landlocked
        );
        built.push((name, confinement));
    }
    let confinements: Vec<_> = built.iter().map(|(_, c)| c.clone()).collect();
    let summaries = interleaved(&confinements, &ws);
    let none = micros(summaries[0].median);
    for ((name, _), s) in built.iter().zip(&summaries) {
        let median = micros(s.median);
        println!(
            "{name:<20} median {median:8.1} µs  p95 {:8.1} µs  ({:.2}× none)",
            micros(s.p95),
            median / none,
        );
    }
}

fn stubs() {
    use std::os::unix::fs::PermissionsExt;
    let host = sys::host_support();
    if !host.namespaces || !host.mount_setattr {
        println!("skipped: no mount namespaces or no mount_setattr here");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    let own_tmp = dir.path().join("run/tmp");
    let stubs = dir.path().join("stubs");
    for d in [&ws, &own_tmp, &stubs] {
        std::fs::create_dir_all(d).unwrap();
    }
    let programs = twenty_programs();
    for i in 0..programs.len() {
        let file = stubs.join(i.to_string());
        std::fs::write(
            &file,
            stub_image(&format!("corral: {i} is denied")).unwrap(),
        )
        .unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o555)).unwrap();
    }
    let set = |n: usize| first_stubs(&stubs, &programs, n);
    let base = Spec {
        writable: vec![ws.clone(), own_tmp.clone()],
        writable_files: vec![PathBuf::from("/dev/null")],
        writable_mounts: vec![ws.clone()],
        visible: vec![ws.clone()],
        own_tmp: Some(own_tmp.clone()),
        private_dev: true,
        drop_caps: true,
        unix_sockets: true,
        ..Spec::default()
    };
    let variants = [
        ("0 denied programs", None),
        ("1 denied program", Some(set(1))),
        ("20 denied programs", Some(set(20))),
    ];
    let built: Vec<_> = variants
        .into_iter()
        .map(|(name, stubs)| {
            let spec = Spec {
                program_stubs: stubs,
                ..base.clone()
            };
            let (confinement, enforced) = sys::build(&spec, &host).unwrap();
            (name, confinement, enforced)
        })
        .collect();
    let confinements: Vec<_> = built.iter().map(|(_, c, _)| c.clone()).collect();
    let summaries = interleaved(&confinements, &ws);
    let none = micros(summaries[0].median);
    println!("rounds: {ROUNDS} each, interleaved; /bin/true making its own mounts");
    for ((name, _, enforced), s) in built.iter().zip(&summaries) {
        let median = micros(s.median);
        println!(
            "{name:<20} median {median:8.1} µs  p95 {:8.1} µs  ({:.2}× none; {} files covered)",
            micros(s.p95),
            median / none,
            enforced.programs_stubbed
        );
    }
}

/// The stubs for the first `n` of `programs`, each named by its place, in `dir`.
fn first_stubs(dir: &std::path::Path, programs: &[PathBuf], n: usize) -> StubSet {
    StubSet {
        dir: dir.to_path_buf(),
        stubs: programs
            .iter()
            .take(n)
            .enumerate()
            .map(|(i, p)| (OsString::from(i.to_string()), vec![p.clone()]))
            .collect(),
    }
}
