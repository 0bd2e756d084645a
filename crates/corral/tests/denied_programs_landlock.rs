//! Where a box has no mount namespace, a denied program is held by a Landlock layer of
//! its own: it cannot be run or read in the box under any name, and everything else can.
//! Judged by its effect, with a box built as a host without namespaces builds it.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use corral_sys::program_stubs::StubSet;
use corral_sys::sandbox::{self, HostSupport, Spec};

/// The host as one without namespaces sees it; `None` where Landlock is absent.
fn host_without_namespaces() -> Option<HostSupport> {
    let host = HostSupport {
        namespaces: false,
        user_namespace: false,
        ..sandbox::host_support()
    };
    (host.landlock_abi > 0).then_some(host)
}

/// `prog` (a copy of `true` that also writes a marker) and `other` (the same) in `dir`.
fn programs(dir: &Path) -> (PathBuf, PathBuf) {
    let script = "#!/bin/sh\necho ran \"$0\"\n";
    let mut made = Vec::new();
    for name in ["prog", "other"] {
        let p = dir.join(name);
        std::fs::write(&p, script).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        made.push(p);
    }
    (made[0].clone(), made[1].clone())
}

fn boxed(host: &HostSupport, denied: &Path, script: &str, writable: &Path) -> (i32, String) {
    let spec = Spec {
        writable: vec![writable.to_path_buf()],
        writable_files: vec![PathBuf::from("/dev/null")],
        program_stubs: Some(StubSet {
            dir: writable.to_path_buf(),
            stubs: vec![("0".into(), vec![denied.to_path_buf()])],
        }),
        ..Spec::default()
    };
    let (confinement, enforced) = sandbox::build(&spec, host).unwrap();
    assert_eq!(enforced.programs_landlocked, 1);
    assert!(!enforced.mount_namespace);
    let mut cmd = Command::new("/bin/sh");
    cmd.args(["-c", script]);
    sandbox::confine_before_exec(&mut cmd, &confinement, None);
    let out = cmd.output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code().unwrap_or(-1), text)
}

#[test]
fn a_denied_program_neither_runs_nor_is_read_by_any_name() {
    let Some(host) = host_without_namespaces() else {
        eprintln!("skipped: no Landlock on this kernel");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let (prog, other) = programs(&root);
    std::os::unix::fs::symlink(&prog, root.join("alias")).unwrap();
    let copy = root.join("copy");
    let script = format!(
        "{prog}; {alias}; cat {prog} > {copy}; cat < {prog}; cp {prog} {copy}2; {other}; \
         ls /bin/sh >/dev/null && echo system-ok",
        prog = prog.display(),
        alias = root.join("alias").display(),
        copy = copy.display(),
        other = other.display(),
    );
    let (_, text) = boxed(&host, &prog, &script, &root);
    assert!(!text.contains(&format!("ran {}", prog.display())), "{text}");
    assert!(text.contains(&format!("ran {}", other.display())), "{text}");
    assert!(text.contains("system-ok"), "{text}");
    for leaked in [copy.clone(), root.join("copy2")] {
        let got = std::fs::read(&leaked).unwrap_or_default();
        assert!(
            got.is_empty(),
            "{leaked:?} holds the denied program's bytes"
        );
    }
    // Outside the box, nothing changed.
    let out = Command::new(&prog).output().unwrap();
    assert!(out.status.success());
}

#[test]
fn a_system_program_denied_leaves_the_rest_of_its_directory_runnable() {
    let Some(host) = host_without_namespaces() else {
        eprintln!("skipped: no Landlock on this kernel");
        return;
    };
    let Ok(rm) = Path::new("/bin/rm").canonicalize() else {
        eprintln!("skipped: no /bin/rm");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let victim = root.join("victim");
    std::fs::write(&victim, "keep").unwrap();
    let script = format!(
        "rm -f {v}; /bin/rm -f {v}; {rm} -f {v}; env rm -f {v}; find {v} -exec rm -f {{}} \\; ; \
         cp {rm} {root}/myrm; {root}/myrm -f {v}; ls {root} >/dev/null && echo ls-ok",
        v = victim.display(),
        rm = rm.display(),
        root = root.display(),
    );
    let (_, text) = boxed(&host, &rm, &script, &root);
    assert!(victim.exists(), "the victim was removed: {text}");
    assert!(text.contains("ls-ok"), "{text}");
}
