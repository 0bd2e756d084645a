//! The sandbox's read denies, judged from outside the box: every default credential path
//! (made under a scratch home) unreadable from inside, the workspace still readable, a
//! failed read labelled by its path, raw devices out of reach, capabilities gone.

use crate::common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use common::Fixture;
use corral::{
    Config, ExecRequest, Outcome, Run, sandbox::Level, sandbox::SandboxConfig, sandbox::SandboxMode,
};

/// The default read denies, with `~/` made the scratch home `home`.
fn defaults_under(home: &Path) -> Vec<String> {
    corral::sandbox::DEFAULT_DENY_READ
        .iter()
        .map(|p| {
            home.join(p.strip_prefix("~/").unwrap())
                .display()
                .to_string()
        })
        .collect()
}

fn open(fx: &Fixture, home: &Path) -> Run {
    let mut sandbox = SandboxConfig::mode(SandboxMode::WorkspaceWrite);
    sandbox.deny_read = defaults_under(home);
    Run::builder(fx.workspace())
        .store(fx.store())
        .config(Config {
            sandbox,
            ..Config::default()
        })
        .policy(corral::Policy::permissive())
        .approver(corral::approve::ApproveAll)
        .open()
        .unwrap()
}

fn sh(run: &Run, script: &str) -> Outcome {
    run.exec(&ExecRequest::new(["sh", "-c", script]).timeout(Duration::from_secs(60)))
        .unwrap()
}

fn stdout(o: &Outcome) -> String {
    format!("{}{}", o.stdout.window.head, o.stdout.window.tail)
}

fn namespaces() -> bool {
    corral_sys::sandbox::host_support().namespaces
}

/// A secret file for every default pattern (a file inside each directory, the file
/// itself otherwise); returns the secret files.
fn plant(home: &Path) -> Vec<PathBuf> {
    let mut secrets = Vec::new();
    for (i, pattern) in corral::sandbox::DEFAULT_DENY_READ.iter().enumerate() {
        let rel = pattern.strip_prefix("~/").unwrap();
        let files = [
            ".docker/config.json",
            ".netrc",
            ".git-credentials",
            ".npmrc",
            ".pypirc",
        ];
        let file = if let Some(prefix) = rel.strip_suffix('*') {
            home.join(format!("{prefix}.toml"))
        } else if files.contains(&rel) {
            home.join(rel)
        } else {
            home.join(rel).join("secret")
        };
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, format!("SECRET-{i}\n")).unwrap();
        secrets.push(file);
    }
    secrets
}

#[test]
fn every_default_path_is_unreadable_and_the_workspace_is_not() {
    if !namespaces() {
        return;
    }
    let fx = Fixture::new();
    let home = fx.dir.path().join("home");
    let secrets = plant(&home);
    assert_eq!(secrets.len(), corral::sandbox::DEFAULT_DENY_READ.len());
    std::fs::write(fx.workspace().join("notes.txt"), "workspace text\n").unwrap();
    let run = open(&fx, &home);

    for secret in &secrets {
        let o = sh(&run, &format!("cat '{}'", secret.display()));
        assert!(
            !o.status.success(),
            "{} was read: {}",
            secret.display(),
            o.observation
        );
        assert!(!stdout(&o).contains("SECRET"), "{}", o.observation);
    }
    // Every way of looking: listing, finding, grepping the whole home.
    let o = sh(
        &run,
        &format!(
            "find '{h}' -type f -exec cat {{}} + 2>/dev/null; grep -r SECRET '{h}' 2>/dev/null; true",
            h = home.display()
        ),
    );
    assert!(!stdout(&o).contains("SECRET"), "{}", o.observation);
    // The paths exist but hold nothing.
    let o = sh(&run, &format!("ls -A '{}/.ssh' | wc -l", home.display()));
    assert_eq!(stdout(&o).trim(), "0", "{}", o.observation);
    // The workspace stays readable, and the files are intact outside.
    let o = sh(&run, "cat notes.txt");
    assert!(o.status.success(), "{}", o.observation);
    assert_eq!(stdout(&o), "workspace text\n");
    for (i, secret) in secrets.iter().enumerate() {
        assert_eq!(
            std::fs::read_to_string(secret).unwrap(),
            format!("SECRET-{i}\n")
        );
    }
}

