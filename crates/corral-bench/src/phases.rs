//! One contained call taken apart: the steps `Run::exec(["true"])` takes to start, wait
//! for and end a command in a cgroup and a PID namespace, each timed on its own with
//! corral-sys's public parts, next to the whole call and `Command::output` in the same
//! process, interleaved. What the whole call costs beyond the sum of the steps is the
//! library's own work (policy, plan, trace rows, pipes, the unit's bookkeeping).

use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use corral::{ExecRequest, Run};
use corral_sys::{cgroup, pidns, spawn};

use crate::stats::{micros, summarize};

const ROUNDS: usize = 500;

/// A v2 group (and its v1 `pids` twin where the host binds `pids` to v1) for the bench.
struct Groups {
    v2: PathBuf,
    v2_procs: Arc<OwnedFd>,
    v2_dir: OwnedFd,
    v1: Option<(PathBuf, Arc<OwnedFd>)>,
}

impl Groups {
    fn make() -> Option<Self> {
        let mount = cgroup::mount_v2()?;
        let base = cgroup::dir_of(&mount, &cgroup::own_path_v2()?)?;
        let v2 = base.join(format!("corral-bench-phases-{}", std::process::id()));
        cgroup::create(&v2).ok()?;
        let v1 = cgroup::mount_v1("pids").and_then(|m| {
            let base = cgroup::dir_of(&m, &cgroup::own_path_v1("pids")?)?;
            let dir = base.join(format!("corral-bench-phases-{}", std::process::id()));
            cgroup::create(&dir).ok()?;
            cgroup::write(&dir, "pids.max", "4096").ok()?;
            let fd = cgroup::open_tasks(&dir).ok()?;
            Some((dir, Arc::new(fd)))
        });
        Some(Self {
            v2_procs: Arc::new(cgroup::open_procs(&v2).ok()?),
            v2_dir: cgroup::open_dir(&v2).ok()?,
            v2,
            v1,
        })
    }
}

impl Drop for Groups {
    fn drop(&mut self) {
        let _ = cgroup::remove(&self.v2);
        if let Some((dir, _)) = &self.v1 {
            let _ = cgroup::remove(dir);
        }
    }
}

/// The steps, in the order a call takes them.
#[derive(Default)]
struct Steps {
    namespace: Vec<Duration>,
    spawn: Vec<Duration>,
    wait: Vec<Duration>,
    check: Vec<Duration>,
    end: Vec<Duration>,
}

impl Steps {
    fn print(&mut self, title: &str, whole: Duration) {
        println!("{title}");
        let mut sum = 0.0;
        for (name, samples) in [
            ("make the PID namespace and its init", &mut self.namespace),
            (
                "spawn `true` inside (cgroup, mounts, group)",
                &mut self.spawn,
            ),
            ("wait for it to exit", &mut self.wait),
            ("ask the cgroup whether anything is left", &mut self.check),
            ("end the namespace (kill the init, reap)", &mut self.end),
        ] {
            if samples.is_empty() {
                continue;
            }
            let s = summarize(samples);
            sum += micros(s.median);
            println!(
                "  {name:<46} median {:8.1} µs   p95 {:8.1} µs",
                micros(s.median),
                micros(s.p95)
            );
        }
        println!(
            "  {:<46} median {:8.1} µs",
            "the rest of Run::exec (whole call - steps)",
            micros(whole) - sum
        );
    }
}

/// A forked child joining its groups between fork and exec, as corral did before clone3.
fn spawn_forked(groups: &Groups, ns: &pidns::PidNamespace) -> std::process::Child {
    let mut cmd = Command::new("/bin/true");
    cmd.env_clear()
        .current_dir("/")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    corral_sys::signals::default_signals_before_exec(&mut cmd);
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    corral_sys::reaper::parent_death_signal_before_exec(&mut cmd, corral_sys::Signal::KILL);
    if let Some((_, fd)) = &groups.v1 {
        cgroup::join_before_exec(&mut cmd, Arc::clone(fd));
    }
    cgroup::join_before_exec(&mut cmd, Arc::clone(&groups.v2_procs));
    pidns::enter_mounts_before_exec(&mut cmd, ns.init());
    let _inside = ns.enter().unwrap();
    cmd.spawn().unwrap()
}

