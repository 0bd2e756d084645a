//! The undo record from the attacker's side: something running beside the calls swaps a
//! workspace directory for a symlink to a directory outside holding a canary, or a file
//! for a FIFO, again and again while calls are recorded. The canary is in no undo blob,
//! an undo puts none into the workspace and writes nothing outside, and no record waits
//! on the FIFO (issue 59).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use corral::undo::{UndoTarget, apply, plan};
use corral::{Config, Run, ShellRequest};
use rustix::fs::{CWD, RenameFlags};

const CANARY: &[u8] = b"canary-59-7f3a9c: the key outside the workspace";

/// A workspace, a directory beside it holding the canary, and a state directory.
struct Scene {
    _dir: tempfile::TempDir,
    ws: PathBuf,
    outside: PathBuf,
    store: PathBuf,
}

fn scene() -> Scene {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let (ws, outside) = (root.join("ws"), root.join("outside"));
    std::fs::create_dir_all(ws.join("d")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("id_ed25519"), CANARY).unwrap();
    std::fs::write(ws.join("d/id_ed25519"), "the workspace's own file\n").unwrap();
    std::fs::write(ws.join("d/notes"), "notes\n").unwrap();
    Scene {
        _dir: dir,
        ws,
        outside,
        store: root.join("state/trace.db"),
    }
}

fn open(scene: &Scene) -> Run {
    Run::builder(&scene.ws)
        .store(&scene.store)
        .config(Config::default())
        .policy(corral::Policy::permissive())
        .open()
        .unwrap()
}

/// A thread exchanging `a` and `b` (`renameat2(RENAME_EXCHANGE)`) until told to stop; it
/// says once it has swapped, and how many times it did.
struct Swapper {
    stop: Arc<AtomicBool>,
    swaps: Arc<AtomicUsize>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Swapper {
    fn start(a: PathBuf, b: PathBuf) -> Swapper {
        let stop = Arc::new(AtomicBool::new(false));
        let swaps = Arc::new(AtomicUsize::new(0));
        let (tx, rx) = mpsc::channel();
        let thread = {
            let (stop, swaps) = (stop.clone(), swaps.clone());
            std::thread::spawn(move || {
                let mut said = false;
                while !stop.load(Ordering::Relaxed) {
                    if rustix::fs::renameat_with(CWD, &a, CWD, &b, RenameFlags::EXCHANGE).is_ok() {
                        swaps.fetch_add(1, Ordering::Relaxed);
                        if !said {
                            let _ = tx.send(());
                            said = true;
                        }
                    }
                }
            })
        };
        rx.recv_timeout(Duration::from_secs(30))
            .expect("the swapper never swapped");
        Swapper {
            stop,
            swaps,
            thread: Some(thread),
        }
    }

    /// Stop, and how many swaps were made (an even number leaves `a` where it was).
    fn stop(mut self) -> usize {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.take().unwrap().join().unwrap();
        self.swaps.load(Ordering::Relaxed)
    }
}

/// Whether any regular file under `dir` (not following a link) holds `needle`.
fn holds(dir: &Path, needle: &[u8]) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    entries.flatten().any(|e| {
        let path = e.path();
        match e.file_type() {
            Ok(t) if t.is_dir() => holds(&path, needle),
            Ok(t) if t.is_file() => {
                std::fs::read(&path).is_ok_and(|b| b.windows(needle.len()).any(|w| w == needle))
            }
            _ => false,
        }
    })
}

/// Every entry under `dir` with its bytes (a link as its target text), not following links.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let path = e.path();
            let t = e.file_type().unwrap();
            let bytes = if t.is_dir() {
                stack.push(path.clone());
                Vec::new()
            } else if t.is_symlink() {
                std::fs::read_link(&path)
                    .unwrap()
                    .into_os_string()
                    .into_encoded_bytes()
            } else {
                std::fs::read(&path).unwrap()
            };
            out.push((path, bytes));
        }
    }
    out.sort();
    out
}

