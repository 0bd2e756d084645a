//! Unix sockets in the box: a command's own work (a `multiprocessing` pool, `asyncio`,
//! a server on a socket in the workspace), and none of the host's sockets: not in
//! `/tmp`, not in the runtime directory, not the agent `SSH_AUTH_SOCK` names, not one
//! under `/run`. Judged by the listeners: none of them is ever connected to.

use crate::common;

use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{Scratch, UserScratch, is_root, text};

/// What the command runs: its own sockets first, then a connect to each host socket
/// named, one line per socket.
const PROBE: &str = r#"
import asyncio, multiprocessing, os, socket, sys

def square(x):
    return x * x

if __name__ == "__main__":
    with multiprocessing.Pool(2) as pool:
        print("pool", pool.map(square, [1, 2, 3]))

    async def serve():
        async def echo(reader, writer):
            writer.write(await reader.read(5))
            await writer.drain()
            writer.close()
        server = await asyncio.start_unix_server(echo, path="own.sock")
        reader, writer = await asyncio.open_unix_connection("own.sock")
        writer.write(b"hello")
        await writer.drain()
        print("own", (await reader.read(5)).decode())
        writer.close()
        server.close()
        await server.wait_closed()
        os.unlink("own.sock")
    asyncio.run(serve())

    for path in sys.argv[1:]:
        s = socket.socket(socket.AF_UNIX)
        try:
            s.connect(path)
            print("REACHED", path)
        except OSError as e:
            print("unreachable", path, e.errno)
"#;

/// A listener at `path` anyone may connect to (a socket's write permission is what
/// `connect` needs), which the test later asks whether anything did.
fn listen(path: &Path) -> UnixListener {
    let l = UnixListener::bind(path).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o777)).unwrap();
    l.set_nonblocking(true).unwrap();
    l
}

/// A directory outside `/tmp` that this process and the ordinary user can write:
/// `/var/tmp`'s, made fresh. `None` where there is none.
fn outside_tmp() -> Option<tempfile::TempDir> {
    let dir = tempfile::Builder::new()
        .prefix("corral-sockets-")
        .tempdir_in("/var/tmp")
        .ok()?;
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    Some(dir)
}

struct HostSockets {
    listeners: Vec<(PathBuf, UnixListener)>,
    _outside: Option<tempfile::TempDir>,
    _run: Option<RunDir>,
    runtime: Option<PathBuf>,
    agent: Option<PathBuf>,
}

/// A directory under `/run` (as root only), removed at the end.
struct RunDir(PathBuf);

impl Drop for RunDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

impl HostSockets {
    /// Listeners where host programs keep theirs: in `/tmp` (`in_tmp`, a directory
    /// there), a runtime directory and an agent's socket outside it, and one under `/run`
    /// where this process may make one.
    ///
    /// With `named` false, no runtime directory or agent: they are named to corral by
    /// its environment, which a test can set only for a process it starts itself.
    fn new(in_tmp: &Path, named: bool) -> Self {
        let mut listeners = Vec::new();
        let x11 = in_tmp.join("x11.sock");
        listeners.push((x11.clone(), listen(&x11)));
        let outside = if named { outside_tmp() } else { None };
        let (mut runtime, mut agent) = (None, None);
        if let Some(dir) = &outside {
            let rt = dir.path().join("runtime");
            std::fs::create_dir(&rt).unwrap();
            std::fs::set_permissions(&rt, std::fs::Permissions::from_mode(0o777)).unwrap();
            let bus = rt.join("bus");
            listeners.push((bus.clone(), listen(&bus)));
            let ssh = dir.path().join("agent.sock");
            listeners.push((ssh.clone(), listen(&ssh)));
            runtime = Some(rt);
            agent = Some(ssh);
        } else if named {
            eprintln!("note: no /var/tmp here; the runtime directory and agent are not tried");
        }
        let run = if is_root() {
            let dir = tempfile::Builder::new()
                .prefix("corral-test-")
                .tempdir_in("/run")
                .unwrap()
                .keep();
            std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
            let engine = dir.join("engine.sock");
            listeners.push((engine.clone(), listen(&engine)));
            Some(RunDir(dir))
        } else {
            None
        };
        HostSockets {
            listeners,
            _outside: outside,
            _run: run,
            runtime,
            agent,
        }
    }

    fn apply(&self, cmd: &mut Command) {
        if let Some(rt) = &self.runtime {
            cmd.env("XDG_RUNTIME_DIR", rt);
        }
        if let Some(agent) = &self.agent {
            cmd.env("SSH_AUTH_SOCK", agent);
        }
    }

