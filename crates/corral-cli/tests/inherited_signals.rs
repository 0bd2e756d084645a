//! corral started with signals ignored (from `nohup`, or `cmd &` in a script) does not
//! pass them on: what it starts gets every disposition the default and nothing blocked.

use crate::common;

use common::{Scratch, text};

/// `corral ARGS`, started by a shell that ignores SIGINT and SIGQUIT first, as a script's
/// `cmd &` does (an ignored signal survives `exec`).
fn corral_ignoring(s: &Scratch, args: &[&str]) -> std::process::Output {
    let mut argv = vec![
        "-c",
        "trap '' INT QUIT; exec \"$0\" \"$@\"",
        env!("CARGO_BIN_EXE_corral"),
    ];
    argv.extend_from_slice(args);
    std::process::Command::new("sh")
        .args(&argv)
        .current_dir(s.workspace())
        .env("CORRAL_STORE", s.store())
        .env("XDG_CACHE_HOME", s.dir.path().join("cache"))
        .output()
        .unwrap()
}

fn field<'a>(status: &'a str, name: &str) -> &'a str {
    status
        .lines()
        .find_map(|l| l.strip_prefix(name))
        .unwrap_or_else(|| panic!("no {name} in {status}"))
        .trim()
}

#[test]
fn a_command_starts_with_default_dispositions_and_an_empty_mask() {
    let s = Scratch::new();
    // The shell really does pass them on to what it starts without corral.
    let plain = std::process::Command::new("sh")
        .args(["-c", "trap '' INT QUIT; exec cat /proc/self/status"])
        .output()
        .unwrap();
    assert_ne!(field(&text(&plain.stdout), "SigIgn:"), "0000000000000000");

    let out = corral_ignoring(&s, &["exec", "--", "cat", "/proc/self/status"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let status = text(&out.stdout);
    assert_eq!(field(&status, "SigIgn:"), "0000000000000000", "{status}");
    assert_eq!(field(&status, "SigBlk:"), "0000000000000000", "{status}");
}

#[test]
fn sigint_ends_a_command_of_a_corral_that_ignores_it() {
    let s = Scratch::new();
    let out = corral_ignoring(
        &s,
        &[
            "exec",
            "--yes",
            "--",
            "sh",
            "-c",
            "kill -INT $$; echo survived",
        ],
    );
    assert_eq!(out.status.code(), Some(130), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "");
}

#[test]
fn every_stage_of_a_line_and_a_terminal_get_them_too() {
    let s = Scratch::new();
    let out = corral_ignoring(
        &s,
        &["shell", "cat /proc/self/status | grep -E '^Sig(Ign|Blk)'"],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000\n"
    );

    let out = corral_ignoring(
        &s,
        &[
            "shell",
            "--tty",
            "grep -E '^Sig(Ign|Blk)' /proc/self/status",
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout).replace('\r', ""),
        "SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000\n"
    );
}
