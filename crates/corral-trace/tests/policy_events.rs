//! Refusals and approvals are rows in `policy_events`; "what was refused" is one query.

use corral_trace::{NewPolicyEvent, NewRun, Store};

#[test]
fn refusals_and_answers_are_recorded_and_listed() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("trace.db")).unwrap();
    store
        .begin_run(&NewRun {
            id: "r1".into(),
            workspace: "/ws".into(),
            started_at_ms: 1,
            pid: 1,
            config_json: "{}".into(),
        })
        .unwrap();
    let event = |decision: &str, target: &str| NewPolicyEvent {
        run_id: "r1".into(),
        at_ms: 2,
        act: "exec".into(),
        target: target.into(),
        effect: "deny".into(),
        rule: Some("rm".into()),
        layer: Some("operator".into()),
        origin: Some("/etc/corral/policy.toml:3".into()),
        decision: decision.into(),
        ..NewPolicyEvent::default()
    };
    store
        .record_policy_event(&event("refused", "rm -rf x"))
        .unwrap();
    store
        .record_policy_event(&event("approved", "cargo publish"))
        .unwrap();

    let all = store.policy_events(Some("r1"), false, 10).unwrap();
    assert_eq!(all.len(), 2);
    let refused = store.policy_events(None, true, 10).unwrap();
    assert_eq!(refused.len(), 1);
    assert_eq!(refused[0].target, "rm -rf x");
    assert_eq!(
        refused[0].origin.as_deref(),
        Some("/etc/corral/policy.toml:3")
    );
}
