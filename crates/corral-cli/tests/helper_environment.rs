//! The processes corral starts for itself (the PID namespace's init, its probes) get a
//! minimal environment: a loader variable in corral's own environment reaches none of
//! them, nor a sandboxed command. (Nor corral itself, where it is linked statically: it
//! has no loader to read one.)

use crate::common;

use std::process::Command;

use common::{Scratch, text};

/// A shared object that, loaded into a process, appends that process's executable to
/// `mark`.
fn marking_library(s: &Scratch, mark: &std::path::Path) -> std::path::PathBuf {
    let src = s.dir.path().join("mark.c");
    let lib = s.dir.path().join("libmark.so");
    std::fs::write(
        &src,
        format!(
            r#"#include <fcntl.h>
#include <string.h>
#include <unistd.h>
__attribute__((constructor)) static void mark(void) {{
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n < 0) return;
    exe[n++] = '\n';
    int fd = open("{}", O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd < 0) return;
    write(fd, exe, n);
    close(fd);
}}
"#,
            mark.display()
        ),
    )
    .unwrap();
    let status = Command::new("cc")
        .args(["-shared", "-fPIC", "-o"])
        .arg(&lib)
        .arg(&src)
        .status()
        .expect("a C compiler (cc) to build the marking library");
    assert!(status.success());
    lib
}

#[test]
fn a_loader_variable_of_corral_reaches_no_helper_and_no_sandboxed_command() {
    let s = Scratch::new();
    let mark = s.dir.path().join("loaded-into");
    let lib = marking_library(&s, &mark);
    // The library works: a program started with it loads it.
    let control = Command::new("printf")
        .arg("")
        .env("LD_PRELOAD", &lib)
        .status()
        .unwrap();
    assert!(control.success());
    let loaded = std::fs::read_to_string(&mark).unwrap_or_default();
    assert!(
        loaded.contains("printf"),
        "the library loaded into nothing: {loaded:?}"
    );
    std::fs::remove_file(&mark).unwrap();
    for args in [
        &["sandbox", "report"][..],
        &["exec", "--sandbox", "workspace-write", "--", "/bin/true"],
        &[
            "shell",
            "--sandbox",
            "workspace-write",
            "cat /dev/null | /bin/true",
        ],
    ] {
        let out = s.corral(args).env("LD_PRELOAD", &lib).output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
    }
    let loaded = std::fs::read_to_string(&mark).unwrap_or_default();
    let corral = std::fs::canonicalize(env!("CARGO_BIN_EXE_corral")).unwrap();
    // corral itself loads it where it is linked dynamically, as any program would.
    let dynamic = env!("CORRAL_LINKED") != "static-pie";
    assert_eq!(
        loaded.lines().any(|l| std::path::Path::new(l) == corral),
        dynamic,
        "{loaded}"
    );
    let others: Vec<&str> = loaded
        .lines()
        .filter(|l| std::path::Path::new(l) != corral)
        .collect();
    assert!(
        others.is_empty(),
        "loaded into processes corral started: {others:?}"
    );
}
