//! A task run's model turns have a table of their own, and a gate's sandbox events carry
//! their kind; a call's layers keep the kind `layer`.

use crate::common;

use corral_trace::{NewModelTurn, NewSandboxEvent, Store};

#[test]
fn turns_round_trip_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("trace.db")).unwrap();
    store.begin_run(&common::new_run("r1", 1)).unwrap();
    for turn in [2, 1] {
        store
            .record_model_turn(&NewModelTurn {
                run_id: "r1".into(),
                turn,
                at_ms: 10 * turn,
                duration_ms: 5,
                provider: "openrouter".into(),
                model: "m".into(),
                request_json: format!("{{\"turn\":{turn}}}"),
                response_json: (turn == 1).then(|| "{}".into()),
                input_tokens: Some(100),
                output_tokens: Some(7),
                cost_usd: (turn == 1).then_some(0.0012),
                error: (turn == 2).then(|| "openrouter answered HTTP 500".into()),
            })
            .unwrap();
    }
    let turns = store.model_turns("r1").unwrap();
    assert_eq!(turns.iter().map(|t| t.turn).collect::<Vec<_>>(), [1, 2]);
    assert_eq!(turns[0].cost_usd, Some(0.0012));
    assert_eq!(turns[1].response_json, None);
    assert_eq!(
        turns[1].error.as_deref(),
        Some("openrouter answered HTTP 500")
    );
    assert_eq!(turns[0].input_tokens, Some(100));
}

#[test]
fn gate_rows_are_told_apart_from_layers_by_kind() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("trace.db")).unwrap();
    store.begin_run(&common::new_run("r1", 1)).unwrap();
    let event = |layer: &str| NewSandboxEvent {
        run_id: "r1".into(),
        layer: layer.into(),
        level: "full".into(),
        mode: "workspace-write".into(),
        detail: "d".into(),
        ..NewSandboxEvent::default()
    };
    store.record_sandbox_event(&event("landlock")).unwrap();
    store
        .record_sandbox_event_of_kind(&event("gate"), "gate_output")
        .unwrap();
    store
        .record_sandbox_event_of_kind(&event("gate"), "gate_phase_failed")
        .unwrap();
    let all = store.sandbox_events_of_run("r1", "").unwrap();
    let kinds: Vec<&str> = all.iter().map(|(_, k)| k.as_str()).collect();
    assert_eq!(kinds, ["layer", "gate_output", "gate_phase_failed"]);
    assert_eq!(store.sandbox_events_of_run("r1", "gate_").unwrap().len(), 2);
}
