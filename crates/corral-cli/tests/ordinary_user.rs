//! corral run as an ordinary user, as most people run it (from root, the test becomes
//! `nobody` with a home of its own): nothing hangs where a layer is missing, the report
//! says why each is missing, and a signal ends corral and what it started.

use crate::common;

use std::io::Read;
use std::time::Duration;

use common::{UserScratch, testbin, text, wait_bounded};

/// A hang, not a speed: the first command takes milliseconds.
const HANG: Duration = Duration::from_secs(20);

/// Start `cmd` with its output piped, wait for it within [`HANG`], and read what it wrote
/// (a short output, which fits the pipes while it runs).
fn finished(
    mut cmd: std::process::Command,
    what: &str,
) -> (std::process::ExitStatus, String, String) {
    let mut child = cmd
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let status = wait_bounded(&mut child, HANG, what);
    let out = read_all(child.stdout.take());
    let err = read_all(child.stderr.take());
    (status, out, err)
}

#[test]
fn the_readmes_first_command_prints_its_line() {
    let Some(u) = UserScratch::new() else { return };
    let cmd = u.corral(&[
        "exec",
        "--",
        "echo",
        "hello from corral; no shell was harmed",
    ]);
    let (status, out, err) = finished(cmd, "corral exec -- echo");
    assert!(status.success(), "{status}: {err}");
    assert_eq!(out, "hello from corral; no shell was harmed\n", "{err}");
}

#[test]
fn a_sandboxed_call_and_a_line_end_too() {
    let Some(u) = UserScratch::new() else { return };
    for args in [
        &[
            "exec",
            "--sandbox",
            "workspace-write",
            "--",
            "sh",
            "-c",
            "echo x > f; cat f",
        ][..],
        &["shell", "--sandbox", "workspace-write", "echo a | tr a b"],
        &["exec", "--pid-namespace", "on", "--", "true"],
    ] {
        let mut child = u
            .corral(args)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let status = wait_bounded(&mut child, HANG, &args.join(" "));
        assert!(status.success(), "{args:?}: {status}");
    }
}

#[test]
fn the_sandbox_report_names_each_missing_layer_and_why() {
    let Some(u) = UserScratch::new() else { return };
    let cmd = u.corral(&["sandbox", "report", "--json"]);
    let (status, out, err) = finished(cmd, "corral sandbox report");
    assert!(status.success(), "{status}: {err}");
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    let layers = report["layers"].as_array().expect("layers");
    assert!(!layers.is_empty(), "{out}");
    for layer in layers.iter().filter(|l| l["level"] != "full") {
        let detail = layer["detail"].as_str().unwrap_or_default();
        // Each missing layer says what it leaves open, then why: "…: no mount
        // namespace, because corral is not root (no CAP_SYS_ADMIN), and …".
        let why = [
            "because",
            "not root",
            "not available",
            "missing",
            "ABI",
            "absent",
        ]
        .iter()
        .any(|w| detail.contains(w));
        assert!(why, "{} gives no reason: {detail}", layer["layer"]);
    }
}

#[test]
fn sigterm_ends_a_call_and_its_tree() {
    let Some(u) = UserScratch::new() else { return };
    let marker = format!("corral-user-term-{}", std::process::id());
    let mut child = u
        .corral(&["exec", "--", &testbin(), "pair", "60000", &marker])
        .spawn()
        .unwrap();
    let until = std::time::Instant::now() + HANG;
    while corral_test_support::processes_with(&marker).len() < 3 {
        assert!(std::time::Instant::now() < until, "the tree did not start");
        std::thread::sleep(Duration::from_millis(10));
    }
    let corral = child.id();
    kill("-TERM", corral);
    let status = wait_bounded(&mut child, HANG, "corral exec after SIGTERM");
    let left = corral_test_support::processes_with(&marker).len();
    corral_test_support::cleanup(&marker);
    assert_eq!(status.code(), Some(143), "{status}");
    assert_eq!(left, 0, "processes outlived corral");
}

