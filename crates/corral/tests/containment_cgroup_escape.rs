//! A command running as root could move itself out of its call's cgroup by writing its
//! pid into another group's `cgroup.procs`. In a sandboxed mode it cannot: the cgroup
//! file system is outside every writable root, so the write fails and the process stays
//! in the group that ends it. Unsandboxed, a process corral started itself is still ended
//! by its pid (unreaped, the pid cannot have been reused), and a deeper descendant that
//! moves itself out dies with the call's PID namespace where there is one.

use crate::common;

use std::time::Duration;

use common::{Fixture, cleanup, marker, survivors_after, testbin};
use corral::{Config, ExecRequest, sandbox::SandboxConfig, sandbox::SandboxMode};

/// The unified hierarchy's root, where a root command would move itself to.
fn cgroup_root() -> Option<&'static str> {
    ["/sys/fs/cgroup/unified", "/sys/fs/cgroup"]
        .into_iter()
        .find(|p| std::path::Path::new(p).join("cgroup.procs").exists())
}

/// A run with `config`, the hierarchy's root a command would move itself to, and the
/// containment calls get; `None` (and a note) where there is no cgroup v2 hierarchy.
fn contained(fx: &Fixture, config: Config) -> Option<(corral::Run, &'static str, &'static str)> {
    let Some(root) = cgroup_root() else {
        common::skip("no cgroup v2 hierarchy on this host");
        return None;
    };
    let run = fx.approving_run(config);
    let containment = run.exec(&ExecRequest::new(["true"])).unwrap().containment;
    Some((run, root, containment))
}

/// A short kill grace, so that a test ends soon after its call does.
fn short_grace() -> Config {
    Config {
        kill_grace: Duration::from_millis(200),
        ..Config::default()
    }
}

#[test]
fn a_sandboxed_command_cannot_leave_its_cgroup() {
    let fx = Fixture::new();
    let config = Config {
        sandbox: SandboxConfig::mode(SandboxMode::WorkspaceWrite),
        ..Config::default()
    };
    let Some((run, root, containment)) = contained(&fx, config) else {
        return;
    };
    if !containment.starts_with("cgroup") {
        common::skip("calls are not contained in cgroups on this host");
        return;
    }
    let mark = marker("escape");
    // Try to leave, then linger; the call's timeout ends whatever stayed in the group.
    let script = format!(
        "echo $$ > {root}/cgroup.procs && echo moved; exec {} sleep 60000 {mark}",
        testbin()
    );
    let outcome = run
        .exec(&ExecRequest::new(["sh", "-c", &script]).timeout(Duration::from_millis(800)))
        .unwrap();
    let left = survivors_after(&mark, Duration::from_secs(3));
    cleanup(&mark);
    assert!(
        !outcome.stdout.window.head.contains("moved"),
        "the write succeeded: {}",
        outcome.observation
    );
    assert!(
        left.is_empty(),
        "the process left its cgroup and survived: {left:?}"
    );
}

#[test]
fn a_command_that_leaves_its_cgroup_unsandboxed_is_still_ended() {
    let fx = Fixture::new();
    let Some((run, root, _)) = contained(&fx, short_grace()) else {
        return;
    };
    let mark = marker("escape-unsandboxed");
    let script = format!(
        "echo $$ > {root}/cgroup.procs; exec {} sleep 60000 {mark}",
        testbin()
    );
    let started = std::time::Instant::now();
    let outcome = run
        .exec(&ExecRequest::new(["sh", "-c", &script]).timeout(Duration::from_millis(500)))
        .unwrap();
    let left = survivors_after(&mark, Duration::from_secs(2));
    cleanup(&mark);
    assert!(
        matches!(outcome.status, corral::Status::TimedOut { .. }),
        "{}",
        outcome.observation
    );
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "the call waited on the escaped process"
    );
    assert!(left.is_empty(), "survivors: {left:?}");
}

/// [`contained`] with a short kill grace; `None` (and a note) where calls do not get
/// both a cgroup and a PID namespace.
fn namespaced(fx: &Fixture) -> Option<(corral::Run, &'static str, &'static str)> {
    let (run, root, containment) = contained(fx, short_grace())?;
    if !containment.starts_with("cgroup") || !containment.ends_with("+pid-ns") {
        common::skip(&format!(
            "containment {containment} has no cgroup and PID namespace here"
        ));
        return None;
    }
    Some((run, root, containment))
}

#[test]
fn a_descendant_that_leaves_its_cgroup_dies_with_the_pid_namespace() {
    let fx = Fixture::new();
    let Some((run, root, containment)) = namespaced(&fx) else {
        return;
    };
    let mark = marker("escape-grandchild");
    // A grandchild moves itself out while its parent stays in the group, then lingers;
    // the parent returns at once, so the call ends with the grandchild outside its unit.
    let script = format!(
        "sh -c 'echo $$ > {root}/cgroup.procs && touch moved && exec {} sleep 60000 {mark}' \
         >/dev/null 2>&1 & while [ ! -e moved ]; do sleep 0.02; done; echo started",
        testbin()
    );
    let outcome = run.exec(&ExecRequest::new(["sh", "-c", &script])).unwrap();
    let left = survivors_after(&mark, Duration::from_secs(2));
    cleanup(&mark);
    assert!(outcome.status.success(), "{}", outcome.observation);
    assert!(left.is_empty(), "{containment}: survivors {left:?}");
}

#[test]
fn an_escaped_descendant_that_ignores_sigterm_is_still_ended() {
    let fx = Fixture::new();
    let Some((run, root, containment)) = namespaced(&fx) else {
        return;
    };
    let mark = marker("escape-stubborn");
    // The command's own process stays in the group, alive and deaf to SIGTERM, until the
    // timeout; its child has left the group (the parent waits until it has) and ignores
    // SIGTERM too. Once the parent is killed with the group, the child is an orphan of
    // the namespace's init, and it is ended there, as an orphan or with the namespace
    // (without the namespace it would have gone to the host's init, out of reach).
    let script = format!(
        "sh -c 'echo $$ > {root}/cgroup.procs && : > moved && \
         exec {bin} sleep 60000 --ignore-term {mark}' >/dev/null 2>&1 & \
         while [ ! -e moved ]; do sleep 0.02; done; exec {bin} sleep 60000 --ignore-term {mark}",
        bin = testbin()
    );
    let outcome = run
        .exec(&ExecRequest::new(["sh", "-c", &script]).timeout(Duration::from_secs(2)))
        .unwrap();
    let left = survivors_after(&mark, Duration::from_secs(2));
    cleanup(&mark);
    assert!(
        matches!(outcome.status, corral::Status::TimedOut { .. }),
        "{}",
        outcome.observation
    );
    assert!(left.is_empty(), "{containment}: survivors {left:?}");
}