#[test]
fn a_failed_read_of_a_denied_path_is_labelled_by_its_path() {
    if !namespaces() {
        return;
    }
    let fx = Fixture::new();
    // A home where a person's is: outside `/tmp`, which the box has a directory of its
    // own over (what lies in the host's is not there at all in the box).
    let outside_tmp = tempfile::tempdir_in("/var/tmp").unwrap();
    let home = outside_tmp.path().join("home");
    plant(&home);
    let run = open(&fx, &home);
    for target in [home.join(".ssh/secret"), home.join(".netrc")] {
        let o = sh(&run, &format!("cat '{}'", target.display()));
        assert!(!o.status.success());
        let report = o.sandbox.as_ref().unwrap();
        let denied = report.denied_read.as_deref().unwrap_or_else(|| {
            panic!("no read denial for {}: {}", target.display(), o.observation)
        });
        assert!(denied.contains(&target.display().to_string()), "{denied}");
        assert!(report.denied_write.is_none(), "{:?}", report.denied_write);
        assert!(
            o.observation.contains("sandbox: denied a read of"),
            "{}",
            o.observation
        );
    }
    let layer = |o: &Outcome| {
        o.sandbox
            .as_ref()
            .unwrap()
            .layers
            .iter()
            .find(|l| l.layer == corral::sandbox::Layer::ReadDenies)
            .cloned()
            .unwrap()
    };
    let store = corral_trace::Store::open(&fx.store()).unwrap();
    let rows = store.sandbox_events_of_run(run.id(), "layer").unwrap();
    let reads: Vec<_> = rows
        .iter()
        .filter(|(r, _)| r.layer == "denial" && r.level == "read")
        .collect();
    assert_eq!(reads.len(), 2, "{rows:?}");
    assert!(reads[0].0.detail.contains(".ssh/secret"), "{reads:?}");
    let o = sh(&run, "true");
    assert_eq!(layer(&o).level, Level::Full, "{:?}", layer(&o));
    // Not the run's first result, and nothing changed: no status line at all.
    assert!(!o.observation.contains("sandbox: "), "{}", o.observation);
}

#[test]
fn corrals_own_store_is_unreadable() {
    if !namespaces() {
        return;
    }
    let fx = Fixture::new();
    let home = fx.dir.path().join("home");
    let run = open(&fx, &home);
    let db = fx.store().canonicalize().unwrap();
    let o = sh(&run, &format!("head -c 16 '{}' | od -c", db.display()));
    assert!(!stdout(&o).contains("S   Q   L"), "{}", o.observation);
}

/// The first block device the host has (`/dev/vda`, a loop device, …).
fn a_block_device() -> Option<PathBuf> {
    use std::os::unix::fs::FileTypeExt;
    let mut found: Vec<PathBuf> = std::fs::read_dir("/dev")
        .ok()?
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_block_device()))
        .map(|e| e.path())
        .collect();
    found.sort();
    found.into_iter().next()
}

#[test]
fn raw_devices_are_out_of_reach_and_the_usual_nodes_work() {
    if !namespaces() {
        return;
    }
    let fx = Fixture::new();
    let run = open(&fx, &fx.dir.path().join("home"));
    if let Some(dev) = a_block_device() {
        use std::os::unix::fs::MetadataExt;
        let rdev = std::fs::metadata(&dev).unwrap().rdev();
        let (major, minor) = (libc_major(rdev), libc_minor(rdev));
        for script in [
            format!("head -c 512 {} | wc -c", dev.display()),
            format!("cat {} > /dev/null", dev.display()),
            format!("mknod $TMPDIR/disk b {major} {minor} && head -c 512 $TMPDIR/disk | wc -c"),
        ] {
            let o = sh(&run, &script);
            let out = stdout(&o);
            assert!(
                !o.status.success() || out.trim() == "0",
                "{script}: {}",
                o.observation
            );
            assert_ne!(out.trim(), "512", "{script} read the disk");
        }
    }
    let o = sh(&run, "ls -A /dev | sort | tr '\\n' ' '");
    assert_eq!(
        stdout(&o).trim(),
        "fd full null ptmx pts random shm stderr stdin stdout tty urandom zero",
        "{}",
        o.observation
    );
    let o = sh(
        &run,
        "echo x > /dev/null && head -c 8 /dev/urandom | wc -c && head -c 4 /dev/zero | wc -c",
    );
    assert!(o.status.success(), "{}", o.observation);
    assert_eq!(
        stdout(&o).split_whitespace().collect::<Vec<_>>(),
        ["8", "4"]
    );
}

