//! The trace under strain: another writer holding it locked when a step ends, and a full
//! disk under the store and its captures. The call's result stands, no row is left
//! `running`, and later calls work once the strain is gone.

use crate::common;

use std::process::Stdio;
use std::time::{Duration, Instant};

use common::{Scratch, text};

fn steps(s: &Scratch) -> Vec<serde_json::Value> {
    let out = s.output(&["trace", "steps", "--json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    serde_json::from_slice::<serde_json::Value>(&out.stdout)
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

#[test]
fn a_step_end_outlasts_a_lock_held_past_the_busy_timeout() {
    let s = Scratch::new();
    assert!(s.output(&["exec", "--", "true"]).status.success());
    let corral = s
        .corral(&["exec", "--yes", "--", "sh", "-c", "sleep 1; echo done"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let db = rusqlite::Connection::open(s.store()).unwrap();
    db.busy_timeout(Duration::from_secs(10)).unwrap();
    // Once the call's step row is there, take the write lock and hold it well past the
    // step's end and SQLite's 5 s busy timeout.
    let until = Instant::now() + Duration::from_secs(10);
    let count = || -> i64 {
        db.query_row("SELECT count(*) FROM steps", [], |r| r.get(0))
            .unwrap()
    };
    while count() < 2 && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(10));
    }
    db.execute_batch("BEGIN EXCLUSIVE").unwrap();
    std::thread::sleep(Duration::from_secs(7));
    db.execute_batch("COMMIT").unwrap();

    let out = corral.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(text(&out.stdout), "done\n");
    let newest = &steps(&s)[0];
    assert_eq!(newest["outcome"], "exited", "{newest}");
    assert_eq!(newest["exit_code"], 0);
    let runs = text(&s.output(&["trace", "runs"]).stdout);
    assert!(!runs.contains("running"), "{runs}");
}

/// Run `script` as root in a mount namespace of its own, with a 4 MiB tmpfs at `$1` and
/// corral at `$2`; `None` where this host cannot (not root, no `unshare`).
fn on_a_small_tmpfs(script: &str) -> Option<std::process::Output> {
    if !is_root() {
        eprintln!("skipped: mounting a tmpfs needs root");
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    let script = format!(
        "mount -t tmpfs -o size=4m tmpfs \"$1\" || exit 99\nexport CORRAL_STORE=\"$1/trace.db\"\n{script}"
    );
    std::fs::create_dir(dir.path().join("mnt")).unwrap();
    let out = std::process::Command::new("unshare")
        .args([
            "--mount",
            "--propagation",
            "private",
            "sh",
            "-c",
            &script,
            "sh",
        ])
        .arg(dir.path().join("mnt"))
        .arg(env!("CARGO_BIN_EXE_corral"))
        .current_dir(&ws)
        .env_remove("CORRAL_STORE")
        .env("XDG_CACHE_HOME", dir.path().join("cache"))
        .stdin(Stdio::null())
        .output();
    match out {
        Ok(out) if out.status.code() != Some(99) => Some(out),
        _ => {
            eprintln!("skipped: no tmpfs in a mount namespace here");
            None
        }
    }
}

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .map(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Uid:"))
                .is_some_and(|ids| ids.split_whitespace().nth(1) == Some("0"))
        })
        .unwrap_or(false)
}

#[test]
fn a_full_disk_fails_the_capture_keeps_the_result_and_later_calls_work() {
    let script = r#"
"$2" exec -- head -c 20000000 /dev/zero >/dev/null; echo "big=$?"
"$2" exec -- echo small; echo "small=$?"
head -c 8000000 /dev/zero > "$1/filler" 2>/dev/null
"$2" exec -- echo full >/dev/null 2>&1; echo "full=$?"
rm "$1/filler"
"$2" exec -- echo back; echo "back=$?"
"$2" trace steps --json > /dev/shm/corral-full-disk-$$.json
echo "steps=/dev/shm/corral-full-disk-$$.json"
"#;
    let Some(out) = on_a_small_tmpfs(script) else {
        return;
    };
    let said = text(&out.stdout);
    let stderr = text(&out.stderr);
    assert!(said.contains("big=0"), "{said}\n{stderr}");
    assert!(said.contains("small\nsmall=0"), "{said}\n{stderr}");
    // With no space at all, corral says so (or, with a page to spare, runs).
    assert!(
        said.contains("full=125") || said.contains("full=0"),
        "{said}\n{stderr}"
    );
    assert!(said.contains("back\nback=0"), "{said}\n{stderr}");

    let listing = said
        .lines()
        .find_map(|l| l.strip_prefix("steps="))
        .unwrap()
        .to_string();
    let steps: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&listing).unwrap()).unwrap();
    std::fs::remove_file(&listing).unwrap();
    let steps = steps.as_array().unwrap();
    for step in steps {
        assert!(!step["outcome"].is_null(), "a step is left running: {step}");
    }
    let big = steps
        .iter()
        .find(|s| s["stdout_bytes"] == 20_000_000)
        .expect("the big call is recorded with every byte counted");
    assert_eq!(big["outcome"], "exited");
    assert!(
        big["observation"]
            .as_str()
            .unwrap()
            .contains("the capture stopped taking bytes"),
        "{big}"
    );
}

