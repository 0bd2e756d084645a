//! The prelude every integration test shares: a fresh workspace and store, and the
//! hermetic helper program.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use corral::{Config, Run};

/// A workspace and a trace store in a temporary directory, removed when dropped.
pub struct Fixture {
    pub dir: tempfile::TempDir,
}

impl Fixture {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("ws")).unwrap();
        Self { dir }
    }

    pub fn workspace(&self) -> PathBuf {
        self.dir.path().join("ws")
    }

    pub fn store(&self) -> PathBuf {
        self.dir.path().join("state").join("trace.db")
    }

    pub fn run(&self) -> Run {
        self.run_with(Config::default())
    }

    /// A run opened as a command line opens one (its trace's log kept between runs), in a
    /// PID namespace where the host allows one, allowing whatever no rule denies.
    pub fn command_line(&self) -> corral::RunBuilder {
        Run::builder(self.workspace())
            .store(self.store())
            .config(Config {
                pid_namespace: true,
                ..Config::default()
            })
            .policy(corral::Policy::permissive())
            .keep_trace_log()
    }

    /// A run that allows whatever no rule denies and approves whatever is asked (inline
    /// scripts, interpreters' one-liners): these tests are about what then happens.
    pub fn approving_run(&self, config: Config) -> Run {
        Run::builder(self.workspace())
            .store(self.store())
            .config(config)
            .policy(corral::Policy::permissive())
            .approver(corral::approve::ApproveAll)
            .open()
            .unwrap()
    }

    /// A run that allows whatever no rule denies: these tests are about running.
    pub fn run_with(&self, config: Config) -> Run {
        Run::builder(self.workspace())
            .store(self.store())
            .config(config)
            .policy(corral::Policy::permissive())
            .open()
            .unwrap()
    }
}

/// A test's workspace goes with its temporary directory, and so does the build cache a
/// `workspace-write` run made for it, which is kept outside it (in the real
/// `~/.cache/corral/workspaces`, where the tests run with the user's own environment).
impl Drop for Fixture {
    fn drop(&mut self) {
        if let Ok(workspace) = self.workspace().canonicalize()
            && let Some(cache) = corral::sandbox::cache_dir_for(&workspace)
        {
            let _ = std::fs::remove_dir_all(cache);
        }
    }
}

/// The path of `corral-testbin`, built on first use when this test runs without the rest
/// of the workspace (e.g. `cargo test -p corral-core`).
pub fn testbin() -> String {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        // tests run from target/<profile>/deps/; the helper lives in target/<profile>/.
        let exe = std::env::current_exe().unwrap();
        let profile_dir = exe.parent().and_then(Path::parent).unwrap().to_path_buf();
        let bin = profile_dir.join("corral-testbin");
        if !bin.exists() {
            let status = std::process::Command::new(env!("CARGO"))
                .args(["build", "-p", "test-bins", "--bin", "corral-testbin"])
                .status()
                .unwrap();
            assert!(status.success(), "building corral-testbin failed");
        }
        // Boxed calls see neither a checkout in a home (the tests give corral a HOME of
        // their own) nor one under /tmp (the box has its own): a copy in the scratch root.
        corral_test_support::runnable_copy(&bin)
    })
    .display()
    .to_string()
}

#[allow(unused_imports)]
pub use corral_test_support::{cleanup, marker, processes_with, survivors_after, wait_for};

/// One call of `corral-testbin MODE MS MARKER` (a process tree the helper builds), run to
/// its end through `exec` in a fresh run, which stays open while the caller looks.
pub struct TreeCall {
    pub outcome: corral::Outcome,
    /// How long the call took to return.
    pub took: std::time::Duration,
    /// The marker in every argv of the tree, to find what is left of it.
    pub mark: String,
    _run: Run,
    _fx: Fixture,
}

/// Run the tree `mode` through `exec` with `config` (and `timeout`, if any); `name` makes
/// its marker.
pub fn exec_tree(
    config: Config,
    mode: &str,
    ms: &str,
    name: &str,
    timeout: Option<std::time::Duration>,
) -> TreeCall {
    let fx = Fixture::new();
    let run = fx.run_with(config);
    let mark = marker(name);
    let mut request = corral::ExecRequest::new([testbin(), mode.into(), ms.into(), mark.clone()]);
    if let Some(timeout) = timeout {
        request = request.timeout(timeout);
    }
    let started = std::time::Instant::now();
    let outcome = run.exec(&request).unwrap();
    TreeCall {
        outcome,
        took: started.elapsed(),
        mark,
        _run: run,
        _fx: fx,
    }
}

/// Skip a containment test this host cannot run, saying why, or fail it where the host
/// is known to have what it needs: `.ci/run` sets `CORRAL_TEST_EXPECT_CONTAINMENT=1` when
/// it runs as root with a cgroup v2 hierarchy and PID namespaces, so a layer that went
/// missing there is a failure, not a quiet skip.
pub fn skip(why: &str) {
    if std::env::var_os("CORRAL_TEST_EXPECT_CONTAINMENT").is_some_and(|v| v == "1") {
        panic!("{why}, but CORRAL_TEST_EXPECT_CONTAINMENT=1 says this host has it");
    }
    eprintln!("skipped: {why}");
}

/// Whether this host enforces `layer` in full for this process's user, for a test of
/// what the layer holds back: where it does not (an ordinary user has no mount, PID or
/// network namespace, nor a cgroup), the test is skipped through [`skip`], naming the
/// layer and why, so that as root with every layer (`CORRAL_TEST_EXPECT_CONTAINMENT=1`) a
/// missing one fails instead.
pub fn layer_enforced(layer: corral::sandbox::Layer) -> bool {
    let report = corral::sandbox::enforcement::host_report();
    match report.layers.iter().find(|l| l.layer == layer) {
        Some(l) if l.level == corral::sandbox::Level::Full => true,
        Some(l) => {
            skip(&format!(
                "needs root: {layer} is {} here ({})",
                l.level.name(),
                l.detail
            ));
            false
        }
        None => {
            skip(&format!("needs root: no {layer} layer here"));
            false
        }
    }
}