fn libc_major(rdev: u64) -> u64 {
    ((rdev >> 32) & 0xffff_f000) | ((rdev >> 8) & 0xfff)
}

fn libc_minor(rdev: u64) -> u64 {
    ((rdev >> 12) & 0xffff_ff00) | (rdev & 0xff)
}

#[test]
fn root_in_the_box_holds_no_capability() {
    if !namespaces() {
        return;
    }
    let fx = Fixture::new();
    let run = open(&fx, &fx.dir.path().join("home"));
    let o = sh(
        &run,
        "grep -E '^Cap(Inh|Prm|Eff|Bnd|Amb):' /proc/self/status",
    );
    assert!(o.status.success(), "{}", o.observation);
    let mut seen = 0;
    for line in stdout(&o).lines() {
        let (name, hex) = line.split_once(':').unwrap();
        let bits = u64::from_str_radix(hex.trim(), 16).unwrap();
        let held: Vec<String> = (0..64)
            .filter(|cap| bits & (1 << cap) != 0)
            .map(corral_sys::sandbox_reach::capability_name)
            .collect();
        assert!(held.is_empty(), "{name} still holds {held:?}");
        seen += 1;
    }
    assert_eq!(seen, 5, "{}", o.observation);
    // Nor a real-time priority to starve the host with.
    let rt = sh(&run, "chrt -f 99 true");
    assert!(!rt.status.success(), "{}", rt.observation);
}

fn line(run: &Run, line: &str) -> Outcome {
    run.shell(&corral::ShellRequest::new(line).timeout(Duration::from_secs(60)))
        .unwrap()
}

fn stderr(o: &Outcome) -> String {
    format!("{}{}", o.stderr.window.head, o.stderr.window.tail)
}

#[test]
fn a_redirect_reads_only_what_the_command_may() {
    if !namespaces() {
        return;
    }
    let fx = Fixture::new();
    let home = fx.dir.path().join("home");
    let secrets = plant(&home);
    let run = open(&fx, &home);
    let db = fx.store().canonicalize().unwrap();
    for secret in &secrets {
        for spelling in ["cat < '{}'", "cat 0< '{}'", "cat <'{}' -", "wc -c < '{}'"] {
            let o = line(&run, &spelling.replace("{}", &secret.display().to_string()));
            assert!(!stdout(&o).contains("SECRET"), "{}", o.observation);
            assert!(!o.status.success(), "{}", o.observation);
        }
    }
    for target in [db.display().to_string(), "/dev/kmsg".into()] {
        let o = line(&run, &format!("head -c 15 < {target}"));
        assert!(!o.status.success(), "{target}: {}", o.observation);
        assert!(stdout(&o).is_empty(), "{target}: {}", o.observation);
    }
    // Named: the refused stage says which target, as a shell would, and the line goes on.
    let key = home.join(".ssh/secret");
    let o = line(
        &run,
        &format!("echo before; cat < '{}'; echo after", key.display()),
    );
    assert_eq!(stdout(&o), "before\nafter\n", "{}", o.observation);
    assert!(
        stderr(&o).contains(&key.display().to_string()),
        "{}",
        o.observation
    );
    // A later stage of a pipeline fails by name; the others run.
    let o = line(&run, &format!("echo x | cat < '{}' | wc -l", key.display()));
    assert_eq!(stdout(&o).trim(), "0", "{}", o.observation);
    assert!(
        stderr(&o).contains(&key.display().to_string()),
        "{}",
        o.observation
    );
    for (i, secret) in secrets.iter().enumerate() {
        assert_eq!(
            std::fs::read_to_string(secret).unwrap(),
            format!("SECRET-{i}\n")
        );
    }
}

#[test]
fn redirects_inside_the_workspace_work_in_the_box() {
    if !namespaces() {
        return;
    }
    let fx = Fixture::new();
    let home = fx.dir.path().join("home");
    let run = open(&fx, &home);
    std::fs::write(fx.workspace().join("in.txt"), "one\ntwo\n").unwrap();
    let o = line(
        &run,
        "wc -l < in.txt > n.txt; echo more >> n.txt; ls nope > err.txt 2>&1; cat n.txt; \
         tr a-z A-Z <<< done",
    );
    assert!(o.status.success(), "{}", o.observation);
    assert_eq!(stdout(&o), "2\nmore\nDONE\n", "{}", o.observation);
    let err = std::fs::read_to_string(fx.workspace().join("err.txt")).unwrap();
    assert!(err.contains("nope"), "{err}");
    // A write outside the box's writable roots is refused before anything runs.
    let outside = fx.dir.path().join("outside.txt");
    let refused = run
        .shell(&corral::ShellRequest::new(format!(
            "echo planted > '{}'",
            outside.display()
        )))
        .unwrap_err();
    assert_eq!(refused.kind(), corral::ErrorKind::Refused, "{refused}");
    assert!(!outside.exists(), "{refused}");
}

