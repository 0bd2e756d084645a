//! Rows that belong together are one transaction: all kept, or none.

use corral_trace::{NewPolicyEvent, Store, TraceError};

use crate::common::new_run;

fn event(target: &str) -> NewPolicyEvent {
    NewPolicyEvent {
        run_id: "r1".into(),
        at_ms: 2,
        act: "exec".into(),
        target: target.into(),
        effect: "deny".into(),
        decision: "refused".into(),
        ..NewPolicyEvent::default()
    }
}

fn open() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("trace.db")).unwrap();
    store.begin_run(&new_run("r1", 1)).unwrap();
    (dir, store)
}

/// The targets of run `r1`'s policy events, as the store has them.
fn targets(store: &Store) -> Vec<String> {
    store
        .policy_events(Some("r1"), false, 10)
        .unwrap()
        .into_iter()
        .map(|e| e.target)
        .collect()
}

#[test]
fn a_batch_keeps_all_its_rows() {
    let (_dir, store) = open();
    let ids = store
        .batch(|s| {
            let a = s.record_policy_event(&event("a"))?;
            // A batch inside a batch joins it.
            let b = s.batch(|s| s.record_policy_event(&event("b")))?;
            Ok([a, b])
        })
        .unwrap();
    assert!(ids[0] < ids[1]);
    let kept = targets(&store);
    assert_eq!(kept.len(), 2, "{kept:?}");
}

#[test]
fn a_batch_that_fails_keeps_none_and_says_why() {
    let (_dir, store) = open();
    let failed = store.batch(|s| {
        s.record_policy_event(&event("kept only with the rest"))?;
        // A row for a run that does not exist breaks the batch.
        s.record_policy_event(&NewPolicyEvent {
            run_id: "no-such-run".into(),
            ..event("orphan")
        })?;
        Ok::<(), TraceError>(())
    });
    assert!(failed.is_err());
    assert!(
        store
            .policy_events(Some("r1"), false, 10)
            .unwrap()
            .is_empty()
    );
    // The store takes writes again afterwards.
    store.record_policy_event(&event("after")).unwrap();
    assert_eq!(store.policy_events(Some("r1"), false, 10).unwrap().len(), 1);
}

#[test]
fn a_batch_that_panics_leaves_no_transaction_open() {
    let (_dir, store) = open();
    let store = std::panic::AssertUnwindSafe(store);
    let unwound = std::panic::catch_unwind(|| {
        let _ = store.batch(|s| {
            s.record_policy_event(&event("written before the panic"))?;
            panic!("the writer failed");
            #[allow(unreachable_code)]
            Ok::<(), TraceError>(())
        });
    });
    assert!(unwound.is_err());
    // Rolled back, and the next write is a transaction of its own, not part of the one
    // the panic left.
    store.record_policy_event(&event("after")).unwrap();
    let kept = targets(&store);
    assert_eq!(kept, ["after"]);
    // Batches work again.
    store
        .batch(|s| s.record_policy_event(&event("batched")).map(drop))
        .unwrap();
    assert_eq!(store.policy_events(Some("r1"), false, 10).unwrap().len(), 2);
}
