//! A protected path that did not exist cannot be protected; when a sandboxed call creates
//! one, the result and the trace say so, and a new corral.toml is untrusted.

use crate::common;

use std::time::Duration;

use common::Fixture;
use corral::{
    Config, ExecRequest, Policy, PolicyFiles, Run, sandbox::Level, sandbox::SandboxConfig,
    sandbox::SandboxMode,
};

/// A run in `workspace-write` whose policy lets everything run.
fn boxed_run(fx: &Fixture) -> Run {
    Run::builder(fx.workspace())
        .store(fx.store())
        .config(Config {
            sandbox: SandboxConfig::mode(SandboxMode::WorkspaceWrite),
            ..Config::default()
        })
        .policy(Policy::permissive())
        .open()
        .unwrap()
}

#[test]
fn a_corral_toml_created_in_the_sandbox_is_reported_and_untrusted() {
    let fx = Fixture::new();
    let run = boxed_run(&fx);
    let r = run
        .exec(
            &ExecRequest::new([
                "sh",
                "-c",
                "printf '[exec]\\nallow = [\"*\"]\\n' > corral.toml",
            ])
            .timeout(Duration::from_secs(60)),
        )
        .unwrap();
    assert!(r.status.success(), "{}", r.observation);
    assert!(fx.workspace().join("corral.toml").exists());
    assert!(
        r.observation
            .contains("sandbox: protected path created during the call")
            && r.observation.contains("corral.toml"),
        "{}",
        r.observation
    );
    let report = r.sandbox.clone().unwrap();
    assert!(
        report
            .layers
            .iter()
            .any(|l| l.layer == corral::sandbox::Layer::ProtectedPaths
                && l.level == Level::None
                && l.detail.contains("corral.toml")),
        "{report:?}"
    );
    let store = corral::trace::Store::open(&fx.store()).unwrap();
    let rows = store.sandbox_events(r.step.id).unwrap();
    assert!(
        rows.iter().any(|e| e.layer == "protected paths"
            && e.level == "none"
            && e.detail.contains("corral.toml")),
        "{rows:?}"
    );
    // A call that creates nothing protected says nothing of it.
    let r = run.exec(&ExecRequest::new(["true"])).unwrap();
    assert!(
        !r.observation.contains("created during the call"),
        "{}",
        r.observation
    );

    // The next run does not take its allow.
    let trust = corral::TrustStore::at(fx.dir.path().join("trusted"));
    let policy = PolicyFiles::discover(&fx.workspace(), &[])
        .unwrap()
        .load_trusting(Policy::default(), Some(&trust))
        .unwrap();
    assert!(
        policy
            .notices()
            .iter()
            .any(|n| n.contains("is not trusted")),
        "{:?}",
        policy.notices()
    );
}

/// A `corral.toml` linked to a file the box does not show (out of the workspace) is no
/// mount of the box's: later calls run as before, and the link's target is unchanged.
#[test]
fn a_protected_path_linked_out_of_the_box_does_not_stop_later_calls() {
    let fx = Fixture::new();
    let outside = fx.dir.path().join("outside.toml");
    std::fs::write(&outside, "# the person's\n").unwrap();
    let run = boxed_run(&fx);
    let r = run
        .exec(&ExecRequest::new([
            "ln".to_string(),
            "-s".to_string(),
            outside.display().to_string(),
            "corral.toml".to_string(),
        ]))
        .unwrap();
    assert!(r.status.success(), "{}", r.observation);
    for _ in 0..2 {
        let r = run
            .exec(&ExecRequest::new(["sh", "-c", "echo still here"]))
            .unwrap();
        assert!(r.status.success(), "{}", r.observation);
        assert!(r.observation.contains("still here"), "{}", r.observation);
    }
    let r = run.exec(&ExecRequest::new(["rm", "corral.toml"])).unwrap();
    assert!(r.status.success(), "{}", r.observation);
    assert_eq!(
        std::fs::read_to_string(&outside).unwrap(),
        "# the person's\n"
    );
}

/// A call that makes the workspace root itself a git directory (no `.git`: a `HEAD`,
/// `objects/`, `refs/` and a `config` naming an fsmonitor) has what git would read there
/// moved out: the person's next `git status` runs nothing the box wrote.
#[test]
fn a_workspace_root_made_a_git_directory_runs_nothing_on_the_host() {
    let fx = Fixture::new();
    let ran = fx.dir.path().join("payload-ran");
    let run = boxed_run(&fx);
    let script = format!(
        "mkdir -p objects refs/heads && printf 'ref: refs/heads/main\\n' > HEAD && \
         printf '[core]\\n\\trepositoryformatversion = 0\\n\\tbare = false\\n\\tworktree = .\\n\\tfsmonitor = \"touch {}\"\\n' > config",
        ran.display()
    );
    let r = run.exec(&ExecRequest::new(["sh", "-c", &script])).unwrap();
    assert!(r.status.success(), "{}", r.observation);
    assert!(
        r.observation.contains("moved config") && r.observation.contains("moved HEAD"),
        "{}",
        r.observation
    );
    assert!(!fx.workspace().join("config").exists());
    drop(run);
    person_runs_git_status(&fx);
    assert!(!ran.exists(), "git ran the box's fsmonitor");
}

