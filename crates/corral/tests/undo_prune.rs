//! The undo store does not grow for ever: as a run opens (at most once an hour), the
//! undo records of runs past the retention are given up, and the stored content that
//! only they named is removed; what a kept record or the workspace's newest tree names
//! stays, so the last call can still be undone.

use crate::common;

use std::path::Path;
use std::time::{Duration, SystemTime};

use common::Fixture;
use corral::{Config, Run, ShellRequest};

/// Keep the undo records of the newest run that changed files only.
fn keep_one() -> Config {
    Config {
        undo_keep_runs: 1,
        ..Config::default()
    }
}

fn open(fx: &Fixture, background: bool) -> Run {
    let builder = Run::builder(fx.workspace())
        .store(fx.store())
        .config(keep_one())
        .policy(corral::Policy::permissive());
    let builder = if background {
        builder.housekeeping_in_background()
    } else {
        builder
    };
    builder.open().unwrap()
}

/// Whether any file under `dir` holds `needle`.
fn stored(dir: &Path, needle: &str) -> bool {
    std::fs::read_dir(dir).unwrap().flatten().any(|e| {
        let path = e.path();
        if path.is_dir() {
            stored(&path, needle)
        } else {
            std::fs::read(&path).is_ok_and(|b| b == needle.as_bytes())
        }
    })
}

#[test]
fn old_runs_records_and_the_content_only_they_named_are_pruned() {
    for background in [false, true] {
        let fx = Fixture::new();
        let blobs = fx.dir.path().join("state/undo/blobs");
        for text in ["one", "two", "three"] {
            let run = open(&fx, background);
            let line = format!("echo {text} > a.txt");
            let outcome = run.shell(&ShellRequest::new(line)).unwrap();
            assert!(outcome.status.success(), "{}", outcome.observation);
            run.close().unwrap();
        }
        for text in ["one", "two", "three"] {
            assert!(stored(&blobs, &format!("{text}\n")), "{text}");
        }
        // The first run's opening pruned; the next are within the hour and do not.
        let stamp = fx.dir.path().join("state/undo/pruned");
        let hours_ago = SystemTime::now() - Duration::from_secs(2 * 3600);
        std::fs::File::options()
            .append(true)
            .open(&stamp)
            .unwrap()
            .set_modified(hours_ago)
            .unwrap();
        let run = open(&fx, background);
        run.close().unwrap();
        // "one" only the given-up runs named; the newest run's record names the rest.
        assert!(!stored(&blobs, "one\n"), "background {background}");
        assert!(stored(&blobs, "two\n"), "background {background}");
        assert!(stored(&blobs, "three\n"), "background {background}");
        // And the newest run's call is still undone.
        let store = corral::trace::Store::open_existing(&fx.store()).unwrap();
        let dir = corral::undo::store_dir(&fx.store());
        let ws = fx.workspace().canonicalize().unwrap();
        let plan = corral::undo::plan(
            &store,
            &dir,
            &corral::undo::UndoTarget::Last { workspace: ws },
        )
        .unwrap();
        corral::undo::apply(&plan, &dir).unwrap();
        assert_eq!(
            std::fs::read_to_string(fx.workspace().join("a.txt")).unwrap(),
            "two\n"
        );
    }
}
