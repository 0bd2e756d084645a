//! `--network allow=…` and `corral sandbox report` as a person uses them.

mod common;

use common::Scratch;

#[test]
fn a_bad_domain_is_refused_with_what_to_write() {
    let s = Scratch::new();
    for bad in ["allow=*.com", "allow=", "allow=a b", "sometimes"] {
        let out = s.output(&[
            "exec",
            "--sandbox",
            "workspace-write",
            "--network",
            bad,
            "--",
            "true",
        ]);
        assert_eq!(out.status.code(), Some(2), "{bad}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("--network"), "{bad}: {err}");
    }
}

#[test]
fn an_allowed_domain_reaches_the_command_through_the_proxy() {
    if !corral_sys::sandbox::host_support().namespaces {
        return;
    }
    let s = Scratch::new();
    let out = s.output(&[
        "exec",
        "--sandbox",
        "workspace-write",
        "--network",
        "allow=npm,*.example.org",
        "--yes",
        "--",
        "sh",
        "-c",
        "echo $HTTPS_PROXY $ALL_PROXY $NO_PROXY",
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}{stderr}");
    let words: Vec<&str> = stdout.split_whitespace().collect();
    assert_eq!(words.len(), 3, "{stdout}");
    assert!(words[0].starts_with("http://127.0.0.1:"), "{stdout}");
    assert!(words[1].starts_with("socks5h://127.0.0.1:"), "{stdout}");
    assert_eq!(words[2], "localhost,127.0.0.1");
    assert!(stderr.contains("network by domain"), "{stderr}");
}

#[test]
fn the_report_lists_the_read_denies_and_the_private_dev() {
    let s = Scratch::new();
    let out = s.output(&["sandbox", "report"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for layer in ["read denies", "capabilities", "private /dev"] {
        assert!(text.contains(layer), "{layer} missing: {text}");
    }
}
