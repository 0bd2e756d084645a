//! The outcome names the containment layer the call ran in, and never claims a stronger
//! one than it got: cgroup-based where corral may create cgroups (as on a root host with a
//! cgroup2 mount), the process-group + subreaper fallback when cgroups are turned off,
//! and `+pid-ns` only when the command really runs in a PID namespace of its own.

use crate::common;

use common::{Fixture, testbin};
use corral::{Config, ExecRequest};

const LAYERS: &[&str] = &[
    "cgroup-v2+pids",
    "cgroup-v2+pids-v1",
    "cgroup-v2",
    "process-group+subreaper",
    "process-group",
];

/// The layer under the PID namespace, which root hosts add to every layer.
fn containment_of(config: Config) -> &'static str {
    let fx = Fixture::new();
    let run = fx.run_with(config);
    let outcome = run
        .exec(&ExecRequest::new([testbin(), "exit".into(), "0".into()]))
        .unwrap();
    assert!(outcome.status.success(), "{}", outcome.observation);
    let name = outcome.containment;
    match name.strip_suffix("+pid-ns") {
        Some(under) => {
            // The claim holds: the command's parent (corral) is outside its namespace.
            let stat = run
                .exec(&ExecRequest::new(["cat", "/proc/self/stat"]))
                .unwrap();
            let stat = stat.stdout.window.head;
            let ppid = stat[stat.rfind(')').unwrap() + 1..]
                .split_whitespace()
                .nth(1);
            assert_eq!(ppid, Some("0"), "{name}: {stat}");
            under
        }
        None => name,
    }
}

/// Whether this host lets this process create cgroups: root, and a cgroup2 mount.
fn cgroups_expected() -> bool {
    let cgroup2 = std::fs::read_to_string("/proc/self/mountinfo")
        .unwrap_or_default()
        .lines()
        .any(|l| l.contains(" - cgroup2 "));
    rustix::process::geteuid().is_root() && cgroup2
}

#[test]
fn without_a_pid_namespace_the_name_does_not_claim_one() {
    let fx = Fixture::new();
    let run = fx.run_with(Config {
        pid_namespace: false,
        ..Config::default()
    });
    let outcome = run
        .exec(&ExecRequest::new([testbin(), "exit".into(), "0".into()]))
        .unwrap();
    assert!(
        LAYERS.contains(&outcome.containment),
        "{}",
        outcome.containment
    );
}

#[test]
fn the_outcome_names_the_layer() {
    let name = containment_of(Config::default());
    assert!(LAYERS.contains(&name), "unknown layer {name:?}");
    if cgroups_expected() {
        assert!(name.starts_with("cgroup-v2"), "got {name:?}");
    }
}

#[test]
fn without_a_pids_bound_the_name_does_not_claim_one() {
    let name = containment_of(Config {
        pids_max: None,
        ..Config::default()
    });
    assert!(!name.contains("pids"), "got {name:?}");
    if cgroups_expected() {
        assert_eq!(name, "cgroup-v2");
    }
}

#[test]
fn with_cgroups_off_the_fallback_says_so() {
    let name = containment_of(Config {
        cgroups: false,
        ..Config::default()
    });
    assert!(name.starts_with("process-group"), "got {name:?}");
}
