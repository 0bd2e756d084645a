//! The sandbox, judged from outside the box: what a sandboxed command could not do, and
//! what it still can.

use crate::common;

use std::io::Read;
use std::path::Path;
use std::time::Duration;

use common::Fixture;
use corral::{
    Config, ExecRequest, Outcome, Run, sandbox::Level, sandbox::SandboxConfig, sandbox::SandboxMode,
};

fn config(mode: SandboxMode) -> Config {
    Config {
        sandbox: SandboxConfig::mode(mode),
        ..Config::default()
    }
}

fn sh(run: &Run, script: &str) -> Outcome {
    run.exec(&ExecRequest::new(["sh", "-c", script]).timeout(Duration::from_secs(60)))
        .unwrap()
}

fn stderr(o: &Outcome) -> String {
    format!("{}{}", o.stderr.window.head, o.stderr.window.tail)
}

fn stdout(o: &Outcome) -> String {
    format!("{}{}", o.stdout.window.head, o.stdout.window.tail)
}

/// A directory beside the workspace, outside it.
fn outside(fx: &Fixture) -> std::path::PathBuf {
    let dir = fx.dir.path().join("outside");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn writes_outside_the_workspace_fail_every_way() {
    let fx = Fixture::new();
    let out = outside(&fx);
    std::fs::write(out.join("victim"), "original").unwrap();
    let run = fx.approving_run(config(SandboxMode::WorkspaceWrite));
    let o = out.display();
    for script in [
        format!("echo x > {o}/direct"),
        format!("ln -s {o} link && echo x > link/via-symlink"),
        format!("ln {o}/victim hard"),
        format!("echo x > /proc/self/root{o}/via-proc"),
        format!("echo x >> {o}/victim"),
        format!("mv {o}/victim ./moved"),
        format!("rm {o}/victim"),
    ] {
        let r = sh(&run, &script);
        assert!(!r.status.success(), "{script} succeeded: {}", r.observation);
    }
    for name in ["direct", "via-symlink", "via-proc"] {
        assert!(!out.join(name).exists(), "{name} was written");
    }
    assert_eq!(
        std::fs::read_to_string(out.join("victim")).unwrap(),
        "original"
    );
    assert!(!fx.workspace().join("hard").exists());
}

#[test]
fn an_inherited_directory_descriptor_does_not_cross_exec() {
    let fx = Fixture::new();
    let dir = std::fs::File::open(outside(&fx)).unwrap();
    // Clear close-on-exec, as a careless host program might.
    rustix::io::fcntl_setfd(&dir, rustix::io::FdFlags::empty()).unwrap();
    let fd = std::os::fd::AsRawFd::as_raw_fd(&dir);
    let run = fx.approving_run(config(SandboxMode::WorkspaceWrite));
    let r = sh(
        &run,
        &format!("if test -e /proc/self/fd/{fd}; then echo leaked; else echo closed; fi"),
    );
    assert_eq!(stdout(&r).trim(), "closed", "{}", r.observation);
}

#[test]
fn network_is_off_tcp_udp_and_unix_sockets() {
    if !common::layer_enforced(corral::sandbox::Layer::Network) {
        return;
    }
    let fx = Fixture::new();
    let tcp = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    tcp.set_nonblocking(true).unwrap();
    let udp = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    udp.set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let sock = outside(&fx).join("engine.sock");
    let unix = std::os::unix::net::UnixListener::bind(&sock).unwrap();
    unix.set_nonblocking(true).unwrap();
    let run = fx.approving_run(config(SandboxMode::WorkspaceWrite));
    let py = |code: String| {
        run.exec(&ExecRequest::new(["/usr/bin/python3", "-c", code.as_str()]))
            .unwrap()
    };
    let t = py(format!(
        "import socket; socket.create_connection(('127.0.0.1', {}), 2)",
        tcp.local_addr().unwrap().port()
    ));
    assert!(!t.status.success(), "tcp: {}", t.observation);
    let u = py(format!(
        "import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.sendto(b'x', ('127.0.0.1', {}))",
        udp.local_addr().unwrap().port()
    ));
    // The run's own loopback takes the datagram; the host's never sees it (checked below).
    assert!(u.status.success(), "udp: {}", u.observation);
    let beyond = py(
        "import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); \
         s.sendto(b'x', ('192.0.2.1', 9))"
            .to_string(),
    );
    assert!(
        !beyond.status.success(),
        "beyond loopback: {}",
        beyond.observation
    );
    let x = py(format!(
        "import socket; s = socket.socket(socket.AF_UNIX); s.connect({:?})",
        sock.display().to_string()
    ));
    assert!(!x.status.success(), "unix: {}", x.observation);
    assert!(tcp.accept().is_err(), "a TCP connection arrived");
    assert!(udp.recv(&mut [0; 8]).is_err(), "a UDP datagram arrived");
    assert!(unix.accept().is_err(), "a Unix connection arrived");
}

#[test]
fn secrets_and_loader_variables_stay_out() {
    let fx = Fixture::new();
    let mut cfg = config(SandboxMode::WorkspaceWrite);
    let mut explicit: std::collections::BTreeMap<String, String> =
        [("PATH", "/usr/bin:/bin"), ("MY_SERVICE_TOKEN", "hunter2")]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
    explicit.insert("HOME".into(), "/nonexistent".into());
    cfg.env.explicit = Some(explicit);
    cfg.env
        .set
        .insert("LD_PRELOAD".into(), "/nonexistent/evil.so".into());
    let run = fx.approving_run(cfg);
    let r = sh(&run, "env");
    let env = stdout(&r);
    assert!(r.status.success(), "{}", r.observation);
    assert!(!env.contains("hunter2"), "{env}");
    assert!(!env.contains("LD_PRELOAD"), "{env}");
    assert!(!stderr(&r).contains("evil.so"), "{}", r.observation);
    assert!(env.contains("CORRAL_SANDBOX=workspace-write"), "{env}");
    assert!(env.contains("CORRAL_SANDBOX_NETWORK_DISABLED=1"), "{env}");
}

#[test]
fn signals_to_processes_outside_fail() {
    let fx = Fixture::new();
    let mut marker = std::process::Command::new("sleep")
        .arg("30")
        .spawn()
        .unwrap();
    let run = fx.approving_run(config(SandboxMode::WorkspaceWrite));
    let r = sh(&run, &format!("kill -KILL {}", marker.id()));
    assert!(!r.status.success(), "{}", r.observation);
    std::thread::sleep(Duration::from_millis(50));
    assert!(
        marker.try_wait().unwrap().is_none(),
        "the marker was killed"
    );
    marker.kill().unwrap();
    marker.wait().unwrap();
}

#[test]
fn remounting_root_and_new_namespaces_fail() {
    let fx = Fixture::new();
    let run = fx.approving_run(config(SandboxMode::WorkspaceWrite));
    for script in [
        "mount -o remount,rw /",
        "mount -t tmpfs none /mnt",
        "unshare -m true",
        "unshare -U true",
    ] {
        let r = sh(&run, script);
        assert!(!r.status.success(), "{script}: {}", r.observation);
    }
}

#[test]
fn a_fork_bomb_stops_at_the_bound() {
    if !common::layer_enforced(corral::sandbox::Layer::PidsMax) {
        return;
    }
    let fx = Fixture::new();
    let mut cfg = config(SandboxMode::WorkspaceWrite);
    cfg.pids_max = Some(32);
    let run = fx.approving_run(cfg);
    let r = sh(
        &run,
        "i=0; while [ $i -lt 100 ]; do sleep 5 & i=$((i+1)); done; echo tried",
    );
    assert!(r.containment.contains("+pids"), "{}", r.containment);
    let err = stderr(&r).to_lowercase();
    assert!(
        err.contains("fork") || err.contains("resource temporarily unavailable"),
        "{}",
        r.observation
    );
    let report = r.sandbox.as_ref().unwrap();
    assert!(
        report
            .layers
            .iter()
            .any(|l| l.layer == corral::sandbox::Layer::PidsMax && l.level == Level::Full)
    );
}

#[test]
fn the_workspace_temp_and_system_files_work() {
    let fx = Fixture::new();
    let run = fx.approving_run(config(SandboxMode::WorkspaceWrite));
    let r = sh(
        &run,
        "echo hi > here && mkdir -p sub/dir && echo x > sub/dir/f && mv sub/dir/f g && rm g \
         && echo t > \"$TMPDIR/t\" && cat \"$TMPDIR/t\" && head -c 10 /etc/passwd >/dev/null",
    );
    assert!(r.status.success(), "{}", r.observation);
    assert_eq!(
        std::fs::read_to_string(fx.workspace().join("here")).unwrap(),
        "hi\n"
    );
    // The private temp is gone afterwards.
    assert!(!stdout(&r).is_empty());
}

#[test]
fn read_only_writes_nothing_but_temp() {
    let fx = Fixture::new();
    let run = fx.approving_run(config(SandboxMode::ReadOnly));
    let r = sh(&run, "echo x > here");
    assert!(!r.status.success());
    assert!(!fx.workspace().join("here").exists());
    let report = r.sandbox.as_ref().unwrap();
    assert!(report.suspected_denial.is_some(), "{report:?}");
    assert!(r.observation.contains("a guess"), "{}", r.observation);
    let r = sh(
        &run,
        "echo t > \"$TMPDIR/t\" && cat /etc/hostname >/dev/null",
    );
    assert!(r.status.success(), "{}", r.observation);
}

#[test]
fn protected_paths_stay_read_only() {
    if !common::layer_enforced(corral::sandbox::Layer::ProtectedPaths) {
        return;
    }
    let fx = Fixture::new();
    let ws = fx.workspace();
    std::fs::create_dir_all(ws.join(".git/hooks")).unwrap();
    std::fs::write(ws.join(".git/config"), "[core]\n").unwrap();
    std::fs::write(ws.join("corral.toml"), "# policy\n").unwrap();
    std::fs::create_dir_all(ws.join(".corral")).unwrap();
    let run = fx.approving_run(config(SandboxMode::WorkspaceWrite));
    for script in [
        "echo evil > .git/hooks/pre-commit",
        "echo evil >> .git/config",
        "echo evil > corral.toml",
        "rm corral.toml",
        "mv .git/hooks .git/hooks-old",
    ] {
        let r = sh(&run, script);
        assert!(!r.status.success(), "{script}: {}", r.observation);
    }
    assert!(!ws.join(".git/hooks/pre-commit").exists());
    assert_eq!(
        std::fs::read_to_string(ws.join("corral.toml")).unwrap(),
        "# policy\n"
    );
    assert_eq!(
        std::fs::read_to_string(ws.join(".git/config")).unwrap(),
        "[core]\n"
    );
    let r = sh(&run, "echo ok > notes.txt");
    assert!(r.status.success(), "{}", r.observation);
    let report = r.sandbox.unwrap();
    let layer = report
        .layers
        .iter()
        .find(|l| l.layer == corral::sandbox::Layer::ProtectedPaths)
        .unwrap();
    assert_eq!(layer.level, Level::Full, "{layer:?}");
}

#[test]
fn a_real_compile_succeeds_inside() {
    let Ok(rustc) = which("rustc") else { return };
    let fx = Fixture::new();
    std::fs::write(
        fx.workspace().join("hello.rs"),
        "fn main() { println!(\"hello from the box\"); }\n",
    )
    .unwrap();
    let run = fx.approving_run(config(SandboxMode::WorkspaceWrite));
    let r = run
        .exec(
            &ExecRequest::new([rustc.as_str(), "hello.rs", "-o", "hello"])
                .timeout(Duration::from_secs(120)),
        )
        .unwrap();
    assert!(r.status.success(), "{}", r.observation);
    let r = run.exec(&ExecRequest::new(["./hello"])).unwrap();
    assert_eq!(stdout(&r).trim(), "hello from the box");
}

fn which(name: &str) -> Result<String, ()> {
    let path = std::env::var("PATH").map_err(|_| ())?;
    for dir in path.split(':') {
        let p = Path::new(dir).join(name);
        if p.exists() {
            return Ok(p.display().to_string());
        }
    }
    Err(())
}

#[test]
fn the_report_is_honest_and_recorded() {
    if !common::layer_enforced(corral::sandbox::Layer::Network) {
        return;
    }
    if !common::layer_enforced(corral::sandbox::Layer::PidsMax) {
        return;
    }
    let fx = Fixture::new();
    let run = fx.approving_run(config(SandboxMode::WorkspaceWrite));
    let r = run.exec(&ExecRequest::new(["true"])).unwrap();
    let report = r.sandbox.clone().unwrap();
    let line = report.status();
    assert!(r.observation.contains(&line), "{}", r.observation);
    for layer in [
        "landlock",
        "network",
        "seccomp",
        "launch hygiene",
        "cgroup pids.max",
    ] {
        let l = report
            .layers
            .iter()
            .find(|l| l.layer.name() == layer)
            .unwrap();
        assert_eq!(
            l.level,
            Level::Full,
            "{l:?} (on this host every layer is available)"
        );
    }
    let store = corral::trace::Store::open(&fx.store()).unwrap();
    let rows = store.sandbox_events(r.step.id).unwrap();
    // One row per layer, and one naming the build caches.
    assert_eq!(rows.len(), report.layers.len() + 1);
    let caches = rows.iter().find(|e| e.layer == "caches").unwrap();
    assert!(
        caches
            .detail
            .contains(&report.caches.unwrap().display().to_string())
    );
    assert!(
        rows.iter()
            .all(|e| e.mode == "workspace-write" && !e.network)
    );
    // Full mode: no line, but recorded.
    let fx2 = Fixture::new();
    let run = fx2.approving_run(Config::default());
    let r = run.exec(&ExecRequest::new(["true"])).unwrap();
    assert!(!r.observation.contains("sandbox"), "{}", r.observation);
    let store = corral::trace::Store::open(&fx2.store()).unwrap();
    assert_eq!(store.sandbox_events(r.step.id).unwrap()[0].mode, "full");
    let _ = std::io::empty().read(&mut [0; 1]);
}

/// System V IPC through the C library, from Python: `python3 -c SCRIPT`.
const SHM: &str = concat!(
    "import ctypes, sys\n",
    "libc = ctypes.CDLL(None, use_errno=True)\n",
    "libc.shmat.restype = ctypes.c_void_p\n",
    "def attach(ident):\n",
    "    p = libc.shmat(ident, None, 0)\n",
    "    return None if p in (None, ctypes.c_void_p(-1).value) else p\n",
);

#[test]
fn the_hosts_shared_memory_is_out_of_reach_and_the_runs_is_shared() {
    if !common::layer_enforced(corral::sandbox::Layer::IpcNamespace) {
        return;
    }
    // A host process's private segment, holding a secret.
    let host = std::process::Command::new("python3")
        .args([
            "-c",
            &format!(
                "{SHM}ident = libc.shmget(0, 4096, 0o1600)\n\
                 p = attach(ident)\n\
                 ctypes.memmove(p, b'host secret 7d1e', 16)\n\
                 print(ident, flush=True)\n\
                 sys.stdin.read()\n\
                 libc.shmctl(ident, 0, None)\n"
            ),
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut host = host;
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(host.stdout.as_mut().unwrap()),
        &mut line,
    )
    .unwrap();
    let ident: i32 = line.trim().parse().expect("the host's segment id");

    let fx = Fixture::new();
    let run = fx.approving_run(config(SandboxMode::WorkspaceWrite));
    let py = |script: String| {
        run.exec(&ExecRequest::new([
            "python3",
            "-c",
            &format!("{SHM}{script}"),
        ]))
        .unwrap()
    };
    let reach = py(format!(
        "p = attach({ident})\n\
         print('attached', ctypes.string_at(p, 16) if p else ctypes.get_errno())\n"
    ));
    let seen = stdout(&reach);
    drop(host.stdin.take());
    host.wait().unwrap();
    assert!(!seen.contains("host secret"), "{seen}");
    assert!(seen.starts_with("attached "), "{}", reach.observation);

    // One call leaves a segment under a key; a later call of the run finds it.
    let key = 0x636f_7272;
    let made = py(format!(
        "ident = libc.shmget({key}, 4096, 0o1600)\n\
         ctypes.memmove(attach(ident), b'from call one', 13)\n\
         print(ident)\n"
    ));
    assert!(made.status.success(), "{}", made.observation);
    let found = py(format!(
        "p = attach(libc.shmget({key}, 4096, 0o600))\n\
         print(ctypes.string_at(p, 13).decode())\n\
         libc.shmctl(libc.shmget({key}, 4096, 0o600), 0, None)\n"
    ));
    assert_eq!(stdout(&found), "from call one\n", "{}", found.observation);
    let ipc = found
        .sandbox
        .as_ref()
        .unwrap()
        .layers
        .iter()
        .find(|l| l.layer == corral::sandbox::Layer::IpcNamespace)
        .cloned()
        .unwrap();
    assert_eq!(ipc.level, Level::Full, "{}", ipc.detail);
}

/// `git` with a fixed identity and no config of the person's.
fn git(ws: &Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new("git")
        .args(["-c", "user.email=t@example.org", "-c", "user.name=t"])
        .args(args)
        .current_dir(ws)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap()
}

/// What a hostile box tries on a repository's metadata so that the person's next `git`
/// on the host runs its code: none of it changes `.git`.
#[test]
fn a_repository_cannot_be_rewired_from_the_box() {
    if !common::layer_enforced(corral::sandbox::Layer::ProtectedPaths) {
        return;
    }
    let fx = Fixture::new();
    let ws = fx.workspace();
    assert!(git(&ws, &["init", "-q", "."]).status.success());
    std::fs::write(ws.join("a.txt"), "one\n").unwrap();
    assert!(git(&ws, &["add", "a.txt"]).status.success());
    assert!(git(&ws, &["commit", "-q", "-m", "one"]).status.success());
    let config_before = std::fs::read(ws.join(".git/config")).unwrap();
    let head_before = std::fs::read(ws.join(".git/HEAD")).unwrap();
    let marker = fx.dir.path().join("ran-on-the-host");
    // `git_write = false`: the whole `.git` read-only again (the default lets git write
    // its own data, see `git_writes_its_data_and_nothing_that_runs_code`).
    let mut cfg = config(SandboxMode::WorkspaceWrite);
    cfg.sandbox.git_write = false;
    let run = fx.approving_run(cfg);
    let evil = format!("touch {}", marker.display());
    for script in [
        // Away and back again, with a config that runs a program on `git status`.
        format!("mv .git .git-old && cp -r .git-old .git && git config core.fsmonitor '{evil}'"),
        format!(
            "cp -r .git ../copied && git --git-dir=../copied config core.fsmonitor '{evil}' && rm -rf .git && mv ../copied .git"
        ),
        "echo ../elsewhere > .git/commondir".to_string(),
        format!("git config core.pager '{evil}'"),
        "echo 'ref: refs/heads/evil' > .git/HEAD".to_string(),
        "mkdir -p .git/modules/x && echo x > .git/modules/x/config".to_string(),
        "git commit -q --allow-empty -m two".to_string(),
    ] {
        let r = sh(&run, &format!("GIT_CONFIG_GLOBAL=/dev/null {script}"));
        assert!(!r.status.success(), "{script}: {}", r.observation);
    }
    let commit = sh(
        &run,
        "git -c user.email=t@example.org -c user.name=t commit --allow-empty -m two",
    );
    assert!(!commit.status.success(), "{}", commit.observation);
    assert!(
        commit.observation.contains("git_write = true"),
        "the result says how to allow it: {}",
        commit.observation
    );
    let written = run.write_file(&corral::WriteFileRequest::new(".git/commondir", "x"));
    assert!(written.is_err(), "the file tools keep .git too");

    assert!(ws.join(".git/objects").is_dir(), ".git was replaced");
    assert!(!ws.join(".git/commondir").exists());
    assert_eq!(
        std::fs::read(ws.join(".git/config")).unwrap(),
        config_before
    );
    assert_eq!(std::fs::read(ws.join(".git/HEAD")).unwrap(), head_before);
    let status = git(&ws, &["status", "--short"]);
    assert!(status.status.success());
    assert!(!marker.exists(), "the person's git ran the box's command");
    let log = git(&ws, &["log", "--oneline"]);
    assert_eq!(String::from_utf8_lossy(&log.stdout).lines().count(), 1);
}

/// By default (`git_write`) git writes its data in the box, and what makes the person's
/// next `git` run code still cannot change: `.git` cannot be moved aside and copied back,
/// its config and hooks are read-only, a `commondir` made is moved out.
#[test]
fn git_writes_its_data_and_nothing_that_runs_code() {
    if !common::layer_enforced(corral::sandbox::Layer::ProtectedPaths) {
        return;
    }
    let fx = Fixture::new();
    let ws = fx.workspace();
    assert!(git(&ws, &["init", "-q", "."]).status.success());
    std::fs::write(ws.join("a.txt"), "one\n").unwrap();
    assert!(git(&ws, &["add", "a.txt"]).status.success());
    assert!(git(&ws, &["commit", "-q", "-m", "one"]).status.success());
    let config_before = std::fs::read(ws.join(".git/config")).unwrap();
    let marker = fx.dir.path().join("ran-on-the-host");
    let run = fx.approving_run(config(SandboxMode::WorkspaceWrite));
    let evil = format!("touch {}", marker.display());
    for script in [
        format!("mv .git .git-old && cp -r .git-old .git && git config core.fsmonitor '{evil}'"),
        format!(
            "cp -r .git ../copied && git --git-dir=../copied config core.fsmonitor '{evil}' && mv -f ../copied/config .git/config"
        ),
        format!("git config core.pager '{evil}'"),
        format!("printf '#!/bin/sh\\n{evil}\\n' > .git/hooks/pre-commit"),
    ] {
        let r = sh(&run, &format!("GIT_CONFIG_GLOBAL=/dev/null {script}"));
        assert!(!r.status.success(), "{script}: {}", r.observation);
    }
    let pointed = sh(&run, "echo ../elsewhere > .git/commondir");
    assert!(
        !ws.join(".git/commondir").exists(),
        "{}",
        pointed.observation
    );
    assert_eq!(
        std::fs::read(ws.join(".git/config")).unwrap(),
        config_before
    );
    assert!(!ws.join(".git/hooks/pre-commit").exists());
    let commit = sh(
        &run,
        "GIT_CONFIG_GLOBAL=/dev/null git -c user.email=t@example.org -c user.name=t commit -q --allow-empty -m two",
    );
    assert!(commit.status.success(), "{}", commit.observation);
    let status = git(&ws, &["status", "--short"]);
    assert!(status.status.success());
    assert!(!marker.exists(), "the person's git ran the box's command");
    let log = git(&ws, &["log", "--oneline"]);
    assert_eq!(String::from_utf8_lossy(&log.stdout).lines().count(), 2);
}

/// With `git_write`, git commits in the box; its hooks and config still cannot change.
#[test]
fn with_git_write_git_commits_and_its_hooks_stay() {
    if !common::layer_enforced(corral::sandbox::Layer::ProtectedPaths) {
        return;
    }
    let fx = Fixture::new();
    let ws = fx.workspace();
    assert!(git(&ws, &["init", "-q", "."]).status.success());
    let mut cfg = config(SandboxMode::WorkspaceWrite);
    cfg.sandbox.git_write = true;
    let run = fx.approving_run(cfg);
    let commit = sh(
        &run,
        "echo two > b.txt && git add b.txt && git -c user.email=t@example.org -c user.name=t commit -q -m two",
    );
    assert!(commit.status.success(), "{}", commit.observation);
    for script in [
        "echo evil > .git/hooks/pre-commit",
        "echo evil >> .git/config",
        "mv .git/hooks .git/hooks-old",
    ] {
        let r = sh(&run, script);
        assert!(!r.status.success(), "{script}: {}", r.observation);
    }
    assert!(!ws.join(".git/hooks/pre-commit").exists());
    // What did not exist cannot be mounted over: made, it is moved aside after the call.
    let pointed = sh(&run, "echo ../x > .git/commondir");
    assert!(
        !ws.join(".git/commondir").exists(),
        "{}",
        pointed.observation
    );
    assert!(
        pointed.observation.contains("moved .git/commondir"),
        "{}",
        pointed.observation
    );
    let log = git(&ws, &["log", "--oneline"]);
    assert!(String::from_utf8_lossy(&log.stdout).contains("two"));
}

/// A checked-out submodule's `.git` (a file naming `.git/modules/lib`) cannot be swapped
/// for a directory of the box's own, whose `config` the person's `git status` at the
/// top would read as it walks into the submodule.
#[test]
fn a_submodules_git_cannot_be_swapped_from_the_box() {
    if !common::layer_enforced(corral::sandbox::Layer::ProtectedPaths) {
        return;
    }
    let fx = Fixture::new();
    let ws = fx.workspace();
    let lib = fx.dir.path().join("libsrc");
    std::fs::create_dir_all(&lib).unwrap();
    assert!(git(&lib, &["init", "-q", "."]).status.success());
    std::fs::write(lib.join("l.txt"), "l\n").unwrap();
    assert!(git(&lib, &["add", "l.txt"]).status.success());
    assert!(git(&lib, &["commit", "-q", "-m", "l"]).status.success());
    assert!(git(&ws, &["init", "-q", "."]).status.success());
    let lib = lib.display().to_string();
    let added = git(
        &ws,
        &[
            "-c",
            "protocol.file.allow=always",
            "submodule",
            "add",
            "-q",
            &lib,
            "lib",
        ],
    );
    assert!(
        added.status.success(),
        "{}",
        String::from_utf8_lossy(&added.stderr)
    );
    assert!(git(&ws, &["commit", "-q", "-m", "sub"]).status.success());
    let gitfile = std::fs::read(ws.join("lib/.git")).unwrap();
    let ran = fx.dir.path().join("ran");
    let run = fx.approving_run(config(SandboxMode::WorkspaceWrite));
    let swapped = sh(
        &run,
        &format!(
            "rm -f lib/.git; cp -r .git/modules/lib lib/.git.new; mv -f lib/.git.new lib/.git; \
             git config -f lib/.git/config --unset core.worktree; \
             git config -f lib/.git/config core.fsmonitor 'touch {}'",
            ran.display()
        ),
    );
    assert_eq!(
        std::fs::read(ws.join("lib/.git")).unwrap(),
        gitfile,
        "{}",
        swapped.observation
    );
    drop(run);
    let _ = git(&ws, &["status", "--short"]);
    assert!(
        !ran.exists(),
        "git ran the box's fsmonitor: {}",
        swapped.observation
    );
}

/// Where there is no repository, one the box makes is moved out of the workspace: the
/// person's next `git` there does not read a config the box wrote.
#[test]
fn a_repository_made_in_the_box_is_moved_aside() {
    if !common::layer_enforced(corral::sandbox::Layer::ProtectedPaths) {
        return;
    }
    let fx = Fixture::new();
    let ws = fx.workspace();
    let run = fx.approving_run(config(SandboxMode::WorkspaceWrite));
    let made = sh(
        &run,
        "git init -q . && git config core.fsmonitor 'touch ../ran' && echo ok > kept.txt",
    );
    assert!(made.status.success(), "{}", made.observation);
    assert!(!ws.join(".git").exists(), "{}", made.observation);
    assert!(ws.join("kept.txt").exists());
    let line = made
        .observation
        .lines()
        .find(|l| l.starts_with("sandbox: moved .git"))
        .unwrap_or_else(|| panic!("{}", made.observation));
    // The line says where it went, and the move back works as written.
    let to = line
        .split(" to ")
        .nth(1)
        .unwrap()
        .split(':')
        .next()
        .unwrap();
    assert!(Path::new(to).join("config").is_file(), "{line}");
    assert!(!to.starts_with(&*ws.to_string_lossy()), "{line}");
}

/// Root over a workspace another user owns (a CI container over a checkout of uid 1001):
/// the box keeps only what writing there takes, and the report says so.
#[test]
fn root_over_another_users_workspace_keeps_only_what_writing_it_takes() {
    if !rustix::process::geteuid().is_root()
        || !common::layer_enforced(corral::sandbox::Layer::Capabilities)
    {
        return;
    }
    let fx = Fixture::new();
    let ws = fx.workspace();
    std::fs::create_dir_all(ws.join("src")).unwrap();
    for dir in [ws.clone(), ws.join("src")] {
        std::os::unix::fs::chown(&dir, Some(65534), Some(65534)).unwrap();
        std::fs::set_permissions(&dir, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
    }
    let run = fx.approving_run(config(SandboxMode::WorkspaceWrite));
    let wrote = sh(
        &run,
        "echo ok > src/out.txt && grep CapEff /proc/self/status",
    );
    assert!(wrote.status.success(), "{}", wrote.observation);
    // CAP_DAC_OVERRIDE (1) and CAP_FOWNER (3), nothing else.
    assert!(
        stdout(&wrote).contains("000000000000000a"),
        "{}",
        stdout(&wrote)
    );
    let caps = wrote
        .sandbox
        .as_ref()
        .unwrap()
        .layers
        .iter()
        .find(|l| l.layer == corral::sandbox::Layer::Capabilities)
        .cloned()
        .unwrap();
    assert_eq!(caps.level, Level::Partial, "{}", caps.detail);
    assert!(caps.detail.contains("uid 65534"), "{}", caps.detail);
}

/// What Landlock does not cover: a host file's mode, owner, times and attributes stay as
/// they were; the workspace's own files still take them.
#[test]
fn a_host_files_metadata_cannot_change() {
    if !common::layer_enforced(corral::sandbox::Layer::ReadOnlyHost) {
        return;
    }
    use std::os::unix::fs::MetadataExt;
    let fx = Fixture::new();
    let out = outside(&fx);
    let victim = out.join("victim");
    std::fs::write(&victim, "v").unwrap();
    std::fs::set_permissions(&victim, std::os::unix::fs::PermissionsExt::from_mode(0o644)).unwrap();
    let before = std::fs::metadata(&victim).unwrap();
    let run = fx.approving_run(config(SandboxMode::WorkspaceWrite));
    let v = victim.display();
    for script in [
        format!("chmod 4777 {v}"),
        format!("chown 65534 {v}"),
        format!("touch -d 2001-01-01 {v}"),
        format!("python3 -c 'import os; os.setxattr(\"{v}\", \"user.x\", b\"1\")'"),
        format!("ln {v} {}/link", out.display()),
    ] {
        let r = sh(&run, &script);
        assert!(!r.status.success(), "{script}: {}", r.observation);
    }
    let after = std::fs::metadata(&victim).unwrap();
    assert_eq!(after.mode(), before.mode());
    assert_eq!(after.uid(), before.uid());
    assert_eq!(after.mtime(), before.mtime());
    let own = sh(
        &run,
        "echo x > mine && chmod 600 mine && touch -d 2001-01-01 mine && cd . && echo y > \"$TMPDIR/t\"",
    );
    assert!(own.status.success(), "{}", own.observation);
    let mine = std::fs::metadata(fx.workspace().join("mine")).unwrap();
    assert_eq!(mine.mode() & 0o777, 0o600);
}

/// Sockets only of the families a program on a plain host needs: a channel to the
/// hypervisor (`AF_VSOCK`) or the kernel's crypto API (`AF_ALG`) answers as a kernel
/// without them would.
#[test]
fn only_the_usual_socket_families_open() {
    if !common::layer_enforced(corral::sandbox::Layer::Seccomp) {
        return;
    }
    let fx = Fixture::new();
    let run = fx.approving_run(config(SandboxMode::WorkspaceWrite));
    let probe = run
        .exec(&ExecRequest::new([
            "python3",
            "-c",
            "import socket\n\
             def opens(family, kind, proto=0):\n\
             \x20   try:\n\
             \x20       socket.socket(family, kind, proto).close(); return 'ok'\n\
             \x20   except OSError as e:\n\
             \x20       return str(e.errno)\n\
             print(opens(40, socket.SOCK_STREAM), opens(38, socket.SOCK_SEQPACKET),\n\
             \x20     opens(socket.AF_NETLINK, socket.SOCK_RAW, 0),\n\
             \x20     opens(socket.AF_NETLINK, socket.SOCK_RAW, 9),\n\
             \x20     opens(socket.AF_INET, socket.SOCK_STREAM))",
        ]))
        .unwrap();
    assert!(probe.status.success(), "{}", probe.observation);
    let e = EAFNOSUPPORT;
    assert_eq!(
        stdout(&probe).trim(),
        format!("{e} {e} ok {e} ok"),
        "{}",
        probe.observation
    );
}

/// `EAFNOSUPPORT` on Linux.
const EAFNOSUPPORT: i32 = 97;

/// Unix sockets: the box's own work (a socket pair, a server in the workspace), and the
/// host's out of reach where host programs keep them: in `/tmp` (the box has its own)
/// and, as root, under `/run`, even one made after the run opened.
#[test]
fn the_boxs_own_unix_sockets_work_and_the_hosts_are_out_of_reach() {
    if !common::layer_enforced(corral::sandbox::Layer::ReadOnlyHost) {
        return;
    }
    let fx = Fixture::new();
    let run = fx.approving_run(config(SandboxMode::WorkspaceWrite));
    let in_tmp = outside(&fx).join("host.sock");
    let mut listeners = vec![(
        in_tmp.clone(),
        std::os::unix::net::UnixListener::bind(&in_tmp).unwrap(),
    )];
    let run_dir = if rustix::process::geteuid().is_root() {
        let dir = tempfile::Builder::new()
            .prefix("corral-escape-")
            .tempdir_in("/run")
            .unwrap();
        let engine = dir.path().join("engine.sock");
        listeners.push((
            engine.clone(),
            std::os::unix::net::UnixListener::bind(&engine).unwrap(),
        ));
        Some(dir)
    } else {
        None
    };
    for (path, l) in &listeners {
        l.set_nonblocking(true).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o777)).unwrap();
    }
    let targets: Vec<String> = listeners
        .iter()
        .map(|(p, _)| format!("{:?}", p.display().to_string()))
        .collect();
    let code = format!(
        "import socket\n\
         a, b = socket.socketpair(); a.send(b'x'); print('pair', b.recv(1).decode())\n\
         srv = socket.socket(socket.AF_UNIX); srv.bind('own.sock'); srv.listen(1)\n\
         c = socket.socket(socket.AF_UNIX); c.connect('own.sock'); print('own ok')\n\
         for path in [{}]:\n\
         \x20   s = socket.socket(socket.AF_UNIX)\n\
         \x20   try:\n\
         \x20       s.connect(path); print('REACHED', path)\n\
         \x20   except OSError as e:\n\
         \x20       print('refused', e.errno)\n",
        targets.join(", ")
    );
    let o = run
        .exec(&ExecRequest::new(["python3", "-c", code.as_str()]))
        .unwrap();
    for (path, l) in &listeners {
        assert!(
            l.accept().is_err(),
            "{} was reached: {}",
            path.display(),
            o.observation
        );
    }
    let out = stdout(&o);
    assert!(o.status.success(), "{}", o.observation);
    assert!(out.contains("pair x") && out.contains("own ok"), "{out}");
    assert!(!out.contains("REACHED"), "{out}");
    drop(run_dir);
}
