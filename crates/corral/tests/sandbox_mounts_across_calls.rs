//! A run's sandboxed calls share one set of sandbox mounts once the first has made them
//! (`sandbox::shared`): judged from outside the box, every call of a run keeps what the
//! first had, and a protected or denied path replaced between calls is protected or
//! denied all the same in the calls after.

use crate::common;

use std::path::Path;
use std::time::Duration;

use common::Fixture;
use corral::{ExecRequest, Outcome, Run, sandbox::SandboxConfig, sandbox::SandboxMode};

/// How many calls each test makes: the run's mounts are made in the background after the
/// first, so most of the later calls take them as they are.
const CALLS: usize = 8;

fn open(fx: &Fixture, denied: &Path) -> Run {
    let mut sandbox = SandboxConfig::mode(SandboxMode::WorkspaceWrite);
    sandbox.deny_read = vec![denied.display().to_string()];
    Run::builder(fx.workspace())
        .store(fx.store())
        .config(corral::Config {
            sandbox,
            ..corral::Config::default()
        })
        .policy(corral::Policy::permissive())
        .approver(corral::approve::ApproveAll)
        .open()
        .unwrap()
}

fn sh(run: &Run, script: &str) -> Outcome {
    let outcome = run
        .exec(&ExecRequest::new(["sh", "-c", script]).timeout(Duration::from_secs(60)))
        .unwrap();
    assert!(outcome.status.success(), "{}", outcome.observation);
    outcome
}

fn stdout(o: &Outcome) -> String {
    format!("{}{}", o.stdout.window.head, o.stdout.window.tail)
}

/// What one call sees of the protected policy file, the denied directory, its own
/// workspace and `/dev`, one word each.
const LOOK: &str = "if echo evil 2>/dev/null > corral.toml; then echo policy-written; \
                    else echo policy-read-only; fi; cat corral.toml; \
                    ls -A \"$DENIED\" 2>/dev/null | wc -l | tr -d ' '; \
                    echo note > notes.txt && echo workspace-written; \
                    [ -e /dev/sda ] || [ -e /dev/vda ] && echo disk-seen || echo dev-private";

fn look(run: &Run, denied: &Path) -> String {
    stdout(&sh(run, &format!("DENIED='{}'; {LOOK}", denied.display())))
}

/// Whether this host gives the calls a PID namespace and the mounts these tests judge.
fn sandboxed(fx: &Fixture) -> bool {
    use corral::sandbox::{Layer, Level};
    let denied = fx.dir.path().join("probe-denied");
    std::fs::create_dir_all(&denied).unwrap();
    let report = sh(&open(fx, &denied), "true").sandbox.unwrap();
    let full = |layer| {
        report
            .layers
            .iter()
            .any(|l| l.layer == layer && l.level == Level::Full)
    };
    let able = [Layer::PidNamespace, Layer::ReadDenies, Layer::PrivateDev]
        .into_iter()
        .all(full);
    if !able {
        common::skip(&format!("not every layer here: {}", report.line()));
    }
    able
}

/// A workspace whose `corral.toml` reads `policy`, a denied directory holding one secret,
/// and a sandboxed run over them; `None` where this host cannot judge it.
fn setup(policy: &str) -> Option<(Fixture, Run, std::path::PathBuf)> {
    let fx = Fixture::new();
    if !sandboxed(&fx) {
        return None;
    }
    std::fs::write(fx.workspace().join("corral.toml"), policy).unwrap();
    let denied = fx.dir.path().join("secrets");
    std::fs::create_dir_all(&denied).unwrap();
    std::fs::write(denied.join("key"), "secret").unwrap();
    let run = open(&fx, &denied);
    Some((fx, run, denied))
}

#[test]
fn every_call_of_a_run_keeps_the_mounts_of_the_first() {
    let Some((fx, run, denied)) = setup("policy\n") else {
        return;
    };
    let expected = "policy-read-only\npolicy\n0\nworkspace-written\ndev-private\n";
    for call in 0..CALLS {
        assert_eq!(look(&run, &denied), expected, "call {call}");
    }
    assert_eq!(
        std::fs::read_to_string(fx.workspace().join("corral.toml")).unwrap(),
        "policy\n"
    );
}

#[test]
fn a_protected_file_replaced_between_calls_stays_read_only() {
    let Some((fx, run, denied)) = setup("version 0\n") else {
        return;
    };
    let policy = fx.workspace().join("corral.toml");
    let mut text = "version 0\n".to_string();
    for call in 0..CALLS {
        // Now and then written the way editors and agents write a file: a new one renamed
        // over it, between calls that took the run's mounts as they were.
        if call % 3 == 2 {
            text = format!("version {call}\n");
            let next = fx.workspace().join(".corral.toml.new");
            std::fs::write(&next, &text).unwrap();
            std::fs::rename(&next, &policy).unwrap();
        }
        let seen = look(&run, &denied);
        assert!(
            seen.starts_with(&format!("policy-read-only\n{text}")),
            "call {call}: {seen}"
        );
        assert_eq!(std::fs::read_to_string(&policy).unwrap(), text);
    }
}

#[test]
fn a_denied_directory_made_anew_between_calls_stays_hidden() {
    let Some((_fx, run, denied)) = setup("policy\n") else {
        return;
    };
    for call in 0..CALLS {
        if call % 3 == 2 {
            // Removed and made again, with a new secret in it.
            std::fs::remove_dir_all(&denied).unwrap();
            std::fs::create_dir(&denied).unwrap();
            std::fs::write(denied.join(format!("key{call}")), "secret").unwrap();
        }
        let seen = look(&run, &denied);
        assert!(
            seen.starts_with("policy-read-only\npolicy\n0\n"),
            "call {call}: the denied directory showed: {seen}"
        );
    }
}
