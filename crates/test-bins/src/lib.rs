//! What corral's process tests share: finding processes from outside by a unique marker
//! in their argv, and waiting for them to be gone.
//!
//! A test judges containment the way an operator would: by what is still running, not by
//! what corral says it did.

#![forbid(unsafe_code)]

use std::time::{Duration, Instant};

/// A marker unique to this test run, for finding its processes from outside.
pub fn marker(name: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("corral-test-{name}-{}-{nanos}", std::process::id())
}

/// Pids of live (not zombie) processes whose command line contains `marker`.
pub fn processes_with(marker: &str) -> Vec<u32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for entry in dir.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
            continue;
        };
        if !String::from_utf8_lossy(&cmdline).contains(marker) {
            continue;
        }
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let state = stat
            .rsplit_once(')')
            .and_then(|(_, r)| r.split_whitespace().next())
            .unwrap_or("");
        if state != "Z" && state != "X" {
            found.push(pid);
        }
    }
    found
}

/// Wait up to `limit` for at least `n` processes to carry `marker`.
pub fn wait_for(marker: &str, n: usize, limit: Duration) -> usize {
    let until = Instant::now() + limit;
    loop {
        let now = processes_with(marker).len();
        if now >= n || Instant::now() > until {
            return now;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Wait up to `limit` for no process to carry `marker`; return the survivors.
pub fn survivors_after(marker: &str, limit: Duration) -> Vec<u32> {
    let until = Instant::now() + limit;
    loop {
        let left = processes_with(marker);
        if left.is_empty() || Instant::now() > until {
            return left;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Kill whatever carries `marker`, so a failing test leaves nothing behind.
pub fn cleanup(marker: &str) {
    for pid in processes_with(marker) {
        if let Some(pid) = i32::try_from(pid)
            .ok()
            .and_then(rustix::process::Pid::from_raw)
        {
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
        }
    }
}

/// Where a test keeps what a boxed command runs (a helper binary, a venv's interpreter):
/// `path` itself, unless it lies in a home directory (`/root`, `/home/…`, `$HOME`), which
/// the sandbox covers when the tests give corral a `HOME` of their own; then a place
/// outside every home that the box shows (`/var/tmp/corral-tests/…`), named by `path`,
/// the same for every user and every run of the same build.
pub fn outside_homes(path: &std::path::Path) -> std::path::PathBuf {
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    let in_a_home = path.starts_with("/root")
        || path.starts_with("/home")
        || home.is_some_and(|h| h != std::path::Path::new("/") && path.starts_with(h));
    if !in_a_home {
        return path.to_path_buf();
    }
    use std::hash::{Hash, Hasher};
    let mut hash = std::collections::hash_map::DefaultHasher::new();
    path.hash(&mut hash);
    let name = path.file_name().unwrap_or_default();
    std::path::Path::new("/var/tmp/corral-tests")
        .join(format!("{:016x}", hash.finish()))
        .join(name)
}

/// [`outside_homes`] for a program: a copy of the file at `path` there, made on first use
/// and named by the build it copies (a rebuilt file gets a copy of its own, so no user
/// replaces another's), world-readable and executable so that the tests' unprivileged
/// user runs a copy root made, and root one the user made.
pub fn runnable_outside_homes(path: &std::path::Path) -> std::path::PathBuf {
    use std::hash::{Hash, Hasher};
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let place = outside_homes(path);
    if place == path {
        return place;
    }
    let meta = std::fs::metadata(path).expect("the test helper was built");
    let mut build = std::collections::hash_map::DefaultHasher::new();
    (meta.len(), meta.mtime(), meta.mtime_nsec()).hash(&mut build);
    let dir = place
        .parent()
        .expect("a copy has a directory")
        .join(format!("{:016x}", build.finish()));
    let copy = dir.join(place.file_name().expect("a copy has a name"));
    if copy.exists() {
        return copy;
    }
    std::fs::create_dir_all(&dir).expect("making the tests' directory under /var/tmp");
    let mut up = Some(dir.as_path());
    for _ in 0..3 {
        if let Some(d) = up {
            let _ = std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o1777));
            up = d.parent();
        }
    }
    // Copied beside, then renamed into place: a concurrent test sees no copy or the whole.
    let partial = dir.join(format!(".{}.{}", std::process::id(), rand_suffix()));
    std::fs::copy(path, &partial).expect("copying a test helper outside the home");
    std::fs::set_permissions(&partial, std::fs::Permissions::from_mode(0o755)).unwrap();
    if std::fs::rename(&partial, &copy).is_err() {
        // Another process (another user's) put the same build there first.
        let _ = std::fs::remove_file(&partial);
        assert!(copy.exists(), "putting a copy of {path:?} in place");
    }
    copy
}

fn rand_suffix() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64),
    );
    h.finish()
}