    fn args(&self) -> Vec<String> {
        self.listeners
            .iter()
            .map(|(p, _)| p.display().to_string())
            .collect()
    }

    /// Every listener still has nothing waiting: nothing connected to it.
    fn untouched(&self, what: &str) {
        for (path, l) in &self.listeners {
            assert!(
                l.accept().is_err(),
                "{}: a connection reached {}",
                what,
                path.display()
            );
        }
    }
}

fn probe_args(sockets: &HostSockets, mode: &str) -> Vec<String> {
    let mut args: Vec<String> = [
        "exec",
        "--sandbox",
        mode,
        "--yes",
        "--",
        "python3",
        "probe.py",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.extend(sockets.args());
    args
}

fn check(out: &std::process::Output, sockets: &HostSockets) {
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    sockets.untouched(&stdout);
    assert!(out.status.success(), "{stdout}{stderr}");
    assert!(stdout.contains("pool [1, 4, 9]"), "{stdout}{stderr}");
    assert!(stdout.contains("own hello"), "{stdout}{stderr}");
    assert!(!stdout.contains("REACHED"), "{stdout}");
    assert!(
        stderr.contains("corral: sandbox: workspace-write") && !stderr.contains("socket families"),
        "the status line names no missing socket layer: {stderr}"
    );
}

/// Whether a box here has its own `/tmp` (a mount namespace and `mount_setattr`), as
/// `corral sandbox report` says; where it has not, Unix sockets stay refused.
fn own_tmp_here(report: &str) -> bool {
    report.contains("of the run's own")
}

#[test]
fn a_box_opens_its_own_unix_sockets_and_reaches_none_of_the_hosts() {
    let s = Scratch::new();
    let report = text(&s.output(&["sandbox", "report"]).stdout);
    if !own_tmp_here(&report) {
        common::skip("no /tmp of the box's own here (no mount namespace or mount_setattr)");
        return;
    }
    std::fs::write(s.workspace().join("probe.py"), PROBE).unwrap();
    let sockets = HostSockets::new(s.dir.path(), true);
    for mode in ["workspace-write", "read-only"] {
        let args = probe_args(&sockets, mode);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let mut cmd = s.corral(&args);
        sockets.apply(&mut cmd);
        let out = cmd.output().unwrap();
        if mode == "read-only" {
            // Its own socket needs a writable workspace; the pool and the host's do not.
            let stdout = text(&out.stdout);
            sockets.untouched(&stdout);
            assert!(stdout.contains("pool [1, 4, 9]"), "{stdout}");
            continue;
        }
        check(&out, &sockets);
    }
}

#[test]
fn an_ordinary_users_box_reaches_none_of_the_hosts_sockets() {
    let Some(u) = UserScratch::new() else {
        return;
    };
    let report = text(&u.corral(&["sandbox", "report"]).output().unwrap().stdout);
    if !own_tmp_here(&report) {
        common::not_expecting_a_whole_box(&report);
        common::skip("no /tmp of the box's own for this user here");
        return;
    }
    std::fs::write(u.workspace().join("probe.py"), PROBE).unwrap();
    if is_root() {
        common::chown_tree(u.s.dir.path(), common::UNPRIVILEGED);
    }
    let sockets = HostSockets::new(u.s.dir.path(), true);
    let args = probe_args(&sockets, "workspace-write");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut cmd = u.corral(&args);
    sockets.apply(&mut cmd);
    check(&cmd.output().unwrap(), &sockets);
}

#[test]
fn the_box_has_a_tmp_of_the_runs_own_and_the_hosts_stays_as_it_was() {
    let s = Scratch::new();
    let report = text(&s.output(&["sandbox", "report"]).stdout);
    if !own_tmp_here(&report) {
        common::skip("no /tmp of the box's own here");
        return;
    }
    // A file of the host's in `/tmp`: unseen, unchanged.
    let host_file = s.dir.path().join("host-file");
    std::fs::write(&host_file, "host").unwrap();
    let script = format!(
        "cat {f}; echo box > {f}; ls /tmp; echo made > /tmp/made-in-the-box; \
         test -d \"$TMPDIR\" && echo tmpdir-ok; cat /tmp/made-in-the-box",
        f = host_file.display()
    );
    let out = s.output(&[
        "exec",
        "--sandbox",
        "workspace-write",
        "--yes",
        "--",
        "sh",
        "-c",
        &script,
    ]);
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("tmpdir-ok"),
        "{stdout}{}",
        text(&out.stderr)
    );
    assert!(stdout.contains("made"), "{stdout}");
    assert!(
        !stdout.contains("host\n"),
        "the host's file was read: {stdout}"
    );
    assert_eq!(std::fs::read_to_string(&host_file).unwrap(), "host");
    assert!(
        !Path::new("/tmp/made-in-the-box").exists(),
        "the box wrote the host's /tmp"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn through_mcp_a_box_opens_its_own_sockets_and_none_of_the_hosts() {
    let s = Scratch::new();
    let report = text(&s.output(&["sandbox", "report"]).stdout);
    if !own_tmp_here(&report) {
        common::skip("no /tmp of the box's own here");
        return;
    }
    let session =
        crate::mcp_common::Session::start_with(Some(crate::mcp_common::PERMISSIVE), None, &[])
            .await;
    std::fs::write(session.workspace().join("probe.py"), PROBE).unwrap();
    // Made after the server opened its run: each call looks for the host's sockets again.
    let sockets = HostSockets::new(s.dir.path(), false);
    let mut argv = vec!["python3".to_string(), "probe.py".to_string()];
    argv.extend(sockets.args());
    let result = session
        .call("exec", serde_json::json!({ "argv": argv }))
        .await;
    let shown = crate::mcp_common::text(&result);
    sockets.untouched(&shown);
    assert!(shown.contains("pool [1, 4, 9]"), "{shown}");
    assert!(shown.contains("own hello"), "{shown}");
    assert!(!shown.contains("REACHED"), "{shown}");
    session.client.cancel().await.unwrap();
}

/// Connects to each socket named and sends it bytes; `REACHED` for each it could.
const SEND: &str = r#"
import socket, sys
for path in sys.argv[1:]:
    s = socket.socket(socket.AF_UNIX)
    try:
        s.connect(path)
        s.sendall(b"canary")
        print("REACHED", path)
    except OSError as e:
        print("unreachable", path, e.errno)
"#;

/// A directory made fresh under `parent`, anyone may pass and write, removed when dropped.
fn open_dir_in(parent: &str) -> Option<tempfile::TempDir> {
    let dir = tempfile::Builder::new()
        .prefix("corral-test-")
        .tempdir_in(parent)
        .ok()?;
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    Some(dir)
}

/// Host listeners no place covers by name: one under `/var/lib` (where this process may
/// make a directory there) and one in a directory beside a workspace outside `/tmp`. The
/// box (as this process's user, or as the ordinary user with `as_user`) connects to each
/// and sends bytes; neither gets anything.
fn listeners_by_path_get_nothing(as_user: bool) {
    let Some(base) = open_dir_in("/var/tmp") else {
        common::skip("no /var/tmp to put a workspace outside /tmp in");
        return;
    };
    let ws = base.path().join("ws");
    let beside = base.path().join("beside");
    for dir in [&ws, &beside] {
        std::fs::create_dir(dir).unwrap();
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    }
    std::fs::write(ws.join("send.py"), SEND).unwrap();
    let var_lib = open_dir_in("/var/lib");
    let mut paths = vec![beside.join("svc.sock")];
    paths.extend(var_lib.as_ref().map(|d| d.path().join("svc.sock")));
    let listeners: Vec<UnixListener> = paths.iter().map(|p| listen(p)).collect();
    let mut args = vec![
        "exec",
        "--sandbox",
        "workspace-write",
        "--yes",
        "--",
        "python3",
        "send.py",
    ];
    let shown: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    args.extend(shown.iter().map(String::as_str));
    let user = if as_user {
        match UserScratch::new() {
            Some(u) => Some(u),
            None => return,
        }
    } else {
        None
    };
    let s = Scratch::new();
    let mut cmd = match &user {
        Some(u) => {
            if is_root() {
                common::chown_tree(&ws, common::UNPRIVILEGED);
            }
            u.corral(&args)
        }
        None => s.corral(&args),
    };
    // The default box (workspace-write), in a workspace beside the listener's directory.
    let out = cmd.current_dir(&ws).output().unwrap();
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    for (path, l) in paths.iter().zip(&listeners) {
        assert!(
            l.accept().is_err(),
            "a connection reached {}:\n{stdout}{stderr}",
            path.display()
        );
    }
    assert!(!stdout.contains("REACHED"), "{stdout}{stderr}");
    assert!(
        stdout.matches("unreachable").count() == paths.len(),
        "the probe ran: {stdout}{stderr}"
    );
}

#[test]
fn a_box_reaches_no_host_listener_by_path_outside_tmp_and_run() {
    listeners_by_path_get_nothing(false);
}

#[test]
fn an_ordinary_users_box_reaches_no_host_listener_by_path_outside_tmp_and_run() {
    listeners_by_path_get_nothing(true);
}