#[test]
fn a_read_only_store_can_still_be_read() {
    let script = r#"
"$2" exec -- echo kept >/dev/null; echo "exec=$?"
mount -o remount,ro "$1" || exit 99
"$2" trace runs >/dev/null; echo "runs=$?"
"$2" trace steps; echo "steps=$?"
"$2" trace output 1; echo "output=$?"
"$2" exec -- true 2>/dev/null; echo "write=$?"
"#;
    let Some(out) = on_a_small_tmpfs(script) else {
        return;
    };
    let said = text(&out.stdout);
    let stderr = text(&out.stderr);
    assert!(said.contains("exec=0"), "{said}\n{stderr}");
    assert!(said.contains("runs=0"), "{said}\n{stderr}");
    assert!(said.contains("echo kept"), "{said}\n{stderr}");
    assert!(said.contains("steps=0"), "{said}\n{stderr}");
    assert!(said.contains("kept\noutput=0"), "{said}\n{stderr}");
    // Writing is what fails, and says so.
    assert!(said.contains("write=125"), "{said}\n{stderr}");
}

/// Old captures a command line's run cannot prune (their directory is a file now) do not
/// cost the command its status: the error is said, the call and the run's end recorded.
#[test]
fn a_prune_that_fails_is_reported_and_the_status_stands() {
    let s = Scratch::new();
    assert!(s.output(&["exec", "--", "true"]).status.success());
    // More runs than the retention keeps (100), the oldest with captures where its
    // directory cannot be removed.
    let db = rusqlite::Connection::open(s.store()).unwrap();
    for i in 0..105 {
        db.execute(
            "INSERT INTO runs (id, workspace, started_at_ms, ended_at_ms, ended_how, pid, \
             config_json, capture_bytes) VALUES (?1, '/ws', ?2, ?2, 'closed', 1, '{}', 10)",
            rusqlite::params![format!("r-old-{i:03}"), 1_000 + i],
        )
        .unwrap();
    }
    drop(db);
    let captures = s.store().parent().unwrap().join("captures");
    std::fs::create_dir_all(&captures).unwrap();
    std::fs::write(captures.join("r-old-000"), "not a directory").unwrap();

    let out = s.output(&["exec", "--yes", "--", "sh", "-c", "exit 3"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "the command's status: {stderr}");
    assert!(
        stderr.contains("r-old-000"),
        "the failed prune is said: {stderr}"
    );
    let last = steps(&s).into_iter().next().expect("the call's row");
    assert_eq!(last["exit_code"], 3, "{last}");
}

/// A tmpfs of `size` mounted at `at` while the guard lives; `None`, said, where this host
/// cannot mount one (mounting needs root).
struct Tmpfs(std::path::PathBuf);

impl Tmpfs {
    fn mount(at: &std::path::Path, size: &str) -> Option<Tmpfs> {
        if !is_root() {
            eprintln!("skipped: mounting a {size} tmpfs for corral's state needs root");
            return None;
        }
        std::fs::create_dir_all(at).unwrap();
        let mounted = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(at)
            .status();
        match mounted {
            Ok(status) if status.success() => Some(Tmpfs(at.to_path_buf())),
            _ => {
                eprintln!("skipped: no tmpfs could be mounted here");
                None
            }
        }
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(&self.0)
            .status();
    }
}

/// Issue 60: two 30 MB files changed by calls filled a 48 MiB state filesystem through
/// the undo store, after which calls ran with no step row and step numbers were reused.
/// Now the run's records stop at the store's budget (said), a call that cannot be
/// recorded does not run, and every call that ran has its row, numbered once.
#[tokio::test(flavor = "multi_thread")]
async fn a_small_state_filesystem_never_has_a_call_run_unrecorded() {
    use crate::mcp_common::{self, PERMISSIVE, Session};
    use serde_json::json;

    let dir = tempfile::tempdir().unwrap();
    let Some(_tmpfs) = Tmpfs::mount(&dir.path().join("state"), "48m") else {
        return;
    };
    let ws = dir.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    let policy = ws.join("corral.toml");
    std::fs::write(&policy, PERMISSIVE).unwrap();
    corral::TrustStore::at(mcp_common::trust_store(dir.path()))
        .trust(&policy)
        .unwrap();
    let session = Session::start_in(dir, None, &[], None).await;
    let shell = |line: &str| session.call("shell", json!({ "line": line }));

    let mut said = String::new();
    for n in 1..=3 {
        let line = format!("head -c 30000000 /dev/urandom > big{n} && touch ran{n}");
        said.push_str(&mcp_common::text(&shell(&line).await));
    }
    assert!(ws.join("ran3").exists(), "{said}");
    // The store stopped at its budget (a tenth of the free space) and said so.
    assert!(said.contains("store_max_mb"), "{said}");

    // The state filesystem filled by something else: the next call is refused, unrun.
    let state = session.dir.path().join("state");
    let free: u64 = {
        let out = std::process::Command::new("stat")
            .args(["-f", "-c", "%a %S"])
            .arg(&state)
            .output()
            .unwrap();
        let said = text(&out.stdout);
        let mut n = said.split_whitespace().map(|w| w.parse::<u64>().unwrap());
        n.next().unwrap() * n.next().unwrap()
    };
    let filler = state.join("filler");
    std::fs::write(&filler, vec![0u8; (free - (512 << 10)) as usize]).unwrap();
    let refused = mcp_common::text(&shell("touch unrecorded").await);
    assert!(
        refused.contains("corral cannot record this call")
            && refused.contains("bytes free; free space or prune with corral trace prune"),
        "{refused}"
    );
    assert!(!ws.join("unrecorded").exists(), "a call ran unrecorded");

    std::fs::remove_file(&filler).unwrap();
    let back = mcp_common::text(&shell("touch back").await);
    assert!(ws.join("back").exists(), "{back}");

    let steps = session.trace(&["steps"]);
    let steps = steps.as_array().unwrap();
    let mut seqs: Vec<i64> = steps.iter().map(|s| s["seq"].as_i64().unwrap()).collect();
    seqs.sort();
    let mut unique = seqs.clone();
    unique.dedup();
    assert_eq!(seqs, unique, "a step number was reused: {steps:?}");
    let lines: Vec<&str> = steps
        .iter()
        .filter_map(|s| s["call_json"].as_str())
        .collect();
    for ran in ["ran1", "ran2", "ran3", "touch back"] {
        assert!(
            lines.iter().any(|l| l.contains(ran)),
            "a call that ran has no row ({ran}): {lines:?}"
        );
    }
    assert!(!lines.iter().any(|l| l.contains("unrecorded")), "{lines:?}");
    for step in steps {
        assert!(!step["outcome"].is_null(), "a step is left running: {step}");
    }
}