#[test]
fn a_signal_no_one_answers_ends_corral_at_once() {
    // A model that never answers: `corral run` waits on it, and the first SIGTERM must
    // still end corral with 128+15 rather than leave it waiting or let it die by signal.
    let Some(u) = UserScratch::new() else { return };
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}/v1", silent.local_addr().unwrap());
    let mut child = u
        .corral(&[
            "run",
            "say done",
            "--verify",
            "true",
            "--model",
            "openai:silent",
            "--yes",
        ])
        .env("OPENAI_BASE_URL", &base)
        .env("OPENAI_API_KEY", "sk-test")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Once the model's request has arrived, corral is waiting on it.
    let (_conn, _) = silent.accept().unwrap();
    // `setpriv` execs corral, so the child's pid is corral's.
    kill("-TERM", child.id());
    let status = wait_bounded(&mut child, HANG, "corral run after SIGTERM");
    let err = read_all(child.stderr.take());
    assert_eq!(
        status.code(),
        Some(143),
        "{status}: {}",
        text(err.as_bytes())
    );
}

/// What a finished child wrote on one of its pipes.
fn read_all(pipe: Option<impl Read>) -> String {
    let mut text = String::new();
    pipe.expect("piped").read_to_string(&mut text).unwrap();
    text
}

fn kill(sig: &str, pid: u32) {
    let status = std::process::Command::new("kill")
        .args([sig, &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

#[test]
fn corral_mcp_says_first_whether_it_asks() {
    let Some(u) = UserScratch::new() else { return };
    // No client: the server says its posture, then ends at the end of its input.
    let mut cmd = u.corral(&["mcp"]);
    cmd.stdin(std::process::Stdio::null());
    let (_, _, err) = finished(cmd, "corral mcp with no client");
    let first = err.lines().next().unwrap_or_default();
    if first.contains("Every confinement layer is enforced") {
        return;
    }
    // Where the kernel gives a user namespaces, the box is whole for an ordinary user too.
    assert!(!user_namespaces_here(), "{err}");
    assert!(
        first.starts_with("corral mcp: Not every confinement layer is enforced"),
        "{err}"
    );
    assert!(first.contains("asked about"), "{first}");
}

/// Whether this host gives an ordinary user the namespaced box (a user namespace of
/// corral's own); where it does not, the tests below say why and pass over it, unless
/// `.ci/run` said user namespaces work here.
fn user_namespaces_here() -> bool {
    if corral_sys::userns::probe().allowed() {
        return true;
    }
    let why = format!("no user namespaces here: {:?}", corral_sys::userns::probe());
    assert!(
        std::env::var_os("CORRAL_TEST_EXPECT_USERNS").is_none_or(|v| v != "1"),
        "{why}, but CORRAL_TEST_EXPECT_USERNS=1 says this host has them"
    );
    eprintln!("skipped: {why}");
    false
}

#[test]
fn a_key_in_the_home_stays_unread_and_git_hooks_stay_unwritten() {
    let Some(u) = UserScratch::new() else { return };
    if !user_namespaces_here() {
        return;
    }
    let home = u.s.dir.path().join("home");
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::write(home.join(".ssh/id_ed25519"), "PRIVATE KEY 4f1c\n").unwrap();
    std::fs::create_dir_all(u.workspace().join(".git/hooks")).unwrap();
    if common::is_root() {
        for p in [home.join(".ssh"), home.join(".ssh/id_ed25519")] {
            std::os::unix::fs::chown(&p, Some(common::UNPRIVILEGED), Some(common::UNPRIVILEGED))
                .unwrap();
        }
        let git = u.workspace().join(".git");
        for p in [git.clone(), git.join("hooks")] {
            std::os::unix::fs::chown(&p, Some(common::UNPRIVILEGED), Some(common::UNPRIVILEGED))
                .unwrap();
        }
    }
    let box_ = ["--sandbox", "workspace-write", "--yes"];
    let read = |line: &str| {
        let mut args = vec!["shell"];
        args.extend(box_);
        args.push(line);
        finished(u.corral(&args), line)
    };
    for line in [
        "cat ~/.ssh/id_ed25519",
        "head -c 64 ~/.ssh/id_ed25519",
        "sh -c 'cat $HOME/.ssh/*'",
    ] {
        let (_, out, err) = read(line);
        assert!(
            !out.contains("PRIVATE KEY"),
            "{line} read the key: {out}{err}"
        );
    }
    let (status, _, err) = read("echo evil > .git/hooks/pre-commit");
    assert!(!status.success(), "{err}");
    assert!(
        !u.workspace().join(".git/hooks/pre-commit").exists(),
        "the hook was planted: {err}"
    );
    // What the box does not hide still works: the workspace, loopback.
    let (status, out, err) = read("echo ok > notes.txt && cat notes.txt");
    assert!(status.success(), "{err}");
    assert_eq!(out, "ok\n");
}

#[test]
fn the_report_lists_the_mount_pid_ipc_and_network_namespaces_as_enforced() {
    let Some(u) = UserScratch::new() else { return };
    if !user_namespaces_here() {
        return;
    }
    let (status, out, err) = finished(u.corral(&["sandbox", "report", "--json"]), "report");
    assert!(status.success(), "{err}");
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    for name in [
        "network",
        "read denies",
        "private /dev",
        "capabilities",
        "pid namespace",
        "ipc namespace",
    ] {
        let layer = report["layers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|l| l["layer"] == name)
            .unwrap_or_else(|| panic!("no {name} in {out}"));
        assert_eq!(layer["level"], "full", "{name}: {layer}");
    }
}

#[test]
fn a_timed_out_call_leaves_no_process_however_it_left_its_group() {
    let Some(u) = UserScratch::new() else { return };
    let namespaces = user_namespaces_here();
    let bin = testbin();
    for mode in ["full", "workspace-write"] {
        if mode != "full" && !namespaces {
            continue;
        }
        // In the background, in a session of its own, and a daemon's double fork.
        let marker = format!("corral-user-left-{mode}-{}", std::process::id());
        let script = format!(
            "{bin} sleep 100000 {marker} & setsid {bin} sleep 100000 {marker} & \
             {bin} daemon 100000 {marker}; wait"
        );
        let (status, _, err) = finished(
            u.corral(&[
                "exec",
                "--yes",
                "--sandbox",
                mode,
                "--timeout",
                "2s",
                "--",
                "sh",
                "-c",
                &script,
            ]),
            "a call that times out",
        );
        let left = corral_test_support::processes_with(&marker);
        corral_test_support::cleanup(&marker);
        assert_eq!(status.code(), Some(124), "{mode}: {status}: {err}");
        assert!(left.is_empty(), "{mode}: {left:?} outlived the call: {err}");
    }
}

#[test]
fn a_fork_bomb_stops_at_the_bound_without_a_cgroup() {
    let Some(u) = UserScratch::new() else { return };
    if !user_namespaces_here() {
        return;
    }
    let (_, out, err) = finished(
        u.corral(&[
            "exec",
            "--yes",
            "--sandbox",
            "workspace-write",
            "--",
            "sh",
            "-c",
            "i=0; while [ $i -lt 1500 ]; do sleep 30 & i=$((i+1)); done; echo tried",
        ]),
        "a fork bomb",
    );
    let err = err.to_lowercase();
    assert!(
        err.contains("fork") || err.contains("resource temporarily unavailable"),
        "{out}{err}"
    );
    // A resource limit never reaches the status line; the report names the bound.
    assert!(!err.contains("pids.max"), "{err}");
    let (_, report, _) = finished(u.corral(&["sandbox", "report"]), "the sandbox report");
    let bound = report
        .lines()
        .find(|l| l.trim_start().starts_with("cgroup pids.max"))
        .unwrap_or_default();
    assert!(
        bound.contains(" partial ") || bound.contains(" full "),
        "{report}"
    );
}

#[test]
fn a_command_cannot_read_corrals_own_process_in_any_mode() {
    let Some(u) = UserScratch::new() else { return };
    for mode in ["full", "workspace-write"] {
        let mut cmd = u.corral(&[
            "exec",
            "--sandbox",
            mode,
            "--",
            "sh",
            "-c",
            "for e in environ maps mem; do head -c 1 /proc/$PPID/$e >/dev/null 2>&1 && echo READ $e; done; \
             for d in fd cwd; do ls /proc/$PPID/$d/ >/dev/null 2>&1 && echo READ $d; done; \
             tr '\\0' '\\n' < /proc/$PPID/environ 2>/dev/null | grep -c CORRAL_TEST_KEY; true",
        ]);
        cmd.env("OPENAI_API_KEY", "CORRAL_TEST_KEY-sk-123");
        let (status, out, err) = finished(cmd, "corral exec reading its parent");
        assert!(status.success(), "{mode}: {status}: {err}");
        assert!(!out.contains("READ"), "{mode}: {out}");
        assert!(!out.contains("CORRAL_TEST_KEY-sk"), "{mode}: {out}");
    }
}
