//! `--network allow=…` and `corral sandbox report` as a person uses them.

use crate::common;

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

#[test]
fn the_default_read_denies_follow_home() {
    if !corral_sys::sandbox::host_support().namespaces {
        return;
    }
    let s = Scratch::new();
    // Where a person's home is: outside `/tmp`, which the box has a directory of its own
    // over (what lies in the host's is not there at all in the box).
    let outside_tmp = tempfile::tempdir_in("/var/tmp").unwrap();
    let home = outside_tmp.path().join("home");
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::write(home.join(".ssh/id_ed25519"), "SECRET-KEY\n").unwrap();
    std::fs::write(home.join(".netrc"), "SECRET-NETRC\n").unwrap();
    std::fs::write(s.workspace().join("notes"), "readable\n").unwrap();
    // The whole home kept (as `home_read = ["~"]` keeps it), so the read denies are what
    // hides the secrets, each labelled by its path.
    let policy = s.dir.path().join("whole-home.toml");
    std::fs::write(&policy, "[sandbox]\nhome_read = [\"~\"]\n").unwrap();
    for (target, denied) in [
        (home.join(".ssh/id_ed25519"), true),
        (home.join(".netrc"), true),
        (s.workspace().join("notes"), false),
    ] {
        let out = s
            .corral(&[
                "exec",
                "--sandbox",
                "workspace-write",
                "--config",
                policy.to_str().unwrap(),
                "--yes",
                "--",
                "cat",
                target.to_str().unwrap(),
            ])
            .env("HOME", &home)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        if denied {
            assert!(!out.status.success(), "{target:?}: {stdout}{stderr}");
            assert!(!stdout.contains("SECRET"), "{stdout}");
            assert!(
                stderr.contains("the sandbox denied a read of") && stderr.contains("deny_read"),
                "{stderr}"
            );
        } else {
            assert!(out.status.success(), "{stderr}");
            assert_eq!(stdout, "readable\n");
        }
    }
}

/// A write the box refused is said once on the command line: the command's own error
/// passes through, and corral names the path without repeating the line.
#[test]
fn a_refused_write_s_error_is_said_once() {
    if !corral_sys::sandbox::host_support().namespaces {
        return;
    }
    let s = Scratch::new();
    std::fs::write(s.workspace().join("corral.toml"), "").unwrap();
    let out = s.output(&[
        "exec",
        "--sandbox",
        "workspace-write",
        "--",
        "sh",
        "-c",
        "echo x >> corral.toml",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    let said = err
        .lines()
        .filter(|l| l.contains("Read-only file system"))
        .count();
    assert_eq!(said, 1, "{err}");
    assert!(err.contains("refused by the sandbox"), "{err}");
}
