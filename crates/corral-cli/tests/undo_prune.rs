//! `corral trace prune` gives up the undo records of old runs, and removes the stored
//! content no kept record names; the last call can still be undone.

use serde_json::json;

use crate::common::{Scratch, text};
use crate::mcp_common::{self, Answer, PERMISSIVE, Session, field};
use crate::undo_common::{answered, corral_in, end_input, seq_of, stored, succeeded, undo};

#[test]
fn prune_gives_up_old_runs_records_and_what_only_they_named() {
    let s = Scratch::new();
    for text in ["one", "two", "three"] {
        let out = s.output(&["shell", &format!("echo {text} > a.txt")]);
        assert!(out.status.success(), "{}", crate::common::text(&out.stderr));
    }
    let blobs = s.dir.path().join("state/undo/blobs");
    assert!(stored(&blobs, b"one\n"));
    let out = s.output(&["trace", "prune", "--undo-keep-runs", "1"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("gave up the undo records of 2 runs"),
        "{}",
        text(&out.stdout)
    );
    assert!(!stored(&blobs, b"one\n"));
    assert!(stored(&blobs, b"two\n"));
    let out = s.output(&["undo"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        std::fs::read(s.workspace().join("a.txt")).unwrap(),
        b"two\n"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_prune_beside_a_live_run_keeps_what_only_that_runs_records_in_memory_name() {
    let dir = mcp_common::scratch(Some(PERMISSIVE));
    let ws = dir.path().join("ws");
    std::fs::write(ws.join("f.txt"), "original\n").unwrap();
    // An earlier run records the workspace: `f.txt` is stored before the live run starts.
    succeeded(&corral_in(dir.path(), &["shell", "echo x > other.txt"]));
    let session = Session::start_in(dir, Some(Answer::Accept), &[], None).await;
    // A handle whose start record names `f.txt` as it was; what it changed is written to
    // its step at its next poll.
    let started = session
        .call(
            "shell_start",
            json!({"line": "echo new > f.txt && cat", "stdin": true}),
        )
        .await;
    let handle = field(&started, "handle").as_u64().unwrap();
    while std::fs::read(ws.join("f.txt")).unwrap() != b"new\n" {
        std::thread::yield_now();
    }
    // A call of the same run records the workspace again, with `f.txt` as it is now.
    let call = session
        .call("shell", json!({"line": "echo y > g.txt"}))
        .await;
    answered(&call);
    // Another corral prunes while the run goes on.
    let prune = [
        "trace",
        "prune",
        "--undo-keep-runs",
        "1",
        "--undo-keep-days",
        "0",
    ];
    succeeded(&corral_in(session.dir.path(), &prune));
    end_input(&session, handle, "").await;
    succeeded(&undo(&session, &[&seq_of(&session, "shell_start")]));
    assert_eq!(std::fs::read(ws.join("f.txt")).unwrap(), b"original\n");
    session.client.cancel().await.unwrap();
}

/// The bytes of every blob in the undo store of the scratch `dir`.
fn blob_bytes(dir: &std::path::Path) -> u64 {
    let Ok(fans) = std::fs::read_dir(dir.join("state/undo/blobs")) else {
        return 0;
    };
    let mut sum = 0;
    for fan in fans.flatten() {
        if let Ok(blobs) = std::fs::read_dir(fan.path()) {
            sum += blobs
                .flatten()
                .map(|b| b.metadata().unwrap().len())
                .sum::<u64>();
        }
    }
    sum
}

/// Issue 60: a run's records past `[undo] store_max_mb` give up the run's oldest records,
/// said on a result, instead of leaving every later call unrecorded. The store stays
/// within the budget, the newest steps come back byte for byte, the oldest refuse and say
/// why, and `corral trace prune` still works.
#[tokio::test(flavor = "multi_thread")]
async fn a_run_past_its_store_budget_gives_up_its_oldest_records_and_says_so() {
    const BUDGET: u64 = 1_000_000;
    let policy = format!("{PERMISSIVE}\n[undo]\nstore_max_mb = 1\n");
    let dir = mcp_common::scratch(Some(&policy));
    let ws = dir.path().join("ws");
    std::fs::write(ws.join("f.bin"), vec![0u8; 300_000]).unwrap();
    let session = Session::start_in(dir, Some(Answer::Accept), &[], None).await;
    let mut contents = vec![std::fs::read(ws.join("f.bin")).unwrap()];
    let mut said = Vec::new();
    for _ in 1..=6 {
        let line = "head -c 300000 /dev/urandom > f.bin";
        let result = session.call("shell", json!({ "line": line })).await;
        answered(&result);
        said.push(mcp_common::text(&result));
        contents.push(std::fs::read(ws.join("f.bin")).unwrap());
    }
    let all = said.join("\n---\n");
    // Every call ran recorded: none says its changes cannot be undone.
    assert!(!all.contains("cannot be undone"), "{all}");
    // Steps 3 on cross the budget; each is said on the next call's result, naming it.
    assert!(
        said[3].contains("undo: step 1 of this run can no longer be undone")
            && said[3].contains("store_max_mb = 1 MB as step 3's changes were recorded"),
        "{all}"
    );
    assert!(said[5].contains("step 3 of this run"), "{all}");

    // Waits for the last record; the store within the budget.
    succeeded(&undo(&session, &["--dry-run", "6"]));
    let used = blob_bytes(session.dir.path());
    assert!(used <= BUDGET, "the store holds {used} bytes");

    // The newest steps come back exactly.
    succeeded(&undo(&session, &["6"]));
    assert_eq!(std::fs::read(ws.join("f.bin")).unwrap(), contents[5]);
    succeeded(&undo(&session, &["5"]));
    assert_eq!(std::fs::read(ws.join("f.bin")).unwrap(), contents[4]);
    // The oldest refuse, saying why.
    let refused = undo(&session, &["4"]);
    assert!(!refused.status.success());
    let why = text(&refused.stderr);
    assert!(
        why.contains("can no longer be undone") && why.contains("store_max_mb"),
        "{why}"
    );
    assert_eq!(std::fs::read(ws.join("f.bin")).unwrap(), contents[4]);

    // A file larger than the whole budget: its record is skipped, and said.
    let big = session
        .call(
            "shell",
            json!({ "line": "head -c 1200000 /dev/urandom > big.bin" }),
        )
        .await;
    let next = session
        .call("shell", json!({ "line": "echo x > small.txt" }))
        .await;
    let both = format!("{}\n{}", mcp_common::text(&big), mcp_common::text(&next));
    assert!(
        both.contains("cannot be undone") && both.contains("it alone is larger"),
        "{both}"
    );
    assert!(blob_bytes(session.dir.path()) <= BUDGET);

    // The trace's own prune still works beside what was given up.
    let prune = corral_in(session.dir.path(), &["trace", "prune"]);
    succeeded(&prune);
    session.client.cancel().await.unwrap();
}