/// The same child started by `clone3`, born in its v2 group.
fn spawn_cloned(groups: &Groups, ns: &pidns::PidNamespace, v1: bool) -> spawn::Child {
    let mut launch = spawn::Launch::new(
        Path::new("/bin/true"),
        ["true"],
        Vec::<Vec<u8>>::new(),
        Path::new("/"),
    )
    .unwrap();
    let null = || Some(OwnedFd::from(std::fs::File::open("/dev/null").unwrap()));
    launch.stdio = [null(), null(), null()];
    launch.process_group = Some(0);
    launch.death_signal = Some(corral_sys::Signal::KILL);
    launch.cgroup = Some(groups.v2_dir.as_raw_fd());
    if let Some((_, fd)) = groups.v1.as_ref().filter(|_| v1) {
        launch.join(fd.as_raw_fd()).unwrap();
    }
    let init = ns.init();
    launch.mount_namespace = Some(init.as_raw_fd());
    let _inside = ns.enter().unwrap();
    spawn::spawn(&launch).unwrap()
}

/// How the round's child is started.
#[derive(Clone, Copy, PartialEq)]
enum How {
    Forked,
    Cloned,
    ClonedWithoutV1,
}

fn round(steps: &mut Steps, groups: &Groups, how: How) {
    let t = Instant::now();
    let ns = pidns::PidNamespace::new().unwrap();
    steps.namespace.push(t.elapsed());
    let t = Instant::now();
    if how != How::Forked {
        let mut child = spawn_cloned(groups, &ns, how == How::Cloned);
        steps.spawn.push(t.elapsed());
        let t = Instant::now();
        child.wait().unwrap();
        steps.wait.push(t.elapsed());
    } else {
        let mut child = spawn_forked(groups, &ns);
        steps.spawn.push(t.elapsed());
        let t = Instant::now();
        child.wait().unwrap();
        steps.wait.push(t.elapsed());
    }
    let t = Instant::now();
    assert!(!cgroup::populated(&groups.v2));
    steps.check.push(t.elapsed());
    let t = Instant::now();
    drop(ns);
    steps.end.push(t.elapsed());
}

pub fn run() {
    if !is_root() || pidns::probe().is_err() {
        println!("skipped: needs root (a PID namespace and cgroups)");
        return;
    }
    let Some(groups) = Groups::make() else {
        println!("skipped: cannot make a cgroup here");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let run = Run::builder(dir.path())
        .store(dir.path().join("trace.db"))
        .policy(corral::Policy::permissive())
        .open()
        .unwrap();
    let request = ExecRequest::new(["true"]);
    let cloned = spawn::into_cgroup_supported();
    let (mut forked, mut born, mut bare) = (Steps::default(), Steps::default(), Steps::default());
    let (mut baseline, mut whole) = (Vec::new(), Vec::new());
    for i in 0..ROUNDS + 20 {
        let t = Instant::now();
        Command::new("true").output().unwrap();
        let b = t.elapsed();
        let t = Instant::now();
        let outcome = run.exec(&request).unwrap();
        let w = t.elapsed();
        assert!(outcome.status.success());
        round(&mut forked, &groups, How::Forked);
        if cloned {
            round(&mut born, &groups, How::Cloned);
            if groups.v1.is_some() {
                round(&mut bare, &groups, How::ClonedWithoutV1);
            }
        }
        if i >= 20 {
            baseline.push(b);
            whole.push(w);
        } else {
            forked = Steps::default();
            born = Steps::default();
            bare = Steps::default();
        }
    }
    let name = run.exec(&request).unwrap().containment;
    let b = summarize(&mut baseline);
    let w = summarize(&mut whole);
    println!("rounds: {ROUNDS}, interleaved; containment {name}");
    println!(
        "std Command::output                                  median {:8.1} µs   p95 {:8.1} µs",
        micros(b.median),
        micros(b.p95)
    );
    println!(
        "Run::exec, whole call                                median {:8.1} µs ({:.2}x)   p95 {:8.1} µs",
        micros(w.median),
        micros(w.median) / micros(b.median),
        micros(w.p95)
    );
    forked.print(
        "steps, forked child moving itself into its groups:",
        w.median,
    );
    if cloned {
        born.print("steps, clone3 child born in its v2 group:", w.median);
        if groups.v1.is_some() {
            bare.print(
                "steps, clone3 child, without the v1 pids join (what the join costs):",
                w.median,
            );
        }
    } else {
        println!("clone3 with CLONE_INTO_CGROUP: not on this kernel");
    }
    run.close().unwrap();
}

/// Whether this process runs as root (effective uid 0).
fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status").is_ok_and(|s| {
        s.lines()
            .find_map(|l| l.strip_prefix("Uid:"))
            .and_then(|l| l.split_whitespace().nth(1))
            == Some("0")
    })
}