/// A handle that plants a `.git` after its start returned (its `shell_start` answered at
/// once) has it moved out too: after the next call of the run, and said in that call's
/// result; the person's `git status` runs nothing the box wrote.
#[test]
fn a_git_directory_a_handle_makes_later_is_moved_out_too() {
    use corral::handle::{HandleState, PollRequest, StartRequest};
    let fx = Fixture::new();
    let ran = fx.dir.path().join("payload-ran");
    let run = boxed_run(&fx);
    let line = format!(
        "head -c 1 >/dev/null; git init -q . && git config core.fsmonitor 'touch {}'",
        ran.display()
    );
    let handle = run
        .shell_start(&StartRequest {
            stdin: true,
            ..StartRequest::new(line)
        })
        .unwrap()
        .handle;
    // Nothing yet: the handle waits for its input.
    assert!(!fx.workspace().join(".git").exists());
    run.shell_write(&corral::handle::WriteRequest {
        handle,
        text: "go\n".into(),
        yield_ms: Some(0),
        eof: true,
    })
    .unwrap();
    let mut said = String::new();
    loop {
        let poll = run
            .shell_poll(&PollRequest {
                handle,
                wait_ms: Some(10_000),
                strip_ansi: None,
            })
            .unwrap();
        said.push_str(&poll.observation);
        if poll.state != HandleState::Running {
            break;
        }
    }
    assert!(!fx.workspace().join(".git").exists(), "{said}");
    assert!(
        said.contains("moved .git") && said.contains("by handle"),
        "{said}"
    );
    drop(run);
    person_runs_git_status(&fx);
    assert!(!ran.exists(), "git ran the box's fsmonitor");
}

/// A handle that plants `.git` again whenever it is gone, from a session of its own, and
/// shrugs off SIGTERM, leaves
/// none behind when the run ends: the run's last sweep comes once nothing of the handle
/// runs (its PID namespace's init gone, or its cgroup or processes), so nothing plants
/// after it. With and without a PID namespace; a few runs each, since the planter's last
/// plant lands at a different moment of the kill each time.
#[test]
fn a_handle_replanting_git_leaves_none_after_the_run_ends() {
    use corral::handle::StartRequest;
    for pid_namespace in [true, false] {
        for round in 0..3 {
            let fx = Fixture::new();
            let ran = fx.dir.path().join("payload-ran");
            let run = Run::builder(fx.workspace())
                .store(fx.store())
                .config(Config {
                    sandbox: SandboxConfig::mode(SandboxMode::WorkspaceWrite),
                    pid_namespace,
                    // SIGTERM is ignored: the kill comes at once.
                    kill_grace: Duration::from_millis(100),
                    ..Config::default()
                })
                .policy(Policy::permissive())
                .approver(corral::approve::ApproveAll)
                .open()
                .unwrap();
            // Several planters, so that one is always between its `git init` and its
            // `git config` when the end comes.
            let planter = format!(
                "trap '' TERM HUP INT\n\
                 plant() {{ while :; do grep -qs fsmonitor .git/config || {{ git init -q . \
                 2>/dev/null; git config core.fsmonitor 'touch {}' 2>/dev/null; }}; done; }}\n\
                 plant & plant & plant\n",
                ran.display()
            );
            std::fs::write(fx.workspace().join("plant.sh"), planter).unwrap();
            // In a session of their own under a living parent: out of the handle's
            // process group, and no orphans of the namespace's init until it dies.
            std::fs::write(
                fx.workspace().join("start.sh"),
                "setsid sh plant.sh & wait\n",
            )
            .unwrap();
            run.shell_start(&StartRequest::new("sh start.sh")).unwrap();
            let planted = fx.workspace().join(".git/config");
            let until = std::time::Instant::now() + Duration::from_secs(30);
            while !std::fs::read_to_string(&planted).is_ok_and(|c| c.contains("fsmonitor")) {
                assert!(
                    std::time::Instant::now() < until,
                    "the planter never planted"
                );
                std::thread::sleep(Duration::from_millis(5));
            }
            drop(run);
            let left = std::fs::read_to_string(&planted).unwrap_or_default();
            assert!(
                !left.contains("fsmonitor"),
                "round {round} (PID namespace {pid_namespace}): a .git planted after the \
                 last sweep is left in the workspace:\n{left}"
            );
            person_runs_git_status(&fx);
            assert!(!ran.exists(), "git ran the box's fsmonitor");
        }
    }
}

/// The person's `git status` in the workspace, on the host, after the run: git looks no
/// higher than the fixture's directory.
fn person_runs_git_status(fx: &Fixture) {
    let _ = std::process::Command::new("git")
        .arg("status")
        .current_dir(fx.workspace())
        .env("GIT_CEILING_DIRECTORIES", fx.dir.path())
        .output()
        .unwrap();
}