#[test]
fn corrals_own_process_is_out_of_reach_from_the_box() {
    let fx = Fixture::new();
    let home = fx.dir.path().join("home");
    let run = open(&fx, &home);
    let pid = std::process::id();
    // By its pid and by the ids of its threads (a thread's entry is not the process's).
    let mut ids: Vec<String> = std::fs::read_dir("/proc/self/task")
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    ids.truncate(4);
    ids.push(pid.to_string());
    let entries = ["environ", "mem", "maps", "root/etc/hostname"];
    for (id, entry) in ids
        .iter()
        .flat_map(|id| entries.iter().map(move |e| (id, e)))
    {
        let path = format!("/proc/{id}/{entry}");
        // Refused before it runs, or failed inside: either way nothing was read. (A
        // redirect's target is resolved when planned: `root/…` is then the host file.)
        let redirected = run.shell(&corral::ShellRequest::new(format!("head -c 64 < {path}")));
        if let Some(o) = redirected
            .as_ref()
            .ok()
            .filter(|_| !entry.starts_with("root/"))
        {
            assert!(stdout(o).is_empty(), "{path}: {}", o.observation);
        }
        let o = sh(&run, &format!("head -c 64 {path}"));
        assert!(!o.status.success(), "{path} was read: {}", o.observation);
        assert!(stdout(&o).is_empty(), "{path}: {}", o.observation);
    }
    for id in &ids {
        // Where to its descriptors and its directory lead: nowhere. (The numbers of its
        // descriptors may be listed where corral is a dumpable library caller.)
        let o = sh(&run, &format!("ls -l /proc/{id}/fd/; ls /proc/{id}/cwd/"));
        assert!(!o.status.success(), "{id}: {}", o.observation);
        assert!(!stdout(&o).contains("->"), "{id}: {}", o.observation);
    }
    // Nothing a command is given names corral's pid.
    let o = sh(&run, "env");
    let env = stdout(&o);
    assert!(
        !env.lines()
            .any(|l| l.split(['=', '-', '/']).any(|w| w == pid.to_string())),
        "{env}"
    );
}

#[test]
fn the_boxs_own_shm_is_writable_and_stays_in_the_box() {
    if !namespaces() {
        return;
    }
    let fx = Fixture::new();
    let home = fx.dir.path().join("home");
    let run = open(&fx, &home);
    let name = format!("corral-test-shm-{}", std::process::id());
    let o = sh(
        &run,
        &format!("echo in-box > /dev/shm/{name} && cat /dev/shm/{name}"),
    );
    assert!(o.status.success(), "{}", o.observation);
    assert_eq!(stdout(&o), "in-box\n");
    assert!(
        !Path::new("/dev/shm").join(&name).exists(),
        "it reached the host's /dev/shm"
    );
    // What needs it: a process pool's semaphores.
    let pool =
        "from multiprocessing import Pool\nwith Pool(2) as p: print(sum(p.map(abs, range(-5, 5))))";
    let o = run
        .exec(&ExecRequest::new(["python3", "-c", pool]).timeout(Duration::from_secs(60)))
        .unwrap();
    assert!(o.status.success(), "{}", o.observation);
    assert_eq!(stdout(&o), "25\n", "{}", o.observation);
}

#[test]
fn the_shadow_files_and_other_homes_are_hidden_too() {
    if !namespaces() {
        return;
    }
    let fx = Fixture::new();
    let home = fx.dir.path().join("home");
    let run = open(&fx, &home);
    for secret in ["/etc/shadow", "/etc/gshadow"] {
        if !Path::new(secret).exists() {
            continue;
        }
        let o = sh(&run, &format!("cat {secret}"));
        assert!(!o.status.success(), "{secret} was read: {}", o.observation);
        assert!(stdout(&o).is_empty(), "{secret}: {}", o.observation);
    }
    // The accounts themselves stay readable: tools look names up there.
    let o = sh(&run, "grep -c . /etc/passwd");
    assert!(o.status.success(), "{}", o.observation);
}
