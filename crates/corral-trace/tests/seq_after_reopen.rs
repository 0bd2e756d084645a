//! Sequence numbers are per run and continue after the store is reopened.

use crate::common;

use corral_trace::Store;

#[test]
fn seq_continues_after_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("trace.db");

    let store = Store::open(&path).unwrap();
    store.begin_run(&common::new_run("a", 1)).unwrap();
    store.begin_run(&common::new_run("b", 2)).unwrap();
    let mut ids = Vec::new();
    for i in 0..3 {
        let step = store.begin_step(&common::new_step("a", 10 + i)).unwrap();
        store.finish_step(step.id, &common::exited(0)).unwrap();
        ids.push(step);
    }
    // Another run numbers its own steps from 1.
    assert_eq!(store.begin_step(&common::new_step("b", 20)).unwrap().seq, 1);
    assert_eq!(ids.iter().map(|s| s.seq).collect::<Vec<_>>(), [1, 2, 3]);
    drop(store);

    let store = Store::open(&path).unwrap();
    let next = store.begin_step(&common::new_step("a", 30)).unwrap();
    assert_eq!(next.seq, 4);
    assert!(next.id > ids[2].id);
    assert_eq!(store.begin_step(&common::new_step("b", 31)).unwrap().seq, 2);
    assert_eq!(store.run("a").unwrap().unwrap().steps, 4);
}
