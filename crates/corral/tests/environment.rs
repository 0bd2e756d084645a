//! The environment a command sees: secrets stripped, non-interactive defaults, refused
//! overrides.

use crate::common;

use std::collections::BTreeMap;

use common::{Fixture, testbin};
use corral::{Config, EnvPolicy, ErrorKind, ExecRequest};

fn env_of(config: Config, request: ExecRequest) -> BTreeMap<String, String> {
    let fx = Fixture::new();
    let run = fx.run_with(config);
    let outcome = run.exec(&request).unwrap();
    assert!(outcome.status.success(), "{}", outcome.observation);
    outcome
        .stdout
        .window
        .head
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn base(pairs: &[(&str, &str)]) -> Config {
    let explicit = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    Config {
        env: EnvPolicy {
            explicit: Some(explicit),
            ..EnvPolicy::default()
        },
        ..Config::default()
    }
}

#[test]
fn secrets_and_provider_credentials_are_not_passed_on() {
    let env = env_of(
        base(&[
            ("PATH", "/usr/bin:/bin"),
            ("ANTHROPIC_API_KEY", "sk-ant"),
            ("OPENAI_BASE_URL", "u"),
            ("GITHUB_TOKEN", "ghp"),
            ("DB_PASSWORD", "p"),
            ("AWS_SECRET_ACCESS_KEY", "a"),
            ("CARGO_HOME", "/c"),
        ]),
        ExecRequest::new([testbin(), "env".into()]),
    );
    assert_eq!(env.get("CARGO_HOME").map(String::as_str), Some("/c"));
    for secret in [
        "ANTHROPIC_API_KEY",
        "OPENAI_BASE_URL",
        "GITHUB_TOKEN",
        "DB_PASSWORD",
        "AWS_SECRET_ACCESS_KEY",
    ] {
        assert!(!env.contains_key(secret), "{secret} leaked");
    }
}

#[test]
fn non_interactive_defaults_are_injected_and_a_call_may_override_them() {
    let env = env_of(
        base(&[("PATH", "/usr/bin:/bin")]),
        ExecRequest::new([testbin(), "env".into()]).env("TERM", "xterm-256color"),
    );
    for (k, v) in [
        ("NO_COLOR", "1"),
        ("TERM", "xterm-256color"),
        ("GIT_PAGER", "cat"),
        ("GH_PAGER", "cat"),
        ("PAGER", "cat"),
    ] {
        assert_eq!(env.get(k).map(String::as_str), Some(v), "{k}");
    }
    assert!(
        env.get("LANG")
            .is_some_and(|l| l.to_lowercase().contains("utf-8"))
    );
}

#[test]
fn the_defaults_can_be_turned_off() {
    let mut config = base(&[("PATH", "/usr/bin:/bin")]);
    config.env.non_interactive = false;
    let env = env_of(config, ExecRequest::new([testbin(), "env".into()]));
    assert!(!env.contains_key("NO_COLOR") && !env.contains_key("PAGER"));
}

#[test]
fn an_explicit_environment_replaces_inheritance() {
    let mut config = base(&[("ONLY_THIS", "1")]);
    config.env.non_interactive = false;
    let env = env_of(config, ExecRequest::new([testbin(), "env".into()]));
    // PWD is set as a shell sets it: the directory the command runs in.
    assert_eq!(env.keys().collect::<Vec<_>>(), ["ONLY_THIS", "PWD"]);
}

#[test]
fn path_and_loader_overrides_are_refused_and_the_step_is_kept() {
    let fx = Fixture::new();
    let run = fx.run();
    for name in ["PATH", "LD_PRELOAD", "DYLD_INSERT_LIBRARIES"] {
        let err = run
            .exec(&ExecRequest::new(["true"]).env(name, "/tmp/x"))
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidRequest);
        assert!(err.to_string().contains(name), "{err}");
    }
    // The run goes on.
    assert!(
        run.exec(&ExecRequest::new(["true"]))
            .unwrap()
            .status
            .success()
    );
    let store = corral::trace::Store::open_existing(&fx.store()).unwrap();
    let steps = store.steps(Some(run.id()), 10).unwrap();
    assert_eq!(steps.len(), 4);
    assert_eq!(
        steps
            .iter()
            .filter(|s| s.outcome.as_deref() == Some("invalid"))
            .count(),
        3
    );
}