/// Every step of the run undone, newest first, each as far as it is allowed (a refusal
/// is an allowed outcome: the race the attacker "won" only fails the undo).
fn undo_every_step(store: &Path, run_id: &str) {
    let dir = corral::undo::store_dir(store);
    let trace = corral::trace::Store::open_existing(store).unwrap();
    let mut steps: Vec<i64> = trace
        .run_files(run_id)
        .unwrap()
        .into_iter()
        .map(|(id, _)| id)
        .collect();
    steps.dedup();
    for id in steps.into_iter().rev() {
        if let Ok(p) = plan(&trace, &dir, &UndoTarget::Step(id)) {
            let _ = apply(&p, &dir);
        }
    }
}

#[test]
fn a_directory_swapped_for_a_link_out_leaves_no_canary_in_the_store_or_the_workspace() {
    let scene = scene();
    std::os::unix::fs::symlink(&scene.outside, scene.ws.join("link")).unwrap();
    let outside_before = snapshot(&scene.outside);
    let run = open(&scene);
    let swapper = Swapper::start(scene.ws.join("d"), scene.ws.join("link"));
    for i in 0..40 {
        // Each call may write, so each is recorded before and after; the swaps in the
        // root make each record walk it again, `d` or the link in `d`'s place.
        let line = format!("echo {i} > f{i}.txt");
        let done = run.shell(&ShellRequest::new(line)).unwrap();
        assert!(done.status.success(), "{}", done.observation);
    }
    let swaps = swapper.stop();
    assert!(swaps > 40, "the race ran ({swaps} swaps)");
    if swaps % 2 == 1 {
        rustix::fs::renameat_with(
            CWD,
            scene.ws.join("d"),
            CWD,
            scene.ws.join("link"),
            RenameFlags::EXCHANGE,
        )
        .unwrap();
    }
    // A last call, recorded with the workspace at rest.
    run.shell(&ShellRequest::new("echo end > end.txt")).unwrap();
    let run_id = run.id().to_string();
    run.close().unwrap();

    let blobs = corral::undo::store_dir(&scene.store).join("blobs");
    assert!(holds(&blobs, b"the workspace's own file"), "the record ran");
    assert!(!holds(&blobs, CANARY), "the canary is in an undo blob");

    undo_every_step(&scene.store, &run_id);
    assert!(
        !holds(&scene.ws, CANARY),
        "an undo wrote the canary into the workspace"
    );
    assert_eq!(
        snapshot(&scene.outside),
        outside_before,
        "an undo wrote outside the workspace"
    );
}

#[test]
fn a_fifo_where_a_file_was_listed_is_never_read_and_no_record_waits_on_it() {
    let scene = scene();
    std::fs::write(scene.ws.join("d/f"), "a regular file\n").unwrap();
    rustix::fs::mknodat(
        CWD,
        scene.ws.join("d/p"),
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o644),
        0,
    )
    .unwrap();
    let run = Arc::new(open(&scene));
    let swapper = Swapper::start(scene.ws.join("d/f"), scene.ws.join("d/p"));
    // The calls on a thread of their own: a record stuck on the FIFO would hold it, and
    // the wait below ends on its answer or on the bound, whichever comes first.
    let (tx, rx) = mpsc::channel();
    let calls = {
        let run = run.clone();
        std::thread::spawn(move || {
            for i in 0..40 {
                let line = format!("echo {i} > d/g{i}");
                let done = run.shell(&ShellRequest::new(line)).unwrap();
                let _ = tx.send(done.observation);
            }
        })
    };
    for i in 0..40 {
        let said = rx
            .recv_timeout(Duration::from_secs(60))
            .unwrap_or_else(|_| panic!("call {i} did not answer: a record waited on the FIFO"));
        assert!(
            !said.contains("cannot be undone"),
            "call {i}: the record failed on the FIFO: {said}"
        );
    }
    calls.join().unwrap();
    let swaps = swapper.stop();
    assert!(swaps > 40, "the race ran ({swaps} swaps)");
    Arc::try_unwrap(run).ok().unwrap().close().unwrap();
}
