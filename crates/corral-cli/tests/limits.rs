//! What one call may use: a call that reaches its memory bound ends and says so, through
//! the command line and `corral mcp`; every call runs niced below corral and cannot
//! raise itself back.

use crate::common;
use crate::mcp_common;

use common::{Scratch, UserScratch, text};
use serde_json::json;

/// Grows past 64 MiB in steps, as a leaking test run would, then says it survived.
const HOG: &str = "import time\nhold = []\nfor _ in range(64):\n    hold.append(bytearray(8 << 20))\n    time.sleep(0.005)\nprint('survived')\n";

/// Whether the call's processes were bounded one by one (`RLIMIT_DATA`, where no memory
/// group could be had for it): Python meets the bound as a `MemoryError`.
fn per_process(said: &str) -> bool {
    said.contains("MemoryError")
}

/// Whether calls get a memory bound here, as `corral sandbox report` says.
fn bounded(report: &str) -> bool {
    report
        .lines()
        .any(|l| l.trim_start().starts_with("memory") && !l.contains(" none "))
}

#[test]
fn a_call_past_its_memory_bound_ends_and_says_why() {
    let s = Scratch::new();
    let report = text(&s.output(&["sandbox", "report"]).stdout);
    if !bounded(&report) {
        common::skip("no memory bound for calls here (no cgroup with the memory controller)");
        return;
    }
    std::fs::write(s.workspace().join("hog.py"), HOG).unwrap();
    for sandbox in ["workspace-write", "full"] {
        let out = s.output(&[
            "exec",
            "--sandbox",
            sandbox,
            "--memory",
            "64M",
            "--yes",
            "--",
            "python3",
            "hog.py",
        ]);
        let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
        assert!(!stdout.contains("survived"), "{sandbox}: {stdout}{stderr}");
        if per_process(&stderr) {
            // No group could be had for this call: each process held by RLIMIT_DATA,
            // which an allocation meets as an error (see `bounds_every_user`).
            assert!(!out.status.success(), "{sandbox}: {stderr}");
            eprintln!("{sandbox}: bounded per process here (no memory group for the call)");
            continue;
        }
        assert_eq!(out.status.code(), Some(137), "{sandbox}: {stderr}");
        assert!(
            stderr.contains("reached its memory limit (64 MiB)"),
            "{sandbox}: {stderr}"
        );
    }
    // The trace keeps it as what it was.
    let out = s.output(&[
        "exec", "--memory", "64M", "--json", "--yes", "--", "python3", "hog.py",
    ]);
    let outcome: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        outcome["status"]["kind"] == "out_of_memory" || per_process(&outcome.to_string()),
        "{outcome}"
    );
    // Under the bound, the same program runs as ever.
    let out = s.output(&["exec", "--memory", "1G", "--yes", "--", "python3", "hog.py"]);
    assert!(
        text(&out.stdout).contains("survived"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn a_bad_memory_bound_is_refused_with_what_to_write() {
    let s = Scratch::new();
    for bad in ["lots", "1K", "-3G"] {
        let out = s.output(&["exec", &format!("--memory={bad}"), "--", "true"]);
        assert_eq!(out.status.code(), Some(2), "{bad}");
        let err = text(&out.stderr);
        assert!(err.contains("4G") || err.contains("4M"), "{bad}: {err}");
    }
    // In a policy file, by file and line.
    let dir = s.dir.path().join("policy.toml");
    std::fs::write(&dir, "[limits]\nmemory = \"plenty\"\n").unwrap();
    let out = s.output(&["exec", "--config", dir.to_str().unwrap(), "--", "true"]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains("policy.toml") && err.contains("plenty"),
        "{err}"
    );
}

/// The nice value of a process, from its `stat`.
fn nice_of(stat: &str) -> i32 {
    stat.rsplit(')')
        .next()
        .and_then(|rest| rest.split_whitespace().nth(16))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no nice value in {stat:?}"))
}

#[test]
fn calls_run_niced_below_corral_and_cannot_raise_it() {
    let own = nice_of(&std::fs::read_to_string("/proc/self/stat").unwrap());
    let check = |out: std::process::Output, who: &str| {
        let stdout = text(&out.stdout);
        let mut lines = stdout.lines();
        let stat = lines
            .next()
            .unwrap_or_else(|| panic!("{who}: {}", text(&out.stderr)));
        assert_eq!(nice_of(stat), (own + 10).min(19), "{who}: {stat}");
        assert_eq!(lines.next(), Some("held"), "{who}: {stdout}");
    };
    // Raising it back takes `setpriority` below the current value, which RLIMIT_NICE 0
    // refuses to anyone without CAP_SYS_NICE: a sandboxed root, or an ordinary user.
    let script = "cat /proc/self/stat; python3 -c 'import os; os.setpriority(os.PRIO_PROCESS, 0, 0)' 2>/dev/null && echo raised || echo held";
    let s = Scratch::new();
    check(
        s.output(&[
            "exec",
            "--sandbox",
            "workspace-write",
            "--yes",
            "--",
            "sh",
            "-c",
            script,
        ]),
        "root's box",
    );
    if let Some(u) = UserScratch::new() {
        check(
            u.corral(&["exec", "--yes", "--", "sh", "-c", script])
                .output()
                .unwrap(),
            "an ordinary user",
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_model_is_told_its_call_reached_the_memory_bound() {
    let s = Scratch::new();
    let report = text(&s.output(&["sandbox", "report"]).stdout);
    if !bounded(&report) {
        common::skip("no memory bound for calls here");
        return;
    }
    let session =
        mcp_common::Session::start_with(Some(mcp_common::PERMISSIVE), None, &["--memory", "64M"])
            .await;
    std::fs::write(session.workspace().join("hog.py"), HOG).unwrap();
    let result = session
        .call("exec", json!({"argv": ["python3", "hog.py"]}))
        .await;
    let shown = mcp_common::text(&result);
    assert!(!shown.contains("survived"), "{shown}");
    if per_process(&shown) {
        eprintln!("bounded per process here (no memory group for the call)");
    } else {
        assert!(
            shown.contains("reached its memory limit (64 MiB)"),
            "{shown}"
        );
    }
    // The server goes on: the next call runs.
    let next = session
        .call("exec", json!({"argv": ["echo", "next"]}))
        .await;
    assert!(mcp_common::text(&next).contains("next"));
    session.client.cancel().await.unwrap();
}
