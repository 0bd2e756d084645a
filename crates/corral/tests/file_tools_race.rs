//! The file tools against a command racing them: a loop that swaps a workspace directory
//! with a symlink to a directory outside (`renameat2` with `RENAME_EXCHANGE`, atomic) while
//! the model reads and writes a file under it. Whatever the interleaving, nothing outside
//! the workspace is read or written: the path checked is the path used.

use crate::common;

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use common::Fixture;
use corral::patch::PatchRequest;
use corral::{ListDirRequest, ReadFileRequest, WriteFileRequest};

/// How many calls each race makes: the unguarded tools lost within a few dozen, so 200
/// keeps a wide margin (600 made this the suite's slowest test, 80–110 s a pass, with the
/// swapper taking one of CI's two cores).
const TRIES: usize = 200;

/// `ws/d` (a directory holding `f`) and `ws/link` (a symlink to `outside`, holding a key)
/// swapped back and forth until the returned flag is set.
fn racing(ws: &Path, outside: &Path) -> (Arc<AtomicBool>, std::thread::JoinHandle<usize>) {
    std::fs::create_dir_all(ws.join("d")).unwrap();
    std::fs::write(ws.join("d/f"), "workspace\n").unwrap();
    std::fs::create_dir_all(outside).unwrap();
    std::fs::write(outside.join("f"), "SECRET KEY\n").unwrap();
    std::fs::write(outside.join("id_ed25519"), "SECRET KEY\n").unwrap();
    std::os::unix::fs::symlink(outside, ws.join("link")).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let (a, b, flag) = (ws.join("d"), ws.join("link"), stop.clone());
    let swapper = std::thread::spawn(move || {
        let mut swaps = 0;
        while !flag.load(Ordering::Relaxed) {
            let swapped = rustix::fs::renameat_with(
                rustix::fs::CWD,
                &a,
                rustix::fs::CWD,
                &b,
                rustix::fs::RenameFlags::EXCHANGE,
            );
            swaps += usize::from(swapped.is_ok());
        }
        swaps
    });
    (stop, swapper)
}

#[test]
fn a_swapped_symlink_never_lets_a_file_tool_read_or_write_outside() {
    let fx = Fixture::new();
    let outside = fx.dir.path().join("outside");
    let (stop, swapper) = racing(&fx.workspace(), &outside);
    let run = fx.run();
    let mut read = 0;
    for i in 0..TRIES {
        if let Ok(o) = run.read_file(&ReadFileRequest::new("d/f")) {
            assert!(
                !o.observation.contains("SECRET"),
                "try {i}: {}",
                o.observation
            );
            read += 1;
        }
        if let Ok(o) = run.list_dir(&ListDirRequest::new("d")) {
            assert!(!o.observation.contains("id_ed25519"), "{}", o.observation);
        }
        let _ = run.write_file(&WriteFileRequest::new(
            "d/authorized_keys",
            "ssh-ed25519 AAAA\n",
        ));
        let patch = "*** Begin Patch\n*** Add File: d/planted\n+x\n*** End Patch\n";
        let _ = run.apply_patch(&PatchRequest::new(patch));
        let _ = std::fs::remove_file(fx.workspace().join("d/planted"));
        let _ = std::fs::remove_file(fx.workspace().join("link/planted"));
    }
    stop.store(true, Ordering::Relaxed);
    let swaps = swapper.join().unwrap();
    let mut planted: Vec<_> = std::fs::read_dir(&outside)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    planted.sort();
    assert_eq!(
        planted,
        ["f", "id_ed25519"],
        "written outside the workspace"
    );
    assert_eq!(
        std::fs::read_to_string(outside.join("f")).unwrap(),
        "SECRET KEY\n"
    );
    assert!(swaps > TRIES, "the race hardly ran: {swaps} swaps");
    assert!(read > 0, "no read got through at all in {TRIES} tries");
}
