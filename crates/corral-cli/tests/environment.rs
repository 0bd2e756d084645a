//! Secrets in corral's own environment do not reach the command.

use crate::common;

use common::{Scratch, testbin, text};

#[test]
fn inherited_secrets_are_stripped() {
    let s = Scratch::new();
    let out = s
        .corral(&["exec", "--env", "MINE=1", "--", &testbin(), "env"])
        .env("ANTHROPIC_API_KEY", "sk-ant-secret")
        .env("GITHUB_TOKEN", "ghp-secret")
        .env("HARMLESS", "kept")
        .output()
        .unwrap();
    let env = text(&out.stdout);
    assert!(
        env.contains("HARMLESS=kept") && env.contains("MINE=1"),
        "{env}"
    );
    assert!(!env.contains("secret"), "{env}");
}
