//! Exit statuses as a shell user expects them: 126 for a program that is there but cannot
//! run, 2 for a step that does not exist. (An argument list over the kernel's limit cannot
//! reach corral's own command line; the library's tests cover it.)

use crate::common;

use common::{Scratch, text};

#[test]
fn a_directory_or_a_file_without_execute_permission_is_126() {
    let s = Scratch::new();
    std::fs::create_dir(s.workspace().join("dir")).unwrap();
    std::fs::write(s.workspace().join("script"), "echo hi\n").unwrap();
    for program in ["./dir", "./script"] {
        let out = s.output(&["exec", "--", program]);
        assert_eq!(
            out.status.code(),
            Some(126),
            "{program}: {}",
            text(&out.stderr)
        );
    }
    // A line behaves the same.
    let out = s.output(&["shell", "./dir"]);
    assert_eq!(out.status.code(), Some(126), "{}", text(&out.stderr));
    // And a missing one stays 127.
    let out = s.output(&["exec", "--", "./missing"]);
    assert_eq!(out.status.code(), Some(127));
}

#[test]
fn a_missing_step_is_a_bad_request() {
    let s = Scratch::new();
    assert!(s.output(&["exec", "--", "true"]).status.success());
    let out = s.output(&["trace", "output", "999"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("no step 999"), "{stderr}");
    assert_eq!(
        stderr.matches("no step 999").count(),
        1,
        "said once: {stderr}"
    );
}
